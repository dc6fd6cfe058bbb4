"""Facts and statements by metadata filter, read from the ledger (for deletes and audits)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shared_core.clock import OPEN, to_instant
from shared_core.facts import Fact, metadata_from_json
from shared_core.filters import Filter, attributes_of, matches
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


def statement_attributes(row: StatementRow) -> dict[str, Any]:
    """What a filter tests on a stored statement."""
    metadata = metadata_from_json(row.metadata) if row.metadata not in ("", "{}") else {}
    return attributes_of(row.subject, row.relation, row.object, metadata, fact_id=row.fact_id)


def fact_attributes(fact: Fact) -> dict[str, Any]:
    """What a filter tests on a fact."""
    return attributes_of(fact.subject, fact.relation, fact.object, fact.metadata, fact_id=fact.id)
