"""LlamaIndex ``MetadataFilters`` as the core's metadata filters (``shared_core.filters``).

Operators EQ, NE, GT, GTE, LT, LTE, IN and NIN, conditions AND and OR, and nested
``MetadataFilters`` translate one to one; the core evaluates them with its documented semantics
(``!=`` and ``nin`` also match facts lacking the field; order comparisons take numbers only;
booleans equal only booleans). Any other operator or condition is an
:class:`~shared_core.errors.InvalidInputError` that names it and lists what is supported.
"""

from __future__ import annotations

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from shared_core.errors import InvalidInputError
from shared_core.filters import Filter, Op, all_of, any_of, where

OPERATORS = {
    FilterOperator.EQ: Op.EQ,
    FilterOperator.NE: Op.NE,
    FilterOperator.GT: Op.GT,
    FilterOperator.GTE: Op.GTE,
    FilterOperator.LT: Op.LT,
    FilterOperator.LTE: Op.LTE,
    FilterOperator.IN: Op.IN,
    FilterOperator.NIN: Op.NIN,
}
_SUPPORTED_OPERATORS = ", ".join(f"{o.name} ({o.value})" for o in OPERATORS)


def translate_filters(filters: MetadataFilters | None, field: str = "filters") -> Filter | None:
    """The core filter for ``filters``; ``None`` (or no filters at all) filters nothing."""
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        raise InvalidInputError(
            field, f"is a {type(filters).__name__}", "pass llama_index MetadataFilters"
        )
    if not filters.filters:
        return None
    return _group(filters, field)


def _group(filters: MetadataFilters, field: str) -> Filter:
    if not filters.filters:
        raise InvalidInputError(field, "is an empty nested group", "drop it or give it filters")
    parts = [_part(item, f"{field}.filters[{i}]") for i, item in enumerate(filters.filters)]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return all_of(*parts)
    if condition == FilterCondition.OR:
        return any_of(*parts)
    raise InvalidInputError(
        f"{field}.condition",
        f"condition {condition.name} ({condition.value!r}) is not supported",
        "combine filters with AND or OR (negate with NE / NIN instead of NOT)",
    )


def _part(item: MetadataFilter | MetadataFilters, field: str) -> Filter:
    if isinstance(item, MetadataFilters):
        return _group(item, field)
    operator = OPERATORS.get(item.operator)
    if operator is None:
        raise InvalidInputError(
            f"{field}.operator",
            f"operator {item.operator.name} ({item.operator.value!r}) is not supported",
            f"use one of {_SUPPORTED_OPERATORS}",
        )
    try:
        return where(item.key, operator, item.value)
    except InvalidInputError as exc:
        raise exc.at(field) from exc
