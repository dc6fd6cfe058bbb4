"""Metadata filters: a small typed expression that every index evaluates the same way.

A filter tests a fact's *attributes*: its scalar metadata fields (str, int, float, bool) plus
``subject``, ``relation`` and ``object`` of keyed facts (metadata fields of those names win)
and ``fact_id`` (its id; nothing overrides it).
Nested metadata (lists, mappings) is not filterable. Semantics, identical in every index:

- ``==``, ``in``, ``>``, ``>=``, ``<``, ``<=`` need the field to be present;
  ``!=`` and ``nin`` also match facts that lack the field.
- Booleans equal only booleans; ints and floats compare as numbers (``1 == 1.0``).
- Order comparisons take numbers only (a string or bool field never matches them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared_core.errors import InvalidInputError

Scalar = str | int | float | bool


class Op(StrEnum):
    """A comparison of one field with a value (or, for ``in``/``nin``, a list of values)."""

    EQ = "=="
    NE = "!="
    GT = ">"
    GTE = ">="
    LT = "<"
    LTE = "<="
    IN = "in"
    NIN = "nin"


ORDERED = frozenset({Op.GT, Op.GTE, Op.LT, Op.LTE})
LISTED = frozenset({Op.IN, Op.NIN})


@dataclass(frozen=True, slots=True)
class Condition:
    """``field op value``; build with :func:`where` (it validates and normalises)."""

    field: str
    op: Op
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class AllOf:
    """Every filter matches (AND)."""

    filters: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """At least one filter matches (OR)."""

    filters: tuple[Filter, ...]


Filter = Condition | AllOf | AnyOf


def where(field: str, op: Op | str, value: Any) -> Condition:
    """A validated condition, e.g. ``where("year", ">=", 2020)`` or ``where("tag", "in", [..])``."""
    if not isinstance(field, str) or not field:
        raise InvalidInputError("filter.field", f"{field!r} is not a field name", "name a field")
    try:
        operator = Op(op)
    except ValueError as exc:
        known = ", ".join(o.value for o in Op)
        raise InvalidInputError("filter.op", f"{op!r} is not supported", f"use {known}") from exc
    if operator in LISTED:
        if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
            raise InvalidInputError(
                f"filter[{field!r}]", f"{operator.value} needs a list", "pass a list of values"
            )
        values = tuple(_scalar(field, v) for v in value)
        if not values or len({_kind(v) for v in values}) > 1:
            raise InvalidInputError(
                f"filter[{field!r}]",
                f"{operator.value} needs a non-empty list of one type",
                "pass e.g. ['a', 'b'] or [1, 2]",
            )
        return Condition(field, operator, values)
    scalar = _scalar(field, value)
    if operator in ORDERED and _kind(scalar) != "number":
        raise InvalidInputError(
            f"filter[{field!r}]", f"{operator.value} compares numbers only", "pass an int/float"
        )
    return Condition(field, operator, scalar)


def all_of(*filters: Filter) -> AllOf:
    """AND of one or more filters."""
    return AllOf(_nonempty(filters, "all_of"))


def any_of(*filters: Filter) -> AnyOf:
    """OR of one or more filters."""
    return AnyOf(_nonempty(filters, "any_of"))


def as_filter(value: Filter | Mapping[str, Any] | None) -> Filter | None:
    """A filter from a filter, or from a mapping of field -> value (all must be equal)."""
    if value is None or isinstance(value, Condition | AllOf | AnyOf):
        return value
    if isinstance(value, Mapping):
        if not value:
            return None
        return all_of(*(where(name, Op.EQ, v) for name, v in value.items()))
    raise InvalidInputError(
        "where", f"{type(value).__name__} is not a filter", "pass where(...) or a dict"
    )


def matches(condition: Filter | None, attributes: Mapping[str, Scalar]) -> bool:
    """Whether ``attributes`` satisfy the filter (``None`` matches everything)."""
    if condition is None:
        return True
    if isinstance(condition, AllOf):
        return all(matches(f, attributes) for f in condition.filters)
    if isinstance(condition, AnyOf):
        return any(matches(f, attributes) for f in condition.filters)
    present = condition.field in attributes
    value = attributes.get(condition.field)
    op = condition.op
    if op is Op.NE:
        return not present or not _equal(value, condition.value)
    if op is Op.NIN:
        return not present or not any(_equal(value, v) for v in _values(condition))
    if not present:
        return False
    if op is Op.EQ:
        return _equal(value, condition.value)
    if op is Op.IN:
        return any(_equal(value, v) for v in _values(condition))
    if _kind(value) != "number":
        return False
    return _ordered(op, float(value), float(condition.value))  # type: ignore[arg-type]


def attributes_of(
    subject: str | None,
    relation: str | None,
    obj: object,
    metadata: Mapping[str, Any],
    *,
    fact_id: str | None = None,
) -> dict[str, Scalar]:
    """The filterable attributes of a fact: key fields, then scalar metadata (which wins over
    them), then ``fact_id`` (the fact's own id always wins)."""
    found: dict[str, Scalar] = {}
    for name, value in (("subject", subject), ("relation", relation), ("object", obj)):
        if _is_scalar(value):
            found[name] = value  # type: ignore[assignment]
    found.update((k, v) for k, v in metadata.items() if isinstance(k, str) and _is_scalar(v))
    if fact_id is not None:
        found["fact_id"] = fact_id
    return found


def _is_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)


def _scalar(field: str, value: object) -> Scalar:
    if not _is_scalar(value):
        raise InvalidInputError(
            f"filter[{field!r}]",
            f"{value!r} is not a str, int, finite float or bool",
            "filter on scalar values",
        )
    return value  # type: ignore[return-value]


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "str" if isinstance(value, str) else "other"


def _equal(a: object, b: object) -> bool:
    return _kind(a) == _kind(b) and a == b


def _values(condition: Condition) -> tuple[Scalar, ...]:
    assert isinstance(condition.value, tuple)
    return condition.value


def _ordered(op: Op, a: float, b: float) -> bool:
    if op is Op.GT:
        return a > b
    if op is Op.GTE:
        return a >= b
    if op is Op.LT:
        return a < b
    return a <= b


def _nonempty(filters: tuple[Filter, ...], name: str) -> tuple[Filter, ...]:
    if not filters:
        raise InvalidInputError(name, "has no filters", "pass at least one filter")
    for item in filters:
        if not isinstance(item, Condition | AllOf | AnyOf):
            raise InvalidInputError(name, f"{item!r} is not a filter", "use where(...)")
    return filters
