"""One write transaction: its first reads, record time, the per-stream state cache, applying
plans, and its results once stamped.

A :class:`Batch` lives for one transaction of :class:`~shared_core.ledger.ledger.Ledger`. It hands
out statement sequence numbers and record times (never going backwards), keeps the state of every
stream it touched (loading only the suffix of a stream that a write can change),
runs the pure rules of :mod:`shared_core.supersession`, applies their plans to the backend and
builds the results from what it already holds, without reading rows back.

A write names its first reads (and, when it may run in parallel, its keys and explicit valid
times) before its transaction begins, so that a backend on a server can run them with its
locks (:func:`expected_reads`, :class:`~shared_core.ledger.backend.WriteReads`); a parallel
write stamped at its commit with a later record time than it planned with has its results
moved to it (:func:`restamped`).
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
from shared_core.ledger.backend import Backend, ProseRead, TailRead, WriteReads
from shared_core.ledger.records import (
    KIND_ASSERTION,
    KIND_RETRACTION,
    StatementRow,
    to_fact,
    version_fact,
)
from shared_core.ledger.results import WriteResult
from shared_core.supersession import (
    StreamPlan,
    StreamState,
    Version,
    plan_statement,
    plan_withdrawal,
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one or more plans did (turned into facts at the end of the operation)."""

    decision: Decision
    fact: Version | None = None  # the stored version carrying the statement
    closed: tuple[Version, ...] = ()  # stored versions whose validity was ended or shortened
    retired_rows: tuple[int, ...] = ()  # version rows withdrawn in record time


def combine(
    outcomes: Iterable[Outcome], decision: Decision, *, fact: Version | None = None
) -> Outcome:
    """Merge outcomes; the result is ``decision`` unless every part was a duplicate."""
    parts = list(outcomes)
    changed = any(part.decision is not Decision.DUPLICATE for part in parts)
    if fact is None:
        fact = next((p.fact for p in parts if p.fact is not None), None)
    return Outcome(
        decision if changed else Decision.DUPLICATE,
        fact,
        tuple(dict.fromkeys(v for part in parts for v in part.closed)),
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
        self._heads: dict[int, StatementRow] = {}  # statements by seq, to build results
        self._retired_rows: set[int] = set()  # version rows this batch retired
        self._unused_ids: set[str] = set()  # fact ids known to be new (see expect)
        self.merge_prose = True  # prose repeating stored prose is that statement

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

    def stream(
        self, key_id: int | None, stream: str, *, since: Instant | None = None
    ) -> StreamState:
        """The believed state of one stream: enough of it to plan a statement valid from
        ``since`` (its tail may do), or all of it when ``since`` is None."""
        handle = (key_id, stream)
        cached = self._streams.get(handle)
        if cached is not None and (cached.complete or (since is not None and cached.covers(since))):
            return cached
        if cached is None and since is not None:
            tail = self._backend.load_tail(key_id, stream, since)
            if tail.covers(since):
                self._streams[handle] = tail
                return tail
        self._streams[handle] = self._backend.load_stream(key_id, stream)
        return self._streams[handle]

    def head(self, seq: int) -> StatementRow:
        """A statement by seq (cached: results are built from statements this batch knows)."""
        if seq not in self._heads:
            self._heads[seq] = self._backend.statement(seq)
        return self._heads[seq]

    def statements_of(self, fact_id: str) -> list[StatementRow]:
        """Every record with this fact id (this transaction's included), in record order."""
        return self._backend.statements_of_fact(fact_id)

    def expect(self, facts: list[Fact]) -> None:
        """Look up in one query which of these facts' ids are already used."""
        ids = [fact.id for fact in facts]
        self._unused_ids = set(ids) - self._backend.known_fact_ids(ids)

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
        if fact.id in self._unused_ids:
            self._unused_ids.discard(fact.id)  # a second use in this batch is looked up
        else:
            existing = self._backend.statements_of_fact(fact.id)
            if existing:
                return self._resubmission(existing, fact, valid_from, valid_to)
        key = fact.key
        if key is None:
            if self.merge_prose:
                loose_from = valid_from if fact.valid_from is not None else None
                text_key = normalize_text(fact.text)
                same = self._backend.find_prose(fact.namespace, text_key, loose_from, valid_to)
                if same is not None:
                    return self._duplicate_of(same)
            key_id, stream, value, new_stream = None, fact.id, None, True
        else:
            key_id, new_stream = self._backend.ensure_key(key)
            value = fact.object_key
            stream = stream_of(self.cardinality(key.relation), value)
        if new_stream:  # nothing to load: the stream starts here
            self._streams.setdefault((key_id, stream), StreamState())
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
        key_id = self._backend.key_id(key)
        if key_id is None:
            raise NothingToRetractError(f"no facts stored for {key.subject!r} / {key.relation!r}")
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
            for stream, shown in self._retraction_targets(key, key_id, wanted, when)
        ]
        return combine(outcomes, Decision.RETRACTED)

    def _retraction_targets(
        self, key: FactKey, key_id: int, wanted: ObjectValue | None, when: Instant
    ) -> list[tuple[str, ObjectValue | None]]:
        if self.cardinality(key.relation) is Cardinality.ONE:
            version = self.stream(key_id, "", since=when).version_at(when)
            if version and wanted is not None and version.value != normalize_object(wanted):
                shown = self.head(version.head_seq).object
                raise NothingToRetractError(
                    f"{key.subject!r} / {key.relation!r} is {shown!r} at that time, "
                    f"not {wanted!r}; nothing was retracted"
                )
            return [("", wanted)]
        if wanted is not None:
            return [(normalize_object(wanted), wanted)]
        valid: list[tuple[str, ObjectValue | None]] = []
        repeated: list[tuple[str, ObjectValue | None]] = []
        for name, loaded in sorted(self._backend.load_streams(key_id).items()):
            state = self._streams.setdefault((key_id, name), loaded)
            version = state.version_at(when)
            if version is not None:
                valid.append((name, self.head(version.head_seq).object))
            elif any(s.value is None and s.valid_from == when for s in state.statements):
                repeated.append((name, None))
        # Nothing valid: the same retraction again is a duplicate, anything else an error.
        return valid or repeated[:1] or [("", None)]

    def apply_statement(self, row: StatementRow) -> Outcome:
        """Plan and apply one new statement on its stream."""
        state = self.stream(row.key_id, row.stream, since=row.valid_from)
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
        after = self._apply(row.key_id, row.stream, row.namespace, plan, row)
        carrying = after.version_at(row.valid_from) if row.kind == KIND_ASSERTION else None
        return self._outcome(plan, after, carrying)

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
                after = self._apply(key_id, stream, members[0].namespace, plan, None)
                outcomes.append(self._outcome(plan, after, None))
        return combine(outcomes, decision)

    def rerecord(self, row: StatementRow) -> Outcome:
        """Record a retired statement again, as new (same fact id and content)."""
        when = self.record_time(None)
        fresh = replace(
            row, seq=self.take_seq(), recorded_at=when, retired_at=OPEN, retire_reason=None
        )
        return self.apply_statement(fresh)

    def result(self, outcome: Outcome, statement_id: str) -> WriteResult:
        """The public result, built from the versions and statements this batch holds."""
        retired = self._backend.versions_by_row(list(outcome.retired_rows))
        fact = outcome.fact
        return WriteResult(
            decision=outcome.decision,
            statement_id=statement_id,
            fact=None if fact is None else version_fact(fact, self.head(fact.head_seq)),
            closed=tuple(
                version_fact(v, self.head(v.head_seq))
                for v in outcome.closed
                if v.row_id not in self._retired_rows  # replaced later in this operation
            ),
            retired=tuple(to_fact(row, head) for row, head in retired),
        )

    # ------------------------------------------------------------ internals
    def _apply(
        self,
        key_id: int | None,
        stream: str,
        namespace: str,
        plan: StreamPlan,
        row: StatementRow | None,
    ) -> StreamState:
        """Store the plan; returns the stream's new state (stored versions carry row ids)."""
        when = self.last_time
        if plan.add_statement is not None and row is not None:
            self._backend.insert_statement(row)
            self._heads[row.seq] = row
        for statement, reason in plan.retire_statements:
            self._backend.retire_statement(statement.seq, when, reason)
        for version, reason in plan.retire_versions:
            assert version.row_id is not None
            self._backend.retire_version(version.row_id, when, reason)
            self._retired_rows.add(version.row_id)
        stored = {
            version.identity(): _stored(
                version,
                self._backend.insert_version(
                    version, namespace=namespace, key_id=key_id, stream=stream, at=when
                ),
                when,
            )
            for version in plan.add_versions
        }
        assert plan.after is not None
        versions = tuple(
            v if v.row_id is not None else stored[v.identity()] for v in plan.after.versions
        )
        after = StreamState(
            plan.after.statements, versions, complete=plan.after.complete, start=plan.after.start
        )
        # Keep only the tail: the next write is most likely newer still, and the backend
        # (which sees this transaction's rows) serves anything else.
        self._streams[(key_id, stream)] = after.tail()
        return after

    @staticmethod
    def _outcome(plan: StreamPlan, after: StreamState, carrying: Version | None) -> Outcome:
        closed = {v.identity() for v in plan.closed()}
        retired = [
            v.row_id
            for v, reason in plan.retire_versions
            if reason.kind is not ReasonKind.REVISED and v.row_id is not None
        ]
        return Outcome(
            plan.decision,
            carrying,
            tuple(v for v in after.versions if v.identity() in closed),
            tuple(retired),
        )

    def _duplicate_of(self, row: StatementRow, state: StreamState | None = None) -> Outcome:
        if row.kind == KIND_RETRACTION:
            return Outcome(Decision.DUPLICATE)
        if state is None:
            state = self.stream(row.key_id, row.stream)
        return Outcome(Decision.DUPLICATE, state.version_at(row.valid_from))

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


def stream_of(cardinality: Cardinality, value: str | None) -> str:
    """A keyed statement's stream: its value under a MANY relation, else the key's one stream."""
    return value if cardinality is Cardinality.MANY and value is not None else ""


def _stored(version: Version, row_id: int, when: Instant) -> Version:
    v = version
    return Version(v.fact_id, v.head_seq, v.value, v.valid_from, v.valid_to, v.end, row_id, when)


def _key_of(row: StatementRow) -> tuple[str, str] | None:
    if row.subject is None or row.relation is None:
        return None
    return normalize_subject(row.subject), normalize_relation(row.relation)


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


def expected_reads(
    backend: Backend, facts: list[Fact], *, now: Instant, merge_prose: bool, parallel: bool
) -> WriteReads:
    """The reads a batch writing ``facts`` starts with (see WriteReads), named before its
    transaction from what the backend knows outside it: every fact id, the tail of each
    keyed fact's stream when its key is stored (from its valid_from, or ``now`` for one that
    defaults to its record time, which is no earlier), the stored prose a prose fact may
    repeat; for a ``parallel`` write also the keys and explicit valid times. A fact whose
    times do not convert is left out: its write reports the error."""
    tails: dict[tuple[int, str], Instant] = {}
    prose: list[ProseRead] = []
    times: set[Instant] = set()
    key_ids = backend.key_ids([fact.key for fact in facts if fact.key is not None])
    for fact in facts:
        try:
            valid_from = None if fact.valid_from is None else to_instant(fact.valid_from)
            valid_to = optional_instant(fact.valid_to, "valid_to")
        except InvalidInputError:
            continue
        times.update(t for t in (valid_from, valid_to) if t is not None)
        key = fact.key
        if key is None:
            if merge_prose:
                text_key = normalize_text(fact.text)
                prose.append(ProseRead(fact.namespace, text_key, valid_from, valid_to))
            continue
        key_id = key_ids.get(key)
        if key_id is not None:
            cardinality = backend.cardinality(key.relation) or Cardinality.ONE
            handle = (key_id, stream_of(cardinality, fact.object_key))
            since = now if valid_from is None else valid_from
            tails[handle] = min(since, tails.get(handle, since))
    return WriteReads(
        fact_ids=tuple(fact.id for fact in facts),
        tails=tuple(TailRead(key_id, stream, since) for (key_id, stream), since in tails.items()),
        prose=tuple(prose),
        keys=tuple(dict.fromkeys(f.key for f in facts if f.key is not None)) if parallel else (),
        times=tuple(sorted(times)) if parallel else (),
        parallel=parallel,
    )


def restamped(result: WriteResult, planned: Instant, stamped: Instant) -> WriteResult:
    """``result`` with every instant that was the record time it was planned with moved to
    the one it was stamped with (see ``Backend.moved_record_time``)."""
    before, after = from_instant(planned), from_instant(stamped)

    def at(when: datetime | None) -> datetime | None:
        return after if when == before else when

    def moved(fact: Fact) -> Fact:
        return replace(
            fact,
            valid_from=at(fact.valid_from),
            valid_to=at(fact.valid_to),
            recorded_at=at(fact.recorded_at),
            retired_at=at(fact.retired_at),
        )

    return replace(
        result,
        fact=None if result.fact is None else moved(result.fact),
        closed=tuple(moved(f) for f in result.closed),
        retired=tuple(moved(f) for f in result.retired),
    )
