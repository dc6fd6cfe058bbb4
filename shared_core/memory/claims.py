"""Claims: prose statements that say the same thing, judged at write time.

A prose statement the :class:`ClaimJudge` can place becomes a *claim statement*: a keyed fact
whose subject is the statement's subject (:func:`~shared_core.memory.subjects.statement_subject`),
whose relation is the single-valued attribute it states (the frame head's label, e.g.
``home_city``) and whose object names the claim. From there the ordinary key rule does the
rest, exactly as for keyed facts: restatements of one claim reinforce one version (a search
returns it once), a new claim of the same key closes the one before it at its ``valid_from``
(every statement of it at once), a late-arriving older statement slots in before, and
``history``, ``explain``, ``as_of``, ``unretire`` work unchanged.

For each new prose statement (in valid-time order within a batch):

1. **Structure first.** No subject, or no attribute (an event, a feeling, a plan, a value of a
   multi-valued attribute, an unsure frame): it stays plain prose. Plain prose never ends
   anything and nothing ends it, whatever a score would say.
2. The versions of its key valid at its ``valid_from`` or starting after it (the nearest), and
   the batch's earlier statements of the key, are judged against it in one scorer call per
   batch (pairs a decision needs beyond those are scored when it asks): ``restates`` (P >=
   ``restates_threshold``) joins that claim (same object);
   ``ends`` (P >= ``ends_threshold``) against the version it falls in starts a new claim, which
   the key rule lets close it; neither is sure: it stays plain prose (a missed change is
   better than a retired fact that still holds).
3. A key with no version yet starts a claim without a scorer call.

The decision is recorded on the statement's metadata (``claim_verdict``: ``new``, ``restates``
or ``ends``; ``claim_rule``; ``claim_score``; ``claim_of``: the version judged against), and
the ledger keeps it like any other statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from shared_core.clock import OPEN, Instant, to_instant
from shared_core.detectors.frames import Frame, FrameHead
from shared_core.detectors.kappa import KappaScorer, Verdict
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, normalize_text
from shared_core.index.base import Vector
from shared_core.ledger.store import LedgerStore
from shared_core.memory.subjects import statement_subject

NEW, RESTATES, ENDS = "new", "restates", "ends"
CANDIDATES = 3
"""At most this many stored versions of a key are judged against a new statement."""


class VerdictScorer(Protocol):
    """Scores (older, newer) pairs: ends, restates, neither (e.g. a KappaScorer)."""

    def verdict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


class FrameReader(Protocol):
    """Names the single-valued attribute each statement vector states (e.g. a FrameHead)."""

    def frames(self, vectors: Sequence[Sequence[float]]) -> list[Frame | None]: ...


@dataclass(frozen=True, slots=True)
class ClaimJudge:
    """How TemporalMemory judges new prose at write time (see the module doc).

    ``frames`` reads statement vectors: the memory's own, or, when ``frame_embedder`` is given
    (a memory embedding with another model), vectors that embedder makes for the prose being
    judged. ``name`` is recorded as the rule; thresholds are in (0, 1].
    """

    scorer: VerdictScorer
    frames: FrameReader
    name: str
    ends_threshold: float
    restates_threshold: float
    frame_embedder: Embedder | None = None

    def __post_init__(self) -> None:
        for field, part, method in (
            ("scorer", self.scorer, "verdict_scores"),
            ("frames", self.frames, "frames"),
        ):
            if not callable(getattr(part, method, None)):
                raise InvalidInputError(
                    field, f"is a {type(part).__name__} without {method}", f"pass a {method} reader"
                )
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInputError("name", f"is {self.name!r}", "pass the judge's name")
        for field in ("ends_threshold", "restates_threshold"):
            value = getattr(self, field)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not 0.0 < float(value) <= 1.0:
                raise InvalidInputError(field, f"is {value!r}", "pass a number in (0, 1]")
            object.__setattr__(self, field, float(value))


def check_prose_judge(judge: object, embedder: Embedder) -> None:
    """InvalidInputError unless ``judge`` is a ClaimJudge (whose frames read vectors of
    ``embedder``), a ProseJudge or None."""
    from shared_core.memory.prose_judge import ProseJudge

    if judge is None or isinstance(judge, ProseJudge):
        return
    if not isinstance(judge, ClaimJudge):
        raise InvalidInputError(
            "prose_judge",
            f"is a {type(judge).__name__}",
            "pass claim_judge(), a ClaimJudge, a ProseJudge or None",
        )
    wanted = getattr(judge.frames, "embedder", None)
    reading = judge.frame_embedder if judge.frame_embedder is not None else embedder
    if wanted is not None and wanted != reading.name:
        raise InvalidInputError(
            "prose_judge",
            f"reads {wanted} vectors but gets {reading.name} vectors",
            f"pass claim_judge(frame_embedder=...) with a {wanted} embedder, or prose_judge=None",
        )


@dataclass(frozen=True, slots=True)
class _Placed:
    """A new prose statement with a subject and an attribute: a claim candidate."""

    index: int  # position in the batch
    fact: Fact
    subject: str
    attribute: str
    valid_from: Instant

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.fact.namespace, self.subject, self.attribute)


@dataclass(frozen=True, slots=True)
class _Known:
    """A claim a new statement may restate or end: a stored version or a decided batch item."""

    id: str
    text: str
    object: str
    valid_from: Instant
    valid_to: Instant


Pair = tuple[str, str]


def place_claims(
    judge: ClaimJudge,
    facts: Sequence[Fact],
    vectors: Mapping[str, Vector],
    *,
    ledger: LedgerStore,
    now: Instant,
) -> list[Fact]:
    """``facts`` with every prose statement the judge places made a claim statement (new
    Fact values; the inputs are not changed). ``vectors`` maps texts to the memory's vectors."""
    placed = _placed(judge, facts, vectors, now)
    if not placed:
        return list(facts)
    stored = {key: _stored(ledger, key) for key in dict.fromkeys(p.key for p in placed)}
    verdicts = _Verdicts(judge.scorer)
    verdicts.prefetch(pair for item in placed for pair in _pairs(item, stored[item.key], placed))
    out = list(facts)
    decided: dict[tuple[str, str, str], list[_Known]] = {}
    for item in sorted(placed, key=lambda p: (p.valid_from, p.index)):
        known = sorted([*stored[item.key], *decided.get(item.key, [])], key=_start)
        claim = _decide(judge, item, known, verdicts)
        if claim is not None:
            out[item.index] = claim
            decided.setdefault(item.key, []).append(_known_of(claim, item.valid_from))
    return out


class _Verdicts:
    """The scorer's verdicts by pair: the likely pairs of a batch in one call up front, any
    other a decision turns out to need scored when it is asked for (decisions depend on
    earlier ones, so which pairs are needed is only known while deciding)."""

    def __init__(self, scorer: VerdictScorer) -> None:
        self._scorer = scorer
        self._known: dict[Pair, Verdict] = {}

    def prefetch(self, pairs: Iterable[Pair]) -> None:
        asked = [pair for pair in dict.fromkeys(pairs) if pair not in self._known]
        if asked:
            self._known.update(zip(asked, self._scorer.verdict_scores(asked), strict=True))

    def __getitem__(self, pair: Pair) -> Verdict:
        if pair not in self._known:
            self.prefetch([pair])
        return self._known[pair]


def _placed(
    judge: ClaimJudge, facts: Sequence[Fact], vectors: Mapping[str, Vector], now: Instant
) -> list[_Placed]:
    prose = [
        (index, fact, subject)
        for index, fact in enumerate(facts)
        if fact.key is None and (subject := statement_subject(fact.text)) is not None
    ]
    if not prose:
        return []
    texts = [fact.text for _, fact, _ in prose]
    if judge.frame_embedder is not None:
        frames = judge.frames.frames(judge.frame_embedder.embed_documents(texts))
    else:
        frames = judge.frames.frames([vectors[text] for text in texts])
    return [
        _Placed(index, fact, subject, frame.attribute, _valid_from(fact, now))
        for (index, fact, subject), frame in zip(prose, frames, strict=True)
        if frame is not None
    ]


def _valid_from(fact: Fact, now: Instant) -> Instant:
    return now if fact.valid_from is None else to_instant(fact.valid_from, "valid_from")


def _stored(ledger: LedgerStore, key: tuple[str, str, str]) -> list[_Known]:
    namespace, subject, attribute = key
    return [
        _Known(
            fact.id,
            fact.text,
            str(fact.object),
            to_instant(fact.valid_from, "valid_from") if fact.valid_from else 0,
            to_instant(fact.valid_to, "valid_to") if fact.valid_to else OPEN,
        )
        for fact in ledger.history(subject, attribute, namespace=namespace)
        if fact.retired_at is None and fact.object is not None
    ]


def _start(known: _Known) -> Instant:
    return known.valid_from


def _around(item: _Placed, known: Sequence[_Known]) -> tuple[_Known | None, _Known | None]:
    """The claim the statement falls in (the latest starting at or before it) and the first
    claim starting after it."""
    before = [k for k in known if k.valid_from <= item.valid_from]
    after = [k for k in known if k.valid_from > item.valid_from]
    return (before[-1] if before else None), (after[0] if after else None)


def _judged(item: _Placed, known: Sequence[_Known]) -> list[_Known]:
    """The claims a statement is judged against: the one it falls in, the next one, and the
    latest others (so a value said again after a change rejoins its claim)."""
    falls_in, after = _around(item, known)
    chosen = [k for k in (falls_in, after) if k is not None]
    for other in reversed(known):
        if len(chosen) >= CANDIDATES:
            break
        if other not in chosen:
            chosen.append(other)
    return chosen


def _pair(known: _Known, item: _Placed) -> Pair:
    """(earlier text, later text) of a claim and a statement."""
    if known.valid_from <= item.valid_from:
        return (known.text, item.fact.text)
    return (item.fact.text, known.text)


def _pairs(item: _Placed, stored: Sequence[_Known], batch: Sequence[_Placed]) -> list[Pair]:
    """The pairs the statement will most likely need: against the claims it is judged
    against, were the batch's latest earlier items of its key all to become claims (the
    decisions say which do; :class:`_Verdicts` scores any other pair they need)."""
    earlier = [
        _Known(p.fact.id, p.fact.text, p.fact.text, p.valid_from, OPEN)
        for p in batch
        if p.key == item.key and p.index != item.index and p.valid_from <= item.valid_from
    ]
    earlier = sorted(earlier, key=_start)[-CANDIDATES:]
    return [
        _pair(known, item)
        for known in _judged(item, sorted([*stored, *earlier], key=_start))
        if normalize_text(known.text) != normalize_text(item.fact.text)
    ]


def _decide(
    judge: ClaimJudge, item: _Placed, known: Sequence[_Known], verdicts: _Verdicts
) -> Fact | None:
    """The claim statement ``item`` becomes, or None (it stays plain prose)."""
    if not known:
        return _claim(judge, item, item.fact.text, NEW, None, None)
    best: tuple[float, _Known] | None = None
    for other in _judged(item, known):
        if normalize_text(other.text) == normalize_text(item.fact.text):
            return _claim(judge, item, other.object, RESTATES, 1.0, other.id)
        verdict = verdicts[_pair(other, item)]
        if verdict.restates >= judge.restates_threshold and (
            best is None or verdict.restates > best[0]
        ):
            best = (verdict.restates, other)
    if best is not None:
        return _claim(judge, item, best[1].object, RESTATES, best[0], best[1].id)
    falls_in, after = _around(item, known)
    ended = falls_in if falls_in is not None else after
    if ended is None:
        return None
    ends = verdicts[_pair(ended, item)].ends
    if ends >= judge.ends_threshold:
        return _claim(judge, item, item.fact.text, ENDS, ends, ended.id)
    return None


def _claim(
    judge: ClaimJudge,
    item: _Placed,
    claim: str,
    verdict: str,
    score: float | None,
    of: str | None,
) -> Fact:
    decision: dict[str, str | float] = {"claim_verdict": verdict, "claim_rule": judge.name}
    if score is not None:
        decision["claim_score"] = round(score, 4)
    if of is not None:
        decision["claim_of"] = of
    return replace(
        item.fact,
        subject=item.subject,
        relation=item.attribute,
        object=claim,
        metadata={**item.fact.metadata, **decision},
    )


def _known_of(claim: Fact, valid_from: Instant) -> _Known:
    return _Known(claim.id, claim.text, str(claim.object), valid_from, OPEN)


def claim_judge(
    *,
    scorer: KappaScorer | None = None,
    frames: FrameHead | None = None,
    frame_embedder: Embedder | None = None,
) -> ClaimJudge:
    """The shipped claim judge: the frame head for structure, kappa for the verdicts, at the
    thresholds their cards chose on held-out and dev data (a kappa card without a restates
    threshold never restates). ``frame_embedder``: for a memory that embeds with another model
    than the frame head reads (see :class:`ClaimJudge`)."""
    scorer = KappaScorer() if scorer is None else scorer
    frames = FrameHead() if frames is None else frames
    return ClaimJudge(
        scorer=scorer,
        frames=frames,
        name=f"{scorer.card.name}+{frames.card.name}",
        ends_threshold=scorer.card.threshold,
        restates_threshold=scorer.card.restates_threshold or 1.0,
        frame_embedder=frame_embedder,
    )


def shipped_claim_judge(embedder: Embedder | None) -> ClaimJudge:
    """:func:`claim_judge` for a memory embedding with ``embedder`` (None: the default MiniLM):
    the frame head reads the memory's vectors when they are its own model's, else its own."""
    frames = FrameHead()
    if embedder is None or embedder.name == frames.embedder:
        return claim_judge(frames=frames)
    from shared_core.embedders.minilm import MiniLMEmbedder

    return claim_judge(frames=frames, frame_embedder=MiniLMEmbedder())
