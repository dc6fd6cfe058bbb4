"""The rows every ledger store keeps, and their conversion to the public types.

Two append-mostly tables make the ledger: *statements* (the write log: what was said, when it was
recorded, and, if it turned out wrong, when it was retired) and *versions* (the timeline derived
from the statements, bi-temporally: each row's valid interval and record interval). A row's only
mutation is setting ``retired_at`` once; nothing is ever deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared_core.clock import OPEN, Instant, from_instant
from shared_core.facts import Cardinality, Fact, FactKey, ObjectValue, Reason, metadata_from_json
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


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredStatement:
    """A statement as it was written, with its record interval (see ``ledger.explain``)."""

    fact_id: str
    kind: str
    namespace: str
    subject: str | None
    relation: str | None
    object: ObjectValue | None
    text: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    retired_at: datetime | None
    retire_reason: Reason | None
    end_reason: Reason | None = None  # what a retraction records as the end of what it closes


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


@dataclass(frozen=True, slots=True)
class LedgerDump:
    """Every row of a ledger, for a copy into another store (:meth:`Ledger.dump`)."""

    relations: tuple[tuple[str, Cardinality], ...]
    keys: tuple[tuple[int, FactKey], ...]
    statements: tuple[StatementRow, ...]
    versions: tuple[VersionRow, ...]
    last_record: tuple[Instant, int]  # the latest record time and statement seq used
