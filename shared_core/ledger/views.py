"""How the ledger shows its rows: as index records, as known at a time, as input to rewrite."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from shared_core.clock import OPEN, Instant, from_instant
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, metadata_from_json
from shared_core.filters import attributes_of
from shared_core.ledger.backend import FactRow
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.ledger.results import VersionRecord


def version_record(row: FactRow, attributes: bool = True) -> VersionRecord:
    version, head = row
    if not attributes:
        return VersionRecord(
            version.row_id,
            version.fact_id,
            version.namespace,
            head.text,
            version.valid_from,
            version.valid_to,
            version.recorded_at,
            version.retired_at,
        )
    return VersionRecord(
        row_id=version.row_id,
        fact_id=version.fact_id,
        namespace=version.namespace,
        text=head.text,
        valid_from=version.valid_from,
        valid_to=version.valid_to,
        recorded_at=version.recorded_at,
        retired_at=version.retired_at,
        attributes=MappingProxyType(
            attributes_of(
                head.subject,
                head.relation,
                head.object,
                stored_metadata(head.metadata),
                fact_id=version.fact_id,
            )
        ),
    )


def stored_metadata(text: str) -> Mapping[str, Any]:
    return metadata_from_json(text) if text not in ("", "{}") else {}


def unretired(version: VersionRow) -> VersionRow:
    return replace(version, retired_at=OPEN, retire_reason=None)


def as_known(row: FactRow, known_at: Instant) -> FactRow:
    """A record as it stood at ``known_at``: a later retirement was not known yet."""
    version, head = row
    retired_later = known_at < version.retired_at < OPEN  # an open row has nothing to undo
    return (unretired(version), head) if retired_later else row


def statement_fields(row: StatementRow) -> dict[str, Any]:
    return {
        "text": row.text,
        "subject": row.subject,
        "relation": row.relation,
        "object": row.object,
        "valid_from": from_instant(row.valid_from),
        "valid_to": None if row.valid_to is None else from_instant(row.valid_to),
        "namespace": row.namespace,
        "metadata": metadata_from_json(row.metadata),
    }


def check_input(fact: object, name: str) -> None:
    if not isinstance(fact, Fact):
        raise InvalidInputError(
            name, f"expected a Fact, got {type(fact).__name__}", "build one with Fact(text=...)"
        )
    for owned in ("retired_at", "end_reason", "retire_reason"):
        if getattr(fact, owned) is not None:
            raise InvalidInputError(
                f"{name}.{owned}",
                "is set by the ledger",
                "leave it None (use retract, correct or retire to end facts)",
            )
