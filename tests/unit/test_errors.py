"""The error tree: one base, the closest builtin, documented in errors.py."""

from __future__ import annotations

import inspect
import re

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


TREE_LINE = re.compile(r"^(?P<indent>[ │]*)(?:├── |└── )(?P<name>\w+)(?:\((?P<builtin>\w+)\))?")


def documented_tree() -> dict[str, tuple[str, str | None]]:
    """Each error of the tree in errors.py's docstring: its parent in the tree, its builtin."""
    lines = (errors.__doc__ or "").splitlines()
    root = next(line for line in lines if line.strip().startswith("TemporalRagError("))
    start = len(root) - len(root.lstrip())
    parents = ["TemporalRagError"]
    tree: dict[str, tuple[str, str | None]] = {}
    for line in lines[lines.index(root) + 1 :]:
        match = TREE_LINE.match(line[start:])
        if match is None:
            break
        depth = len(match["indent"]) // 4
        del parents[depth + 1 :]
        tree[match["name"]] = (parents[depth], match["builtin"])
        parents.append(match["name"])
    return tree


def test_the_documented_tree_is_the_class_tree() -> None:
    tree = documented_tree()
    assert sorted(tree) == sorted(e.__name__ for e in ALL_ERRORS if e is not TemporalRagError)
    for name, (parent, builtin) in tree.items():
        bases = [base.__name__ for base in getattr(errors, name).__bases__]
        assert bases[0] == parent, name
        assert bases[1:] == ([builtin] if builtin else []), name


def test_invalid_input_carries_field_problem_and_fix() -> None:
    error = InvalidInputError("valid_from", "naive datetime", "pass an aware datetime")
    assert str(error) == "valid_from: naive datetime; fix: pass an aware datetime"
    assert error.at("facts[2]").field == "facts[2].valid_from"


def test_lookup_errors_read_cleanly() -> None:
    assert str(FactNotFoundError("abc")) == "no fact with id 'abc' in this ledger"
    assert isinstance(FactNotFoundError("abc"), LookupError)
