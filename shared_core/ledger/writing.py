"""One write transaction: record time, the per-stream state cache, and applying plans.

A :class:`Batch` lives for one transaction of :class:`~shared_core.ledger.base.Ledger`. It hands
out statement sequence numbers and record times (never going backwards), keeps the state of every
stream it touched so a batch of many facts loads each stream once, runs the pure rules of
:mod:`shared_core.supersession` and applies their plans to the backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import groupby

from shared_core.clock import OPEN, Instant, from_instant, optional_instant, to_instant
from shared_core.errors import FactIdConflictError, InvalidInputError, NothingToRetractError
from shared_core.facts import (
    Cardinality,
    Decision,
    Fact,
    FactKey,
    ObjectValue,
    Reason,
    ReasonKind,
    metadata_to_json,
    normalize_object,
    normalize_relation,
    normalize_subject,
    normalize_text,
)
from shared_core.ledger.backend import Backend
from shared_core.ledger.records import KIND_ASSERTION, KIND_RETRACTION, StatementRow, to_fact
from shared_core.ledger.results import WriteResult
from shared_core.supersession import StreamPlan, StreamState, plan_statement, plan_withdrawal


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one or more plans did, by version row id (turned into facts at the end)."""

    decision: Decision
    fact_row: int | None = None
    closed_rows: tuple[int, ...] = ()
    retired_rows: tuple[int, ...] = ()


def combine(
    outcomes: Iterable[Outcome], decision: Decision, *, fact_row: int | None = None
) -> Outcome:
    """Merge outcomes; the result is ``decision`` unless every part was a duplicate."""
    parts = list(outcomes)
    changed = any(part.decision is not Decision.DUPLICATE for part in parts)
    if fact_row is None:
        fact_row = next((p.fact_row for p in parts if p.fact_row is not None), None)
    return Outcome(
        decision if changed else Decision.DUPLICATE,
        fact_row,
        tuple(dict.fromkeys(row for part in parts for row in part.closed_rows)),
        tuple(dict.fromkeys(row for part in parts for row in part.retired_rows)),
    )


class Batch:
    """The state of one write transaction."""

    def __init__(self, backend: Backend, *, now: Instant, last_time: Instant, last_seq: int):
        self._backend = backend
        self.now = now  # the clock at the start, never earlier than the last record time
        self.last_time = last_time  # record time of the latest change in this batch
        self.last_seq = last_seq
        self.pinned: Instant | None = None  # an explicit record time for the whole batch
        self._streams: dict[tuple[int | None, str], StreamState] = {}
        self._cardinalities: dict[str, Cardinality] = {}

    # ------------------------------------------------------------ record time and identity
    def take_seq(self) -> int:
        """The next statement sequence number."""
        self.last_seq += 1
        return self.last_seq

    def pin(self, explicit: datetime | None) -> None:
        """Record everything in this batch at ``explicit`` (for importing a log in order)."""
        if explicit is not None:
            self.pinned = self.record_time(explicit)

    def record_time(self, explicit: datetime | None) -> Instant:
        """The record time of the next change: ``explicit`` if given and allowed, else now."""
        if explicit is None:
            if self.pinned is None:
                self.last_time = max(self.last_time, self.now)
            return self.last_time
        when = to_instant(explicit, "recorded_at")
        if when < self.last_time:
            raise InvalidInputError(
                "recorded_at",
                f"{explicit.isoformat()} is before the ledger's latest record "
                f"time {from_instant(self.last_time).isoformat()}",
                "record time cannot go backwards: leave recorded_at None, or import in order",
            )
        if when > self.now:
            raise InvalidInputError(
                "recorded_at",
                f"{explicit.isoformat()} is in the future",
                "the ledger cannot have learned something later than now; leave it None",
            )
        self.last_time = when
        return when

    def cardinality(self, relation: str) -> Cardinality:
        """The (cached) cardinality of a normalised relation."""
        if relation not in self._cardinalities:
            found = self._backend.cardinality(relation)
            self._cardinalities[relation] = found or Cardinality.ONE
        return self._cardinalities[relation]

    def stream(self, key_id: int | None, stream: str) -> StreamState:
        """The (cached) believed state of one stream."""
        handle = (key_id, stream)
        if handle not in self._streams:
            self._streams[handle] = self._backend.load_stream(key_id, stream)
        return self._streams[handle]

    # ------------------------------------------------------------ operations
    def write_fact(self, fact: Fact) -> WriteResult:
        """Write one fact and describe the outcome."""
        return self.result(self.write_outcome(fact), fact.id)

    def write_outcome(self, fact: Fact) -> Outcome:
        """Write one fact (duplicates and id reuse are recognised first)."""
        when = self.record_time(fact.recorded_at)
        valid_from = when if fact.valid_from is None else to_instant(fact.valid_from)
        valid_to = optional_instant(fact.valid_to, "valid_to")
        if valid_to is not None and valid_to <= valid_from:
            raise InvalidInputError(
                "valid_to",
                "is not after valid_from (which defaulted to the record time)",
                "give valid_from explicitly, or a later valid_to",
            )
        existing = self._backend.statements_of_fact(fact.id)
        if existing:
            return self._resubmission(existing, fact, valid_from, valid_to)
        key = fact.key
        if key is None:
            loose_from = valid_from if fact.valid_from is not None else None
            text_key = normalize_text(fact.text)
            same = self._backend.find_prose(fact.namespace, text_key, loose_from, valid_to)
            if same is not None:
                return self._duplicate_of(same)
            key_id, stream, value = None, fact.id, None
        else:
            key_id = self._backend.key_id(key, create=True)
            value = fact.object_key
            many = self.cardinality(key.relation) is Cardinality.MANY
            stream = value if many and value is not None else ""
        row = statement_row(
            fact,
            seq=self.take_seq(),
            key_id=key_id,
            stream=stream,
            value=value,
            valid_from=valid_from,
            valid_to=valid_to,
            recorded_at=when,
        )
        return self.apply_statement(row)

    def retract(
        self, probe: Fact, key: FactKey, wanted: ObjectValue | None, when: Instant
    ) -> Outcome:
        """End what is valid for ``key`` at ``when`` (see ``Ledger.retract``)."""
        self.record_time(None)
        key_id = self._backend.key_id(key, create=False)
        if key_id is None:
            raise NothingToRetractError(f"no facts stored for {key.subject!r} / {key.relation!r}")
        targets = self._retraction_targets(key, key_id, wanted, when)
        outcomes = [
            self.apply_statement(
                statement_row(
                    probe,
                    seq=self.take_seq(),
                    key_id=key_id,
                    stream=stream,
                    value=None,
                    valid_from=when,
                    valid_to=None,
                    recorded_at=self.last_time,
                    kind=KIND_RETRACTION,
                    display_object=shown,
                )
            )
            for stream, shown in targets
        ]
        return combine(outcomes, Decision.RETRACTED)

    def _retraction_targets(
        self, key: FactKey, key_id: int, wanted: ObjectValue | None, when: Instant
    ) -> list[tuple[str, ObjectValue | None]]:
        if self.cardinality(key.relation) is Cardinality.ONE:
            version = self.stream(key_id, "").version_at(when)
            if (
                version is not None
                and wanted is not None
                and version.value != normalize_object(wanted)
            ):
                shown = self._backend.statement(version.head_seq).object
                raise NothingToRetractError(
                    f"{key.subject!r} / {key.relation!r} is {shown!r} at that time, "
                    f"not {wanted!r}; nothing was retracted"
                )
            return [("", wanted)]
        if wanted is not None:
            return [(normalize_object(wanted), wanted)]
        valid: list[tuple[str, ObjectValue | None]] = []
        repeated: list[tuple[str, ObjectValue | None]] = []
        for name in sorted(self._backend.load_streams(key_id)):
            state = self.stream(key_id, name)
            version = state.version_at(when)
            if version is not None:
                valid.append((name, self._backend.statement(version.head_seq).object))
            elif any(s.value is None and s.valid_from == when for s in state.statements):
                repeated.append((name, None))
        # Nothing valid: the same retraction again is a duplicate, anything else an error.
        return valid or repeated[:1] or [("", None)]

    def apply_statement(self, row: StatementRow) -> Outcome:
        """Plan and apply one new statement on its stream."""
        state = self.stream(row.key_id, row.stream)
        try:
            plan = plan_statement(state, row.statement())
        except NothingToRetractError:
            raise NothingToRetractError(
                f"nothing is valid for {row.subject!r} / {row.relation!r}"
                f"{'' if row.object is None else f' = {row.object!r}'} at "
                f"{from_instant(row.valid_from).isoformat()}; nothing was retracted"
            ) from None
        if plan.decision is Decision.DUPLICATE:
            return self._duplicate_of(row, state)
        ids = self._apply(row.key_id, row.stream, row.namespace, plan, row)
        after = self.stream(row.key_id, row.stream)
        fact_row = None
        if row.kind == KIND_ASSERTION:
            carrying = after.version_at(row.valid_from)
            fact_row = carrying.row_id if carrying else None
        return _outcome(plan, ids, fact_row)

    def withdraw(self, rows: list[StatementRow], reason: Reason, decision: Decision) -> Outcome:
        """Retire believed statements in record time and re-derive their streams."""
        self.record_time(None)
        outcomes = []
        ordered = sorted(rows, key=lambda r: (r.key_id or 0, r.stream))
        for (key_id, stream), group in groupby(ordered, key=lambda r: (r.key_id, r.stream)):
            members = list(group)
            plan = plan_withdrawal(
                self.stream(key_id, stream), {r.seq: reason for r in members}, decision
            )
            if plan.decision is not Decision.DUPLICATE:
                ids = self._apply(key_id, stream, members[0].namespace, plan, None)
                outcomes.append(_outcome(plan, ids, None))
        return combine(outcomes, decision)

    def rerecord(self, row: StatementRow) -> Outcome:
        """Record a retired statement again, as new (same fact id and content)."""
        when = self.record_time(None)
        fresh = replace(
            row, seq=self.take_seq(), recorded_at=when, retired_at=OPEN, retire_reason=None
        )
        return self.apply_statement(fresh)

    def result(self, outcome: Outcome, statement_id: str) -> WriteResult:
        """Turn row ids into facts."""
        wanted = [r for r in (outcome.fact_row, *outcome.closed_rows, *outcome.retired_rows) if r]
        facts = {
            row.row_id: to_fact(row, head)
            for row, head in self._backend.versions_by_row(list(dict.fromkeys(wanted)))
        }
        return WriteResult(
            decision=outcome.decision,
            statement_id=statement_id,
            fact=facts[outcome.fact_row] if outcome.fact_row else None,
            closed=tuple(facts[r] for r in outcome.closed_rows if facts[r].retired_at is None),
            retired=tuple(facts[r] for r in outcome.retired_rows),
        )

    # ------------------------------------------------------------ internals
    def _apply(
        self,
        key_id: int | None,
        stream: str,
        namespace: str,
        plan: StreamPlan,
        row: StatementRow | None,
    ) -> dict[tuple[object, ...], int]:
        when = self.last_time
        if plan.add_statement is not None and row is not None:
            self._backend.insert_statement(row)
        for statement, reason in plan.retire_statements:
            self._backend.retire_statement(statement.seq, when, reason)
        for version, reason in plan.retire_versions:
            assert version.row_id is not None
            self._backend.retire_version(version.row_id, when, reason)
        ids = {
            version.identity(): self._backend.insert_version(
                version, namespace=namespace, key_id=key_id, stream=stream, at=when
            )
            for version in plan.add_versions
        }
        assert plan.after is not None
        versions = tuple(
            v if v.row_id is not None else replace(v, row_id=ids[v.identity()])
            for v in plan.after.versions
        )
        self._streams[(key_id, stream)] = StreamState(plan.after.statements, versions)
        return ids

    def _duplicate_of(self, row: StatementRow, state: StreamState | None = None) -> Outcome:
        if row.kind == KIND_RETRACTION:
            return Outcome(Decision.DUPLICATE)
        state = state if state is not None else self.stream(row.key_id, row.stream)
        version = state.version_at(row.valid_from)
        return Outcome(Decision.DUPLICATE, version.row_id if version else None)

    def _resubmission(
        self,
        existing: list[StatementRow],
        fact: Fact,
        valid_from: Instant,
        valid_to: Instant | None,
    ) -> Outcome:
        """The same fact id again: a duplicate if the content is the same, else an error."""
        latest = existing[-1]
        key = fact.key
        same = (
            latest.kind == KIND_ASSERTION
            and latest.namespace == fact.namespace
            and _key_of(latest) == (None if key is None else (key.subject, key.relation))
            and latest.value == fact.object_key
            and latest.text_key == normalize_text(fact.text)
            and latest.valid_to == valid_to
            and (fact.valid_from is None or latest.valid_from == valid_from)
        )
        if not same:
            raise FactIdConflictError(
                f"fact id {fact.id!r} is already used by a different statement; "
                "give the new statement a new id (or use ledger.correct to change a fact)"
            )
        believed = [r for r in existing if r.believed]
        return self._duplicate_of(believed[0]) if believed else Outcome(Decision.DUPLICATE)


def _key_of(row: StatementRow) -> tuple[str, str] | None:
    if row.subject is None or row.relation is None:
        return None
    return normalize_subject(row.subject), normalize_relation(row.relation)


def _outcome(plan: StreamPlan, ids: dict[tuple[object, ...], int], fact_row: int | None) -> Outcome:
    kept_ids = [ids[v.identity()] for v in plan.closed()]
    retired = [
        v.row_id
        for v, reason in plan.retire_versions
        if reason.kind is not ReasonKind.REVISED and v.row_id is not None
    ]
    return Outcome(plan.decision, fact_row, tuple(kept_ids), tuple(retired))


def statement_row(
    fact: Fact,
    *,
    seq: int,
    key_id: int | None,
    stream: str,
    value: str | None,
    valid_from: Instant,
    valid_to: Instant | None,
    recorded_at: Instant,
    kind: str = KIND_ASSERTION,
    display_object: ObjectValue | None = None,
) -> StatementRow:
    """The write-log record of ``fact``."""
    return StatementRow(
        seq=seq,
        fact_id=fact.id,
        namespace=fact.namespace,
        key_id=key_id,
        stream=stream,
        subject=fact.subject,
        relation=fact.relation,
        object=fact.object if kind == KIND_ASSERTION else display_object,
        value=value,
        kind=kind,
        text=fact.text,
        text_key=normalize_text(fact.text),
        valid_from=valid_from,
        valid_to=valid_to,
        recorded_at=recorded_at,
        retired_at=OPEN,
        retire_reason=None,
        metadata=metadata_to_json(fact.metadata),
    )
