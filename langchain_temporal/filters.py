"""LangChain's ``filter=`` dicts (the Chroma / PGVector style generic callers pass) as the core's
metadata filters (``shared_core.filters``).

``{"field": value}`` is equality, several fields are AND; ``{"field": {"$op": value}}`` takes
``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$in`` and ``$nin`` (several operators
are AND); ``{"$and": [...]}`` and ``{"$or": [...]}`` combine filter dicts. The core evaluates
them with its documented semantics (``$ne`` and ``$nin`` also match facts lacking the field;
order comparisons take numbers only). Any other ``$`` operator is an
:class:`~shared_core.errors.InvalidInputError` naming it and listing what is supported; a
:mod:`shared_core.filters` filter passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared_core.errors import InvalidInputError
from shared_core.filters import AllOf, AnyOf, Condition, Filter, Op, all_of, any_of, where

OPERATORS = {
    "$eq": Op.EQ,
    "$ne": Op.NE,
    "$gt": Op.GT,
    "$gte": Op.GTE,
    "$lt": Op.LT,
    "$lte": Op.LTE,
    "$in": Op.IN,
    "$nin": Op.NIN,
}
COMBINERS = ("$and", "$or")
_SUPPORTED = ", ".join((*OPERATORS, *COMBINERS))


def translate_filter(value: object, field: str = "filter") -> Filter | None:
    """The core filter for a LangChain ``filter`` (``None`` or ``{}``: filters nothing)."""
    if value is None or isinstance(value, Condition | AllOf | AnyOf):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            field,
            f"is a {type(value).__name__}",
            'pass a dict such as {"source": "chat"} or {"year": {"$gte": 2020}}',
        )
    parts = [_part(name, item, field) for name, item in value.items()]
    return all_of(*parts) if parts else None  # as shared_core.filters.as_filter builds a dict


def _part(name: object, value: Any, field: str) -> Filter:
    if not isinstance(name, str):
        raise InvalidInputError(field, f"key {name!r} is not a string", "name metadata fields")
    if name in COMBINERS:
        return _combined(name, value, f"{field}[{name!r}]")
    if name.startswith("$"):
        raise InvalidInputError(
            f"{field}[{name!r}]", "is not a supported operator here", f"use {_SUPPORTED}"
        )
    if not isinstance(value, Mapping):
        return where(name, Op.EQ, value)
    conditions = [_condition(name, op, operand, field) for op, operand in value.items()]
    if not conditions:
        raise InvalidInputError(
            f"{field}[{name!r}]", "is an empty dict", 'pass a value or {"$op": value}'
        )
    return conditions[0] if len(conditions) == 1 else all_of(*conditions)


def _condition(name: str, op: object, operand: Any, field: str) -> Condition:
    if op not in OPERATORS:
        raise InvalidInputError(
            f"{field}[{name!r}]",
            f"operator {op!r} is not supported",
            f"use {', '.join(OPERATORS)}",
        )
    return where(name, OPERATORS[str(op)], operand)


def _combined(name: str, value: object, field: str) -> Filter:
    if isinstance(value, str | Mapping) or not isinstance(value, Sequence) or not value:
        raise InvalidInputError(field, "needs a non-empty list of filter dicts", "pass [{...}]")
    parts = []
    for index, item in enumerate(value):
        part = translate_filter(item, f"{field}[{index}]")
        if part is None:
            raise InvalidInputError(f"{field}[{index}]", "is empty", "pass a filter dict")
        parts.append(part)
    return all_of(*parts) if name == "$and" else any_of(*parts)
