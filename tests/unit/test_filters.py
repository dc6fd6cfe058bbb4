"""Metadata filters: validation and the one semantics every index follows."""

from __future__ import annotations

import pytest

from shared_core.errors import InvalidInputError
from shared_core.filters import (
    AllOf,
    Op,
    all_of,
    any_of,
    as_filter,
    attributes_of,
    matches,
    where,
)

FACT = {"colour": "red", "n": 2, "ratio": 0.5, "done": True}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (where("colour", "==", "red"), True),
        (where("colour", "!=", "red"), False),
        (where("missing", "!=", "red"), True),  # != matches facts that lack the field
        (where("missing", "==", "red"), False),
        (where("n", "==", 2.0), True),  # ints and floats compare as numbers
        (where("done", "==", 1), False),  # booleans equal only booleans
        (where("done", "==", True), True),
        (where("n", ">", 1), True),
        (where("n", ">=", 2), True),
        (where("n", "<", 2), False),
        (where("ratio", "<=", 0.5), True),
        (where("colour", ">", 1), False),  # order comparisons never match strings
        (where("done", ">", 0), False),  # nor booleans
        (where("colour", "in", ["blue", "red"]), True),
        (where("colour", "nin", ["blue", "red"]), False),
        (where("missing", "nin", ["x"]), True),
        (where("missing", "in", ["x"]), False),
        (all_of(where("n", ">", 1), where("colour", "==", "blue")), False),
        (any_of(where("n", ">", 1), where("colour", "==", "blue")), True),
    ],
)
def test_semantics(condition: object, expected: bool) -> None:
    assert matches(condition, FACT) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", "==", 1), "field"),
        (("a", "~", 1), "not supported"),
        (("a", ">", "x"), "numbers only"),
        (("a", "in", "xy"), "needs a list"),
        (("a", "in", []), "non-empty list of one type"),
        (("a", "in", ["x", 1]), "non-empty list of one type"),
        (("a", "==", float("nan")), "finite"),
        (("a", "==", [1]), "not a str"),
    ],
)
def test_bad_conditions_name_the_problem(args: tuple[str, str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        where(*args)


def test_combinators_need_filters() -> None:
    with pytest.raises(InvalidInputError, match="at least one"):
        all_of()
    with pytest.raises(InvalidInputError, match="not a filter"):
        any_of({"a": 1})  # type: ignore[arg-type]


def test_a_dict_is_an_and_of_equalities() -> None:
    condition = as_filter({"colour": "red", "n": 2})
    assert isinstance(condition, AllOf)
    assert [c.op for c in condition.filters] == [Op.EQ, Op.EQ]  # type: ignore[union-attr]
    assert matches(condition, FACT)
    assert as_filter({}) is None
    with pytest.raises(InvalidInputError, match="where"):
        as_filter(["colour"])  # type: ignore[arg-type]


def test_attributes_are_key_fields_and_scalar_metadata() -> None:
    found = attributes_of("Maria", "lives_in", "Porto", {"tags": ["a"], "n": 1, "subject": "X"})
    assert found == {"subject": "X", "relation": "lives_in", "object": "Porto", "n": 1}
    assert attributes_of(None, None, None, {"bad": float("inf")}) == {}
