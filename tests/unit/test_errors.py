"""The error tree: one base, the closest builtin, documented in errors.py."""

from __future__ import annotations

import inspect

import pytest

from shared_core import errors
from shared_core.errors import FactNotFoundError, InvalidInputError, TemporalRagError

ALL_ERRORS = [
    value
    for value in vars(errors).values()
    if inspect.isclass(value) and issubclass(value, Exception)
]


@pytest.mark.parametrize("error", ALL_ERRORS, ids=lambda e: e.__name__)
def test_every_error_is_ours_documented_and_a_builtin(error: type[Exception]) -> None:
    assert issubclass(error, TemporalRagError)
    assert error.__name__ in (errors.__doc__ or ""), "add it to the tree in errors.py"
    assert error.__name__ in errors.__all__
    assert error.__doc__
    builtins = [base for base in error.__mro__ if base.__module__ == "builtins"]
    assert builtins[0] is not Exception or error is TemporalRagError


def test_invalid_input_carries_field_problem_and_fix() -> None:
    error = InvalidInputError("valid_from", "naive datetime", "pass an aware datetime")
    assert str(error) == "valid_from: naive datetime; fix: pass an aware datetime"
    assert error.at("facts[2]").field == "facts[2].valid_from"


def test_lookup_errors_read_cleanly() -> None:
    assert str(FactNotFoundError("abc")) == "no fact with id 'abc' in this ledger"
    assert isinstance(FactNotFoundError("abc"), LookupError)
