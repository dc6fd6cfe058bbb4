"""Prose supersession: closing a believed prose statement because a later one contradicts it.

Keyed facts are superseded by the key rule; prose (a statement without subject / relation /
object) is its own stream and nothing supersedes it on its own. A judge (for instance a trained
cross-encoder, see ``shared_core.judging.pairwise``) may decide that one prose statement makes
another no longer true; this module records that decision in the ledger.

An edge is stored as a *retraction-kind statement* on the earlier-valid statement's stream, at
the later-valid statement's ``valid_from``, carrying its own ending reason
(``Reason(SUPERSEDED, by=<later id>, rule=<detector>, score=<score>)``). The stream is then
re-derived by the ordinary rule (:mod:`shared_core.supersession`), so the change is an ordinary
version change: the open version is retired as revised and a closed one is recorded, the change
feed carries both, and ``as_of`` an earlier time still shows the statement.

Choices, so that a judge can call this blindly:

- Direction follows valid time, whatever the caller calls older or newer: the earlier-valid
  statement is closed at the later-valid one's ``valid_from`` (a late-arriving old statement
  is closed by the stored newer one). Equal ``valid_from``: nothing to order, nothing happens.
- Nothing happens (decision DUPLICATE) when the earlier statement is not valid at that time
  (already closed before, or it starts there), or when either statement is retired.
- Two keyed statements of one subject and different keys (two claims of one speaker, say:
  see :mod:`shared_core.judging.claims`) may be joined by an edge: the earlier-valid one's
  version of its key is closed the same way. A keyed statement with a prose one, two of one
  key (the key rule orders those), two of different subjects, retraction records and
  statements of different namespaces are refused (InvalidOperationError); an unknown id is
  FactNotFoundError.
- Undo: ``unretire(<closed id>)`` or ``unretire(<edge statement id>)`` withdraws the edge and
  reopens the statement. Retiring the *newer* statement does **not** reopen the older one: the
  edge is a recorded judgement of its own, which stays until it is undone explicitly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from shared_core.clock import OPEN
from shared_core.errors import FactNotFoundError, InvalidInputError, InvalidOperationError
from shared_core.facts import (
    Decision,
    Fact,
    Reason,
    ReasonKind,
    metadata_to_json,
    new_fact_id,
    normalize_text,
)
from shared_core.ledger.batch import Batch, Outcome, combine
from shared_core.ledger.records import KIND_RETRACTION, StatementRow
from shared_core.ledger.results import WriteResult
from shared_core.supersession import RULE_UNDO, Version


@dataclass(frozen=True, slots=True)
class ProseSupersession:
    """A judged edge: ``newer`` makes ``older`` no longer true, according to ``rule``.

    ``older``/``newer`` are prose fact ids (of the same write batch or already stored);
    whichever is earlier in valid time is the one closed (see the module doc). ``rule`` is the
    detector's name (recorded in the reason), ``score`` its confidence, if it has one.
    """

    older: str
    newer: str
    rule: str
    score: float | None = None

    def __post_init__(self) -> None:
        for name in ("older", "newer", "rule"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InvalidInputError(name, f"is {value!r}", "pass a non-empty string")
        if self.older == self.newer:
            raise InvalidInputError(
                "newer", "is the same statement as older", "a statement cannot supersede itself"
            )
        score: object = self.score
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise InvalidInputError("score", f"is {score!r}", "pass a float or None")
            if not math.isfinite(float(score)):
                raise InvalidInputError("score", f"is {score!r}", "pass a finite float or None")
            object.__setattr__(self, "score", float(score))


@dataclass(frozen=True, slots=True)
class Edge:
    """What applying one supersession did, and to which statements."""

    statement_id: str  # the id of the retraction-kind record (stored only if it changed things)
    outcome: Outcome
    earlier: str | None = None  # the statement closed (or that would have been)
    later: str | None = None  # the statement that closed it


def check_supersessions(supersessions: Iterable[object]) -> tuple[ProseSupersession, ...]:
    """The edges of a ``write_many`` call, each checked to be a ProseSupersession."""
    if isinstance(supersessions, ProseSupersession | str | bytes):
        raise InvalidInputError(
            "supersessions", "is not a sequence of edges", "pass a list of ProseSupersession"
        )
    edges: list[ProseSupersession] = []
    for position, edge in enumerate(supersessions):
        if not isinstance(edge, ProseSupersession):
            raise InvalidInputError(
                f"supersessions[{position}]",
                f"expected a ProseSupersession, got {type(edge).__name__}",
                "build one with ProseSupersession(older=..., newer=..., rule=...)",
            )
        edges.append(edge)
    return tuple(edges)


def supersede(batch: Batch, edge: ProseSupersession, statement_id: str | None = None) -> Edge:
    """Close the earlier-valid of the two statements at the later one's ``valid_from``."""
    statement_id = statement_id or new_fact_id()
    older_rows = _judged_statement(batch, edge.older)
    newer_rows = _judged_statement(batch, edge.newer)
    _check_pair(edge, older_rows, newer_rows)
    first, second = _believed(older_rows), _believed(newer_rows)
    if first is None or second is None:  # one of them is retired: nothing to judge
        return Edge(statement_id, Outcome(Decision.DUPLICATE))
    earlier, later = (first, second) if first.valid_from <= second.valid_from else (second, first)
    at = later.valid_from
    version = batch.stream(earlier.key_id, earlier.stream).version_at(at)
    if at <= earlier.valid_from or version is None:
        return Edge(statement_id, Outcome(Decision.DUPLICATE), earlier.fact_id, later.fact_id)
    text = f"superseded by {later.fact_id}"
    row = StatementRow(
        seq=batch.take_seq(),
        fact_id=statement_id,
        namespace=earlier.namespace,
        key_id=earlier.key_id,
        stream=earlier.stream,
        subject=earlier.subject,
        relation=earlier.relation,
        object=None,
        value=None,
        kind=KIND_RETRACTION,
        text=text,
        text_key=normalize_text(text),
        valid_from=at,
        valid_to=None,
        recorded_at=batch.record_time(None),
        retired_at=OPEN,
        retire_reason=None,
        metadata=metadata_to_json({}),
        end_reason=Reason(ReasonKind.SUPERSEDED, later.fact_id, edge.rule, edge.score),
    )
    outcome = combine([batch.apply_statement(row)], Decision.SUPERSEDED)
    return Edge(statement_id, outcome, earlier.fact_id, later.fact_id)


def apply_to_batch(
    batch: Batch,
    facts: Sequence[Fact],
    results: list[WriteResult],
    edges: Sequence[ProseSupersession],
) -> list[WriteResult]:
    """Apply the edges of a ``write_many`` after its facts, in the same transaction.

    An edge naming a fact of this batch that was not written (a duplicate) is skipped. Each
    closing shows in the ``closed`` of the later statement's result when that statement is in
    the batch (else of the earlier one's); every result's ``fact`` is shown as it ends up.
    """
    written: dict[str, int] = {}
    for position, (fact, result) in enumerate(zip(facts, results, strict=True)):
        if result.decision is not Decision.DUPLICATE:
            written.setdefault(fact.id, position)
    in_batch = {fact.id for fact in facts}
    applied = [
        supersede(batch, edge)
        for edge in edges
        if all(i in written or i not in in_batch for i in (edge.older, edge.newer))
    ]
    # Results are built after every edge, so versions a later edge replaced are left out.
    closing = [
        (edge, batch.result(edge.outcome, edge.statement_id))
        for edge in applied
        if edge.outcome.decision is not Decision.DUPLICATE
    ]
    merged = list(results)
    for edge, result in closing:
        target = edge.later if edge.later in written else edge.earlier
        if target in written:
            position = written[target]
            closed = tuple(dict.fromkeys(merged[position].closed + result.closed))
            merged[position] = replace(merged[position], closed=closed)
    latest = {fact.id: fact for _, result in closing for fact in result.closed}
    return [
        replace(r, fact=latest[r.fact.id]) if r.fact is not None and r.fact.id in latest else r
        for r in merged
    ]


def closed_by_edge(batch: Batch, row: StatementRow, version: Version) -> bool:
    """Whether a judged edge (not the key rule) closed ``version`` of ``row``'s stream."""
    state = batch.stream(row.key_id, row.stream)
    return any(s.value is None and s.valid_from == version.valid_to for s in state.statements)


def undo(batch: Batch, row: StatementRow, version: Version) -> Outcome:
    """Withdraw the edge(s) that closed ``version`` (whose statement is ``row``)."""
    state = batch.stream(row.key_id, row.stream)
    edges = [
        batch.head(s.seq)
        for s in state.statements
        if s.value is None and s.valid_from == version.valid_to
    ]
    reason = Reason(ReasonKind.UNDONE, row.fact_id, RULE_UNDO)
    outcome = batch.withdraw(edges, reason, Decision.RESTORED)
    restored = batch.stream(row.key_id, row.stream).version_at(row.valid_from)
    return combine([outcome], Decision.RESTORED, fact=restored)


def _judged_statement(batch: Batch, fact_id: str) -> list[StatementRow]:
    """The rows of statement ``fact_id`` (retired ones too), or an error."""
    rows = batch.statements_of(fact_id)
    if not rows:
        raise FactNotFoundError(fact_id)
    if rows[0].kind == KIND_RETRACTION:
        raise InvalidOperationError(
            f"{fact_id!r} is a supersession record, not a statement; pass statement ids"
        )
    return rows


def _check_pair(
    edge: ProseSupersession, first: list[StatementRow], second: list[StatementRow]
) -> None:
    """InvalidOperationError unless both statements are prose, or keyed statements of one
    subject and different keys, in one namespace."""
    one, two = first[0], second[0]
    if one.namespace != two.namespace:
        raise InvalidOperationError(
            f"{edge.older!r} and {edge.newer!r} are in different namespaces; "
            "namespaces never see each other"
        )
    if one.key_id is None and two.key_id is None:
        return
    if one.key_id is not None and two.key_id is not None:
        if one.subject != two.subject:
            raise InvalidOperationError(
                f"{edge.older!r} and {edge.newer!r} are about different subjects "
                f"({one.subject!r}, {two.subject!r}); an edge never crosses subjects"
            )
        if one.key_id != two.key_id:
            return
    keyed = one if one.key_id is not None else two
    raise InvalidOperationError(
        f"fact {keyed.fact_id!r} is keyed ({keyed.subject} / {keyed.relation}): keyed facts are "
        "superseded by the key rule; write a fact with the same key and the new object"
    )


def _believed(rows: list[StatementRow]) -> StatementRow | None:
    believed = [row for row in rows if row.believed]
    return believed[0] if believed else None
