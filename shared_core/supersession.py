"""The write-time rule, as pure functions: statements in, versions and a plan of changes out.

A *stream* is what one value-at-a-time timeline is about: a key of cardinality ONE is one stream;
a key of cardinality MANY is one stream per object (its value is that object or nothing). Each
stored statement asserts a value (or, for a retraction, "no value") from ``valid_from``; ordered by
``valid_from``, with the later-recorded statement winning at equal ``valid_from``, the statements
form a step function. A statement with an explicit ``valid_to`` holds only until then. Maximal
runs of equal values are the *versions*; each is named after its earliest-recorded supporting
statement, so a fact keeps its id while its interval grows or shrinks.

Nothing here touches storage or mutates its inputs: the stores apply the returned plans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from shared_core.clock import OPEN, Instant
from shared_core.errors import InvalidOperationError, NothingToRetractError
from shared_core.facts import Decision, Reason, ReasonKind

RULE_SUPERSESSION = "supersession"
RULE_RETRACTION = "retraction"
RULE_VALID_TO = "valid_to"
RULE_REVISION = "revision"
RULE_CORRECTION = "correction"
RULE_WITHDRAWAL = "withdrawal"
RULE_MERGE = "merge"
RULE_UNDO = "undo"


@dataclass(frozen=True, slots=True)
class Statement:
    """A believed statement of one stream. ``value`` is the normalised object, None retracts."""

    seq: int  # record order; a higher seq was recorded later
    fact_id: str
    value: str | None
    valid_from: Instant
    valid_to: Instant | None  # explicit end, or None for "until the next change"
    text_key: str  # normalised text, for recognising identical statements
    # A retraction may carry why it ends what it closes (e.g. a prose statement superseded by a
    # judged contradiction); None: the generic RETRACTED reason of RULE_RETRACTION.
    end_reason: Reason | None = None


@dataclass(frozen=True, slots=True)
class Version:
    """A maximal run of one value: what the ledger stores and retrieves as a fact version."""

    fact_id: str
    head_seq: int  # the statement that names the version and provides its text
    value: str
    valid_from: Instant
    valid_to: Instant  # OPEN when open
    end: Reason | None  # why it ends at valid_to (None when open)
    row_id: int | None = None  # the store's handle; not part of the version's identity
    recorded_at: Instant | None = None  # set by the store; not part of the identity

    def identity(self) -> tuple[object, ...]:
        """Everything that makes two versions the same record."""
        return (self.fact_id, self.head_seq, self.value, self.valid_from, self.valid_to, self.end)

    def contains(self, instant: Instant) -> bool:
        """Whether ``instant`` lies in the half-open valid interval."""
        return self.valid_from <= instant < self.valid_to


@dataclass(frozen=True, slots=True)
class StreamState:
    """The believed statements of a stream and the version records derived from them.

    A store may load only a *suffix* of a long stream (``complete=False``): the statements and
    versions from ``start``, the start of a version, on. Each statement holds at most until the
    next one starts, so nothing before ``start`` reaches past it, and the suffix can plan a
    statement valid from T when nothing before ``start`` can change:

    - T is after every statement: only the last version can change (the *tail*, from the last
      version, suffices: facts arriving in time order);
    - or the suffix's second version starts before T: then its first version lies wholly
      before the latest version that starts before T, so its value, extent and head (which
      the end reason of the version before it names) cannot change, although its own end
      reason can (the latest version may take another head, merging with later runs).
    """

    statements: tuple[Statement, ...] = ()
    versions: tuple[Version, ...] = ()
    complete: bool = True
    start: Instant | None = None  # a suffix: where it starts (None when complete)

    def covers(self, instant: Instant) -> bool:
        """Whether a new statement valid from ``instant`` can be planned on this state."""
        if self.complete:
            return True
        if self.start is None or not self.statements:
            return False
        if instant > max(s.valid_from for s in self.statements):
            return True
        return len(self.versions) > 1 and self.versions[1].valid_from < instant

    def tail(self) -> StreamState:
        """The part from the last version's start on (all of it if that is not smaller): what
        a statement newer than every stored one can change."""
        return self._from(len(self.versions) - 1)

    def before(self, instant: Instant) -> StreamState:
        """The part a statement valid from ``instant`` can change (see the class doc): the tail
        when it is newer than every statement, else the part from the version before the
        latest one that starts before it (all of it if that is not smaller)."""
        if all(s.valid_from < instant for s in self.statements):
            return self.tail()
        latest = sum(1 for v in self.versions if v.valid_from < instant) - 1
        return self._from(latest - 1)

    def _from(self, position: int) -> StreamState:
        if position < 1:
            return self
        start = self.versions[position].valid_from
        return StreamState(
            tuple(s for s in self.statements if s.valid_from >= start),
            self.versions[position:],
            complete=False,
            start=start,
        )

    def version_at(self, instant: Instant) -> Version | None:
        """The believed version valid at ``instant``, if any."""
        return next((v for v in self.versions if v.contains(instant)), None)


@dataclass(frozen=True, slots=True)
class StreamPlan:
    """What a store must do to one stream, and the stream's state afterwards."""

    decision: Decision
    add_statement: Statement | None = None
    retire_statements: tuple[tuple[Statement, Reason], ...] = ()
    retire_versions: tuple[tuple[Version, Reason], ...] = ()
    add_versions: tuple[Version, ...] = ()
    after: StreamState | None = None

    @property
    def changes_anything(self) -> bool:
        """False for a duplicate: nothing to store."""
        return self.add_statement is not None or bool(self.retire_statements)

    def closed(self) -> tuple[Version, ...]:
        """New records of existing versions whose validity this plan ended or shortened."""
        before = {v.fact_id: v.valid_to for v, _ in self.retire_versions}
        return tuple(
            v for v in self.add_versions if v.fact_id in before and v.valid_to < before[v.fact_id]
        )


# A piece of the step function: (start, end, value or None, cause, is_gap). ``cause`` is the
# statement that starts it or, for a gap, the statement whose explicit valid_to opened it.
_Piece = tuple[Instant, Instant, str | None, Statement, bool]


def derive_versions(statements: Iterable[Statement]) -> tuple[Version, ...]:
    """The versions of one stream, in valid-time order, from its believed statements."""
    ordered = sorted(statements, key=_time_order)
    pieces = _pieces(ordered)
    versions: list[Version] = []
    heads: list[Statement] = []
    ends: list[_Piece | None] = []
    index, low = 0, 0  # low: first statement that may support the current run
    while index < len(pieces):
        start, end, value, _, _ = pieces[index]
        index += 1
        if value is None:
            continue
        while index < len(pieces) and pieces[index][2] == value:
            end = pieces[index][1]
            index += 1
        while ordered[low].valid_from < start:
            low += 1
        head: Statement | None = None  # the earliest-recorded supporter names the version
        scan = low
        while scan < len(ordered) and ordered[scan].valid_from < end:
            candidate = ordered[scan]
            if candidate.value == value and (head is None or candidate.seq < head.seq):
                head = candidate
            scan += 1
        assert head is not None, "a run starts at a supporting statement"
        heads.append(head)
        ends.append(pieces[index] if index < len(pieces) else None)
        versions.append(Version(head.fact_id, head.seq, value, start, end, None))
    for position, version in enumerate(versions):
        following = ends[position]
        if following is not None:
            next_head = heads[position + 1] if position + 1 < len(heads) else None
            versions[position] = Version(
                version.fact_id,
                version.head_seq,
                version.value,
                version.valid_from,
                version.valid_to,
                _end_reason(following, next_head),
            )
    return tuple(versions)


def _time_order(statement: Statement) -> tuple[Instant, int]:
    return statement.valid_from, statement.seq


def _pieces(ordered: list[Statement]) -> list[_Piece]:
    """The step function: at equal valid_from the last-recorded statement wins."""
    pieces: list[_Piece] = []
    count = len(ordered)
    for index, winner in enumerate(ordered):
        following = ordered[index + 1].valid_from if index + 1 < count else OPEN
        if following == winner.valid_from:
            continue  # a later-recorded statement at the same instant wins
        end = following if winner.valid_to is None else min(following, winner.valid_to)
        pieces.append((winner.valid_from, end, winner.value, winner, False))
        if end < following:
            pieces.append((end, following, None, winner, True))
    return pieces


def _end_reason(following: _Piece, next_head: Statement | None) -> Reason:
    _, _, value, cause, is_gap = following
    if is_gap:
        return Reason(ReasonKind.EXPIRED, cause.fact_id, RULE_VALID_TO)
    if value is None:
        if cause.end_reason is not None:
            return cause.end_reason
        return Reason(ReasonKind.RETRACTED, cause.fact_id, RULE_RETRACTION)
    assert next_head is not None
    return Reason(ReasonKind.SUPERSEDED, next_head.fact_id, RULE_SUPERSESSION)


def plan_statement(state: StreamState, incoming: Statement) -> StreamPlan:
    """Plan a new statement (an assertion, or a retraction when ``incoming.value`` is None).

    Identical believed statement: duplicate. Same ``valid_from`` with another value: the old
    statement is retired as corrected. Otherwise the versions are re-derived and the decision
    says what happened at ``incoming.valid_from``.
    """
    if not state.covers(incoming.valid_from):
        raise InvalidOperationError("a partial stream state cannot plan this statement")
    if _is_duplicate(state, incoming):
        return StreamPlan(Decision.DUPLICATE, after=state)
    prefix, tail = _split_tail(state, incoming.valid_from)
    if prefix is not None:  # newer than everything: only the last version can change
        plan = plan_statement(tail, incoming)
        assert plan.after is not None
        after = StreamState(
            prefix.statements + plan.after.statements,
            prefix.versions + plan.after.versions,
            complete=state.complete,
            start=state.start,
        )
        return StreamPlan(
            plan.decision,
            plan.add_statement,
            plan.retire_statements,
            plan.retire_versions,
            plan.add_versions,
            after,
        )
    before = state.version_at(incoming.valid_from)
    if incoming.value is None and before is None:
        raise NothingToRetractError("nothing is valid at the retraction time")
    corrected = tuple(
        (s, Reason(ReasonKind.CORRECTED, incoming.fact_id, RULE_CORRECTION))
        for s in state.statements
        if s.valid_from == incoming.valid_from and s.value != incoming.value
    )
    decision = _classify(state, incoming, before, bool(corrected))
    return _replan(state, incoming, corrected, decision)


def _split_tail(state: StreamState, instant: Instant) -> tuple[StreamState | None, StreamState]:
    """(what cannot change, the tail) for a statement newer than all of ``state``'s, if the
    split saves work; else (None, state)."""
    if len(state.versions) < 2 or instant <= max(s.valid_from for s in state.statements):
        return None, state
    start = state.versions[-1].valid_from
    prefix = StreamState(
        tuple(s for s in state.statements if s.valid_from < start), state.versions[:-1]
    )
    return prefix, state.tail()


def plan_withdrawal(
    state: StreamState, withdrawn: Mapping[int, Reason], decision: Decision
) -> StreamPlan:
    """Plan retiring believed statements (by seq) in record time, e.g. a withdrawn mistake."""
    if not state.complete:
        raise InvalidOperationError("withdrawals need the complete stream state")
    retire = tuple((s, withdrawn[s.seq]) for s in state.statements if s.seq in withdrawn)
    if not retire:
        return StreamPlan(Decision.DUPLICATE, after=state)
    return _replan(state, None, retire, decision)


def _is_duplicate(state: StreamState, incoming: Statement) -> bool:
    for s in state.statements:
        if s.valid_from != incoming.valid_from or s.value != incoming.value:
            continue
        if incoming.value is None:  # a retraction at the same time says the same thing
            return True
        if s.valid_to == incoming.valid_to and s.text_key == incoming.text_key:
            return True
    return False


def _classify(
    state: StreamState, incoming: Statement, before: Version | None, corrects: bool
) -> Decision:
    if incoming.value is None:
        return Decision.RETRACTED
    if corrects:
        return Decision.CORRECTED
    if before is not None and before.value == incoming.value:
        return Decision.REINFORCED
    if state.statements and incoming.valid_from < min(s.valid_from for s in state.statements):
        return Decision.BACKFILLED
    return Decision.SUPERSEDED if before is not None else Decision.NOVEL


def _replan(
    state: StreamState,
    incoming: Statement | None,
    retire_statements: tuple[tuple[Statement, Reason], ...],
    decision: Decision,
) -> StreamPlan:
    retired_seqs = {s.seq for s, _ in retire_statements}
    statements = tuple(s for s in state.statements if s.seq not in retired_seqs)
    if incoming is not None:
        statements += (incoming,)
    derived = derive_versions(statements)
    old = {v.identity(): v for v in state.versions}
    new = {v.identity(): v for v in derived}
    kept = [old[key] for key in new if key in old]
    added = tuple(v for key, v in new.items() if key not in old)
    cause = incoming.fact_id if incoming is not None else retire_statements[0][0].fact_id
    retire_versions = tuple(
        (v, _retire_reason(v, derived, retired_seqs, retire_statements, cause))
        for key, v in old.items()
        if key not in new
    )
    versions = tuple(sorted(kept + list(added), key=lambda v: v.valid_from))
    after = StreamState(statements, versions, complete=state.complete, start=state.start)
    return StreamPlan(decision, incoming, retire_statements, retire_versions, added, after)


def _retire_reason(
    version: Version,
    derived: tuple[Version, ...],
    retired_seqs: set[int],
    retire_statements: tuple[tuple[Statement, Reason], ...],
    cause: str,
) -> Reason:
    if any(v.fact_id == version.fact_id for v in derived):
        return Reason(ReasonKind.REVISED, cause, RULE_REVISION)
    if version.head_seq in retired_seqs:
        return next(reason for s, reason in retire_statements if s.seq == version.head_seq)
    into = next((v for v in derived if v.contains(version.valid_from)), None)
    return Reason(ReasonKind.MERGED, into.fact_id if into else cause, RULE_MERGE)
