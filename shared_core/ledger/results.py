"""What the ledger returns from writes and from ``explain``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from shared_core.clock import OPEN, Instant
from shared_core.facts import Decision, Fact, FactStatus, ObjectValue, Reason
from shared_core.filters import Scalar


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of one write.

    ``fact`` is the version that now carries the statement (``None`` for retractions and
    withdrawals); ``closed`` are versions whose validity this write ended or shortened, as they
    are now; ``retired`` are versions this write withdrew in record time (corrected or merged).
    """

    decision: Decision
    statement_id: str
    fact: Fact | None = None
    closed: tuple[Fact, ...] = ()
    retired: tuple[Fact, ...] = ()


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


@dataclass(frozen=True, slots=True)
class Explanation:
    """Everything the ledger knows about one fact id, and why it stands where it stands."""

    fact_id: str
    statements: tuple[StoredStatement, ...]  # every record of the statement, in record order
    versions: tuple[Fact, ...]  # every record of the version named fact_id, in record order
    part_of: Fact | None  # the believed version this statement supports (may be another id)

    @property
    def latest(self) -> Fact | None:
        """The newest record of the version named ``fact_id``, if it has one."""
        return self.versions[-1] if self.versions else None

    @property
    def reason(self) -> Reason | None:
        """Why the fact is not current: its retirement, else the end of its validity."""
        latest = self.latest
        if latest is None:
            return self.statements[-1].retire_reason if self.statements else None
        return latest.retire_reason or latest.end_reason

    def summary(self) -> str:
        """A few plain sentences for people."""
        lines = []
        first = self.statements[0] if self.statements else None
        if first is not None:
            about = (
                f" ({first.subject} / {first.relation} = {first.object})"
                if first.subject is not None
                else ""
            )
            lines.append(f"{self.fact_id}: {first.kind} {first.text!r}{about}")
        latest = self.latest
        if latest is not None:
            lines.append(_describe_version(latest))
        elif self.part_of is not None:
            lines.append(f"supports version {self.part_of.id} ({_describe_version(self.part_of)})")
        shown = latest.retire_reason if latest is not None else None
        for record in self.statements:
            if record.retire_reason is not None and record.retired_at is not None:
                if record.retire_reason == shown:
                    continue  # already told on the version line
                lines.append(
                    f"statement retired at {record.retired_at.isoformat()}: "
                    f"{_describe_reason(record.retire_reason)}"
                )
        return "\n".join(lines)


def _describe_version(fact: Fact) -> str:
    assert fact.valid_from is not None
    assert fact.recorded_at is not None
    until = fact.valid_to.isoformat() if fact.valid_to else "open"
    text = f"{fact.status}: valid {fact.valid_from.isoformat()} -> {until}"
    text += f", recorded {fact.recorded_at.isoformat()}"
    if fact.status is FactStatus.RETIRED and fact.retire_reason and fact.retired_at:
        text += f"; retired {fact.retired_at.isoformat()}: {_describe_reason(fact.retire_reason)}"
    elif fact.end_reason is not None:
        text += f"; ended: {_describe_reason(fact.end_reason)}"
    return text


def _describe_reason(reason: Reason) -> str:
    text = f"{reason.kind.phrase} {reason.by}" if reason.by else reason.kind.phrase
    text += f" (rule: {reason.rule}"
    text += f", score {reason.score:.3f})" if reason.score is not None else ")"
    return text


@dataclass(frozen=True, slots=True)
class ChangeCursor:
    """How far a consumer of :meth:`Ledger.changes` has read.

    Every version row with ``row_id <= after_row`` was seen as it stood then, and so were the
    ``retired_at_from`` rows retired at exactly ``retired_from``; later retirements were not.
    Record time never goes backwards and a row is retired once, so nothing is missed: when more
    rows have been retired at ``retired_from`` since, all of that instant's are delivered again
    (harmless: applying a record is idempotent), otherwise only later ones.
    """

    after_row: int = 0
    retired_from: Instant = 0
    retired_at_from: int = 0


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One version row as a vector index mirrors it: identity, text and four instants.

    Times are integer epoch microseconds; an open end is :data:`~shared_core.clock.OPEN`.
    A row's only change over its life is ``retired_at`` going from OPEN to a record time.
    """

    row_id: int
    fact_id: str
    namespace: str
    text: str
    valid_from: Instant
    valid_to: Instant
    recorded_at: Instant
    retired_at: Instant
    attributes: Mapping[str, Scalar] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )  # what metadata filters test (see shared_core.filters)

    @property
    def believed(self) -> bool:
        """Not retired in record time."""
        return self.retired_at == OPEN

    def visible(self, valid_at: Instant | None, known_at: Instant | None) -> bool:
        """Believed at ``known_at`` (None: now) and valid at ``valid_at`` (None: any time)."""
        if known_at is None:
            known = self.retired_at == OPEN
        else:
            known = self.recorded_at <= known_at < self.retired_at
        valid = valid_at is None or self.valid_from <= valid_at < self.valid_to
        return known and valid


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Version rows inserted or retired since a cursor (as they stand now) and the next cursor."""

    records: tuple[VersionRecord, ...]
    cursor: ChangeCursor
    more: bool = False  # a page limit was reached: ask again from ``cursor``


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """A version row as an index sees it (``record``) and as a caller sees it (``fact``)."""

    record: VersionRecord
    fact: Fact
