"""What the ledger returns from writes and from ``explain``."""

from __future__ import annotations

from dataclasses import dataclass

from shared_core.facts import Decision, Fact, FactStatus, Reason
from shared_core.ledger.records import StoredStatement


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
