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

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import groupby

from shared_core.clock import OPEN, Instant
from shared_core.errors import NothingToRetractError
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

    def identity(self) -> tuple[object, ...]:
        """Everything that makes two versions the same record."""
        return (self.fact_id, self.head_seq, self.value, self.valid_from, self.valid_to, self.end)

    def contains(self, instant: Instant) -> bool:
        """Whether ``instant`` lies in the half-open valid interval."""
        return self.valid_from <= instant < self.valid_to


@dataclass(frozen=True, slots=True)
class StreamState:
    """The believed statements of a stream and the version records derived from them."""

    statements: tuple[Statement, ...] = ()
    versions: tuple[Version, ...] = ()

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


@dataclass(frozen=True, slots=True)
class _Piece:
    start: Instant
    end: Instant
    value: str | None
    cause: Statement  # the statement that starts this piece, or whose valid_to opens a gap
    is_gap: bool  # True for the "no value" stretch after an explicit valid_to


def derive_versions(statements: Iterable[Statement]) -> tuple[Version, ...]:
    """The versions of one stream, in valid-time order, from its believed statements."""
    ordered = sorted(statements, key=lambda s: (s.valid_from, s.seq))
    winners = [list(group)[-1] for _, group in groupby(ordered, key=lambda s: s.valid_from)]
    pieces = _pieces(winners)
    runs = _runs(pieces)
    starts = [s.valid_from for s in ordered]
    heads: list[Statement] = []
    for start, end, value, _ in runs:
        lo, hi = bisect_right(starts, start - 1), bisect_right(starts, end - 1)
        supporters = [s for s in ordered[lo:hi] if s.value == value]
        heads.append(min(supporters, key=lambda s: s.seq))
    versions = []
    for index, ((start, end, value, following), head) in enumerate(zip(runs, heads, strict=True)):
        next_head = heads[index + 1] if index + 1 < len(runs) else None
        versions.append(
            Version(head.fact_id, head.seq, value, start, end, _end_reason(following, next_head))
        )
    return tuple(versions)


def _pieces(winners: list[Statement]) -> list[_Piece]:
    pieces: list[_Piece] = []
    for index, winner in enumerate(winners):
        following = winners[index + 1].valid_from if index + 1 < len(winners) else OPEN
        end = following if winner.valid_to is None else min(following, winner.valid_to)
        pieces.append(_Piece(winner.valid_from, end, winner.value, winner, is_gap=False))
        if end < following:
            pieces.append(_Piece(end, following, None, winner, is_gap=True))
    return pieces


def _runs(pieces: list[_Piece]) -> list[tuple[Instant, Instant, str, _Piece | None]]:
    """Maximal contiguous runs of one non-empty value, each with the piece that ends it."""
    runs: list[tuple[Instant, Instant, str, _Piece | None]] = []
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        if piece.value is None:
            index += 1
            continue
        end = piece.end
        index += 1
        while index < len(pieces) and pieces[index].value == piece.value:
            end = pieces[index].end
            index += 1
        following = pieces[index] if index < len(pieces) else None
        runs.append((piece.start, end, piece.value, following))
    return runs


def _end_reason(following: _Piece | None, next_head: Statement | None) -> Reason | None:
    if following is None:
        return None
    if following.is_gap:
        return Reason(ReasonKind.EXPIRED, following.cause.fact_id, RULE_VALID_TO)
    if following.value is None:
        return Reason(ReasonKind.RETRACTED, following.cause.fact_id, RULE_RETRACTION)
    assert next_head is not None
    return Reason(ReasonKind.SUPERSEDED, next_head.fact_id, RULE_SUPERSESSION)


def plan_statement(state: StreamState, incoming: Statement) -> StreamPlan:
    """Plan a new statement (an assertion, or a retraction when ``incoming.value`` is None).

    Identical believed statement: duplicate. Same ``valid_from`` with another value: the old
    statement is retired as corrected. Otherwise the versions are re-derived and the decision
    says what happened at ``incoming.valid_from``.
    """
    if _is_duplicate(state, incoming):
        return StreamPlan(Decision.DUPLICATE, after=state)
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


def plan_withdrawal(
    state: StreamState, withdrawn: Mapping[int, Reason], decision: Decision
) -> StreamPlan:
    """Plan retiring believed statements (by seq) in record time, e.g. a withdrawn mistake."""
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
    after = StreamState(statements, tuple(sorted(kept + list(added), key=lambda v: v.valid_from)))
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
