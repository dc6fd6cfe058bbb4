"""Facts and statements by metadata filter, read from the ledger (for deletes and audits)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared_core.clock import OPEN, to_instant
from shared_core.facts import Fact, ReasonKind, metadata_from_json
from shared_core.filters import Filter, Scalar, attributes_of, matches
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.records import StatementRow


def select_facts(
    ledger: LedgerStore,
    condition: Filter | None,
    *,
    namespace: str,
    valid_at: datetime | None,
    known_at: datetime | None,
    include_history: bool,
) -> list[Fact]:
    """Facts of ``namespace`` matching ``condition``, valid at ``valid_at`` as known at
    ``known_at`` or, with ``include_history``, at any valid time. Linear in the facts."""
    if not include_history:
        facts = ledger.as_of(valid_at=valid_at, known_at=known_at, namespace=namespace)
        return [f for f in facts if matches(condition, fact_attributes(f))]
    known = OPEN - 1 if known_at is None else to_instant(known_at, "known_at")
    _, versions = ledger.export()
    rows = [
        v.row_id
        for v in versions
        if v.namespace == namespace and v.recorded_at <= known < v.retired_at
    ]
    found = ledger.versions(row_ids=rows, known_at=known_at)
    return [v.fact for v in found if matches(condition, v.record.attributes)]


def matching_statement_ids(
    ledger: LedgerStore, condition: Filter | None, *, namespace: str
) -> list[str]:
    """Ids of the believed statements of ``namespace`` whose attributes match ``condition``."""
    statements, _ = ledger.export()
    return [
        row.fact_id
        for row in statements
        if row.believed
        and row.namespace == namespace
        and matches(condition, statement_attributes(row))
    ]


@dataclass(frozen=True, slots=True)
class Withdrawals:
    """The statements a filter matches, in groups (see :func:`withdrawals`)."""

    found: frozenset[Scalar]
    """Every group holding a matching statement, believed or retired."""
    fact_ids: frozenset[str]
    """The fact ids of every matching statement."""
    current: frozenset[Scalar]
    """The groups holding a believed statement: nothing of theirs is undone."""
    restorable: tuple[str, ...]
    """Fact ids of the statements the latest withdrawal of each other group retired, in the
    order they were written."""


def withdrawals(
    ledger: LedgerStore, condition: Filter | None, *, namespace: str, per: str | None
) -> Withdrawals:
    """The statements of ``namespace`` matching ``condition``, grouped by their attribute
    ``per`` (a document id, say; without it, or with ``per=None``, each fact id is a group):
    a group without a believed statement gives the statements its latest withdrawal
    (``retire_where``, a ``retire``) retired, those retired by a correction never."""
    statements, _ = ledger.export()
    groups: dict[Scalar, list[StatementRow]] = {}
    for row in statements:
        if row.namespace != namespace:
            continue
        attributes = statement_attributes(row)
        if matches(condition, attributes):
            group = attributes.get(per, row.fact_id) if per is not None else row.fact_id
            groups.setdefault(group, []).append(row)
    believed = {row.fact_id for rows in groups.values() for row in rows if row.believed}
    current = {group for group, rows in groups.items() if any(r.fact_id in believed for r in rows)}
    restorable: list[StatementRow] = []
    for group, rows in groups.items():
        withdrawn = [r for r in rows if _withdrawn(r)]
        if group in current or not withdrawn:
            continue
        last = max(row.retired_at for row in withdrawn)
        restorable += [row for row in withdrawn if row.retired_at == last]
    ordered = sorted(restorable, key=lambda row: row.seq)
    return Withdrawals(
        found=frozenset(groups),
        fact_ids=frozenset(row.fact_id for rows in groups.values() for row in rows),
        current=frozenset(current),
        restorable=tuple(dict.fromkeys(row.fact_id for row in ordered)),
    )


def _withdrawn(row: StatementRow) -> bool:
    reason = row.retire_reason
    return not row.believed and reason is not None and reason.kind is ReasonKind.WITHDRAWN


def statement_attributes(row: StatementRow) -> dict[str, Any]:
    """What a filter tests on a stored statement."""
    metadata = metadata_from_json(row.metadata) if row.metadata not in ("", "{}") else {}
    return attributes_of(row.subject, row.relation, row.object, metadata, fact_id=row.fact_id)


def fact_attributes(fact: Fact) -> dict[str, Any]:
    """What a filter tests on a fact."""
    return attributes_of(fact.subject, fact.relation, fact.object, fact.metadata, fact_id=fact.id)
