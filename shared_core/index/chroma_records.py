"""How :class:`~shared_core.index.chroma.ChromaIndex` lays a version record out in Chroma: which
collection it lives in, its metadata and back, the collections' names, the ``where`` clauses.

Pure: no collection is called here, so all of it is testable without Chroma. Each namespace has
a ``live`` collection (records believed and open-ended) and an ``all`` collection (every
record), named after :func:`namespace_key`. Record metadata holds the row id, fact id,
namespace and the four instants as ints, an open end as OPEN (never a missing key), and the
record's filterable attributes under ``m.<name>`` (numbers as floats, so that ``1 == 1.0`` as
in :mod:`shared_core.filters`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.filters import AllOf, AnyOf, Condition, Filter, Op, Scalar
from shared_core.ledger.results import VersionRecord

ATTRIBUTE = "m."
"""The prefix of attribute keys in Chroma metadata (system keys never start with it)."""


def is_live(record: VersionRecord) -> bool:
    """Believed and open-ended: the records a current search can see (bar future-dated ones)."""
    return record.believed and record.valid_to == OPEN


def namespace_key(namespace: str) -> str:
    """A short, name-safe stand-in for a namespace in collection names."""
    return hashlib.sha256(namespace.encode()).hexdigest()[:16]


def to_metadata(record: VersionRecord) -> dict[str, Any]:
    """The metadata a record is stored with (see the module docstring)."""
    meta: dict[str, Any] = {
        "row_id": record.row_id,
        "fact_id": record.fact_id,
        "namespace": record.namespace,
        "valid_from": record.valid_from,
        "valid_to": record.valid_to,
        "recorded_at": record.recorded_at,
        "retired_at": record.retired_at,
    }
    meta.update((ATTRIBUTE + name, _stored(v)) for name, v in record.attributes.items())
    return meta


def from_metadata(meta: Mapping[str, Any]) -> VersionRecord:
    """The record a result's metadata describes (without its text)."""
    return VersionRecord(
        int(meta["row_id"]),
        str(meta["fact_id"]),
        str(meta["namespace"]),
        "",
        int(meta["valid_from"]),
        int(meta["valid_to"]),
        int(meta["recorded_at"]),
        int(meta["retired_at"]),
        {k[len(ATTRIBUTE) :]: v for k, v in meta.items() if k.startswith(ATTRIBUTE)},
    )


def _stored(value: Scalar) -> Scalar:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def filter_where(condition: Filter) -> dict[str, Any]:
    """Chroma's ``where`` for a metadata filter (same semantics, see shared_core.filters)."""
    if isinstance(condition, AllOf | AnyOf):
        parts = [filter_where(f) for f in condition.filters]
        if len(parts) == 1:
            return parts[0]
        return {"$and" if isinstance(condition, AllOf) else "$or": parts}
    assert isinstance(condition, Condition)
    value: Any = condition.value
    value = [_stored(v) for v in value] if isinstance(value, tuple) else _stored(value)
    return {ATTRIBUTE + condition.field: {_CHROMA_OPS[condition.op]: value}}


_CHROMA_OPS = {
    Op.EQ: "$eq",
    Op.NE: "$ne",
    Op.GT: "$gt",
    Op.GTE: "$gte",
    Op.LT: "$lt",
    Op.LTE: "$lte",
    Op.IN: "$in",
    Op.NIN: "$nin",
}


def visibility_where(valid_at: Instant | None, known_at: Instant | None, *, live: bool) -> Any:
    """Chroma's ``where`` for the records visible at (valid_at, known_at), among the ``live``
    rows or among every row. Live rows end at OPEN, above every instant a search takes, so
    their ends need no terms."""
    terms: list[dict[str, Any]] = []
    if known_at is not None:
        terms.append({"recorded_at": {"$lte": known_at}})
    if not live:
        terms.append({"retired_at": {"$gt": known_at} if known_at is not None else {"$eq": OPEN}})
    if valid_at is not None:
        terms.append({"valid_from": {"$lte": valid_at}})
        if not live:
            terms.append({"valid_to": {"$gt": valid_at}})
    return {"$and": terms} if len(terms) > 1 else (terms[0] if terms else None)


def both(first: Any, second: Any) -> Any:
    """Two ``where`` clauses (either may be None) that must both hold."""
    if first is None or second is None:
        return first if second is None else second
    return {"$and": [first, second]}
