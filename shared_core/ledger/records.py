"""The rows every ledger store keeps, and their conversion to what callers and indexes see.

Two append-mostly tables make the ledger: *statements* (the write log: what was said, when it was
recorded, and, if it turned out wrong, when it was retired) and *versions* (the timeline derived
from the statements, bi-temporally: each row's valid interval and record interval). A row's only
mutation is setting ``retired_at`` once; nothing is ever deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from shared_core.clock import OPEN, Instant, from_instant
from shared_core.facts import Cardinality, Fact, FactKey, ObjectValue, Reason, metadata_from_json
from shared_core.filters import attributes_of
from shared_core.ledger.results import StoredStatement, VersionRecord
from shared_core.supersession import Statement, Version

KIND_ASSERTION = "assertion"
KIND_RETRACTION = "retraction"


@dataclass(frozen=True, slots=True)
class StatementRow:
    """One record of the write log."""

    seq: int
    fact_id: str
    namespace: str
    key_id: int | None  # None for prose
    stream: str  # "" for a ONE key, the normalised object for MANY, the fact id for prose
    subject: str | None
    relation: str | None
    object: ObjectValue | None  # display form; None for prose and for "retract everything"
    value: str | None  # normalised object; None for retractions and prose
    kind: str  # KIND_ASSERTION or KIND_RETRACTION
    text: str
    text_key: str
    valid_from: Instant
    valid_to: Instant | None
    recorded_at: Instant
    retired_at: Instant  # OPEN while believed
    retire_reason: Reason | None
    metadata: str  # JSON
    end_reason: Reason | None = None  # a retraction's own reason for what it ends (see Statement)

    @property
    def believed(self) -> bool:
        """Not retired in record time."""
        return self.retired_at == OPEN

    def statement(self) -> Statement:
        """The light form the supersession rule works on."""
        return light_statement(
            self.seq,
            self.fact_id,
            self.key_id,
            self.value,
            self.kind,
            self.valid_from,
            self.valid_to,
            self.text_key,
            self.end_reason,
        )

    def public(self) -> StoredStatement:
        """The caller-facing view (aware datetimes)."""
        return StoredStatement(
            fact_id=self.fact_id,
            kind=self.kind,
            namespace=self.namespace,
            subject=self.subject,
            relation=self.relation,
            object=self.object,
            text=self.text,
            valid_from=from_instant(self.valid_from),
            valid_to=_optional_datetime(self.valid_to),
            recorded_at=from_instant(self.recorded_at),
            retired_at=None if self.believed else from_instant(self.retired_at),
            retire_reason=self.retire_reason,
            end_reason=self.end_reason,
        )

    def fact_fields(self) -> dict[str, Any]:
        """The arguments of a :class:`Fact` that says this statement again."""
        return {
            "text": self.text,
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "valid_from": from_instant(self.valid_from),
            "valid_to": None if self.valid_to is None else from_instant(self.valid_to),
            "namespace": self.namespace,
            "metadata": metadata_from_json(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class VersionRow:
    """One record of the derived timeline."""

    row_id: int
    fact_id: str
    head_seq: int
    namespace: str
    key_id: int | None
    stream: str
    value: str
    valid_from: Instant
    valid_to: Instant
    end: Reason | None
    recorded_at: Instant
    retired_at: Instant
    retire_reason: Reason | None

    def version(self) -> Version:
        """The light form the supersession rule works on."""
        return Version(
            self.fact_id,
            self.head_seq,
            self.value,
            self.valid_from,
            self.valid_to,
            self.end,
            self.row_id,
            self.recorded_at,
        )

    def visible(self, valid_at: Instant, known_at: Instant) -> bool:
        """Believed at ``known_at`` and valid at ``valid_at``."""
        return (
            self.recorded_at <= known_at < self.retired_at
            and self.valid_from <= valid_at < self.valid_to
        )

    def as_known(self, known_at: Instant) -> VersionRow:
        """This record as it stood at ``known_at``: a later retirement was not known yet."""
        retired_later = known_at < self.retired_at < OPEN  # an open row has nothing to undo
        return replace(self, retired_at=OPEN, retire_reason=None) if retired_later else self


def light_statement(
    seq: int,
    fact_id: str,
    key_id: int | None,
    value: str | None,
    kind: str,
    valid_from: Instant,
    valid_to: Instant | None,
    text_key: str,
    end_reason: Reason | None = None,
) -> Statement:
    """The rule's view of a statement: retractions carry no value, prose its own stream value."""
    if kind == KIND_RETRACTION:
        value = None
    elif key_id is None:
        value = f"prose:{fact_id}"
    return Statement(seq, fact_id, value, valid_from, valid_to, text_key, end_reason)


def _optional_datetime(value: Instant | None) -> datetime | None:
    return None if value is None or value == OPEN else from_instant(value)


def to_fact(row: VersionRow, head: StatementRow) -> Fact:
    """A version record and the statement that names it, as a public :class:`Fact`."""
    return version_fact(
        row.version(), head, retired_at=row.retired_at, retire_reason=row.retire_reason
    )


def version_fact(
    version: Version,
    head: StatementRow,
    *,
    retired_at: Instant = OPEN,
    retire_reason: Reason | None = None,
) -> Fact:
    """A stored version (``recorded_at`` set) and the statement that names it, as a Fact."""
    assert version.recorded_at is not None, "only stored versions become facts"
    return Fact.trusted(
        id=version.fact_id,
        text=head.text,
        subject=head.subject,
        relation=head.relation,
        object=head.object,
        valid_from=from_instant(version.valid_from),
        valid_to=_optional_datetime(version.valid_to),
        namespace=head.namespace,
        metadata=metadata_from_json(head.metadata),
        recorded_at=from_instant(version.recorded_at),
        retired_at=_optional_datetime(retired_at),
        end_reason=version.end,
        retire_reason=retire_reason,
    )


def version_record(row: VersionRow, head: StatementRow, attributes: bool = True) -> VersionRecord:
    """A version record and the statement that names it, as a vector index mirrors them;
    ``attributes=False`` leaves out what metadata filters test."""
    if not attributes:
        return VersionRecord(
            row.row_id,
            row.fact_id,
            row.namespace,
            head.text,
            row.valid_from,
            row.valid_to,
            row.recorded_at,
            row.retired_at,
        )
    return VersionRecord(
        row_id=row.row_id,
        fact_id=row.fact_id,
        namespace=row.namespace,
        text=head.text,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        recorded_at=row.recorded_at,
        retired_at=row.retired_at,
        attributes=MappingProxyType(
            attributes_of(
                head.subject,
                head.relation,
                head.object,
                _stored_metadata(head.metadata),
                fact_id=row.fact_id,
            )
        ),
    )


def _stored_metadata(text: str) -> Mapping[str, Any]:
    return metadata_from_json(text) if text not in ("", "{}") else {}


@dataclass(frozen=True, slots=True)
class LedgerDump:
    """Every row of a ledger, for a copy into another store (:meth:`Ledger.dump`)."""

    relations: tuple[tuple[str, Cardinality], ...]
    keys: tuple[tuple[int, FactKey], ...]
    statements: tuple[StatementRow, ...]
    versions: tuple[VersionRow, ...]
    last_record: tuple[Instant, int]  # the latest record time and statement seq used
