"""Claims: prose statements that say the same thing, judged at write time.

A prose statement the :class:`ClaimJudge` can place becomes a *claim statement*: a keyed fact
whose subject is the statement's subject (:func:`~shared_core.judging.subjects.statement_subject`,
scoped to the statement's speaker by :func:`~shared_core.judging.base.scoped_subject`, so two
speakers' claims never meet; a chat statement that names no subject, "Just moved to Lisbon!",
or names its value first, "Priya is my manager now.", is its speaker's, and stays prose when
the write names no speaker),
whose relation names the claim's *slot* (one single-valued attribute of that subject: the frame
head's label, e.g. ``home_city``, for the first claim of a subject it frames confidently, else
``<label or "statement">_<8 hex of a digest of the statement's id>``) and whose object names the
claim (its first statement's text, or a digest of a text too long for a key:
:func:`claim_object`; a statement of any length is judged).
From there the ordinary key rule does the rest, exactly as for keyed facts: restatements of one
claim reinforce one version (a search returns it once), a new claim in the same slot closes the
one before it at its ``valid_from`` (every statement of it at once), a late-arriving older
statement slots in before, and ``history``, ``explain``, ``as_of``, ``unretire`` work
unchanged.

For each new prose statement (in valid-time order within a batch):

1. **Structure first.** No subject, or unlikely to state a single-valued attribute (the frame
   head's P(not "other") below ``state_threshold``: an event, a feeling, a plan, one value of a
   multi-valued attribute): it stays plain prose. Plain prose never ends anything and nothing
   ends it, whatever a score would say. One exception: a statement below the gate that repeats
   a claim it falls in (step 2's candidates), word for word or value for value, while the
   scorer does not say "ends", joins that claim (:func:`_rejoins`), so it closes with it.
2. The subject's claims (any slot) valid at the statement's ``valid_from``, valid now, or
   starting after it, and the batch's claims of the subject decided before it, are its
   candidates: per slot the version it falls in and the next one, of the slots whose statements
   likely state the same attribute (:meth:`FrameProfile.agreement` at ``agreement_threshold``;
   "same person, different news" never meets) and, of those, the :data:`CANDIDATES` nearest in
   meaning. The scorer judges each (earlier, later) pair, one call per round of the batch (a
   round holds each subject's next statement): ``restates`` (P >= ``restates_threshold``,
   unless each names a value the other does not: :func:`_conflict`) joins that claim (same
   slot, same object); else ``ends`` (P >= ``ends_threshold``) starts a
   new claim in that slot, which the key rule lets close the one before. When the scorer is
   sure of neither, the values the statements name decide
   (:func:`~shared_core.judging.subjects.named_values`): the same values restate the claim
   the statement falls in; a value it did not name ends it if the scorer finds "ends"
   likelier than "neither", or whatever the scorer says when the frame head reads one
   attribute as the likeliest for both (sure of it for one, or the two at least
   :data:`VALUES_AGREEMENT` alike), an attribute whose values do not add up (its name's
   words, ``cardinality_words.json``), and the statement says no "also": one attribute and
   a new value is the key rule itself (:func:`_values_decide`). Else the statement starts a
   claim in a slot of its own, which closes nothing.
3. A statement that restates or ends a claim also ends the claims of the subject's other
   slots it is judged against when the scorer says "ends" for them at ``ends_threshold``
   (the version it falls in; written as judged edges in the same transaction, see
   :mod:`shared_core.ledger.prose`): a change the scorer missed leaves a second slot of one
   attribute open, and the next change closes both.
4. A statement that ends a claim also ends its *siblings*: the claims of the subject's other
   slots naming exactly the ended claim's values, when the frame head finds them at least
   :data:`SIBLING_AGREEMENT` likely to state the statement's attribute and the scorer finds
   "ends" likelier than "neither" (one more scorer call for a round whose changes have
   siblings; :func:`_siblings`): one attribute said in phrasings the frame head reads less
   alike than the gate asks splits into several slots, and a change must close them all.

In none of these steps does a statement end a claim when the frame head reads either of them
as stating an attribute whose value never changes (the frame card's ``static_labels``, e.g.
``hometown``; :func:`_unchanging`), however sure the scorer is: two birthplaces are a
misreading (a move read as a birthplace), not a change. Such a statement may still restate.

The decision is recorded on the statement's metadata (``claim_verdict``: ``new``, ``restates``
or ``ends``; ``claim_rule``; ``claim_score``; ``claim_of``: the version judged against), and
the ledger keeps it like any other statement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from shared_core.clock import OPEN, Instant, from_instant, to_instant
from shared_core.detectors.frames import Frame, FrameHead, FrameProfile
from shared_core.detectors.kappa import KappaScorer, Verdict
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError
from shared_core.facts import MAX_NAME_CHARS, Fact, normalize_text
from shared_core.index.base import Vector, VectorIndex
from shared_core.judging.adding import adds_up, says_it_adds
from shared_core.judging.base import (
    SPEAKER_SEPARATOR,
    Judgement,
    WriteBatch,
    checked_number,
    scoped_subject,
)
from shared_core.judging.subjects import named_values, statement_subject
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.protocol import LedgerStore

NEW, RESTATES, ENDS = "new", "restates", "ends"
CANDIDATES = 4
"""At most this many slots of a subject (the nearest in meaning) are judged against a new
statement."""
SIBLING_AGREEMENT = 0.5
"""A claim in another slot naming exactly the values of a claim a change ends is ended with it
(:func:`_siblings`) when the frame head finds it at least this likely to state the same
attribute as the change, and the scorer leans to "ends"."""
VALUES_AGREEMENT = 0.95
"""The values alone end a claim (:func:`_values_decide`) only when the frame head is sure of
the attribute of one of the two statements, or finds them at least this likely to state the
same one: two statements it is unsure of met at 0.92 across attributes (a manager and a
project, a university and a job title)."""
CLAIM_DIGEST = "claim:"
"""The stem of a long claim's object (:func:`claim_object`)."""
STATEMENT_SLOT = "statement"
"""The slot name's stem for a claim the frame head does not name."""


class VerdictScorer(Protocol):
    """Scores (older, newer) pairs: ends, restates, neither (e.g. a KappaScorer)."""

    def verdict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


class FrameReader(Protocol):
    """Reads statement vectors (e.g. a FrameHead): a :class:`FrameProfile` per vector."""

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]: ...


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
    state_threshold: float = 0.5
    agreement_threshold: float = 0.7
    frame_embedder: Embedder | None = None

    def __post_init__(self) -> None:
        for field, part, method in (
            ("scorer", self.scorer, "verdict_scores"),
            ("frames", self.frames, "profiles"),
        ):
            if not callable(getattr(part, method, None)):
                raise InvalidInputError(
                    field, f"is a {type(part).__name__} without {method}", f"pass a {method} reader"
                )
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInputError("name", f"is {self.name!r}", "pass the judge's name")
        for field in (
            "ends_threshold",
            "restates_threshold",
            "state_threshold",
            "agreement_threshold",
        ):
            value = checked_number(field, getattr(self, field), 0.0, 1.0, low_open=True)
            object.__setattr__(self, field, value)

    def judge(self, batch: WriteBatch) -> Judgement:
        """The batch with every prose statement this judge places made a claim statement
        (:func:`place_claims`), keyed under its speaker's scoped subject."""
        if not batch.prose:
            return Judgement.unchanged(batch)
        placed = place_claims(
            self,
            batch.statements,
            batch.vectors,
            ledger=batch.ledger,
            index=batch.index,
            now=batch.now,
            speakers=batch.speakers,
        )
        return Judgement(
            statements=tuple((fact,) for fact in placed.facts), supersessions=placed.closings
        )


def check_prose_judge(judge: object, embedder: Embedder) -> None:
    """InvalidInputError if ``judge`` is a ClaimJudge whose frames read vectors of another
    embedder than the one it is given (``embedder``, or its own ``frame_embedder``)."""
    if not isinstance(judge, ClaimJudge):
        return
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
    """A new prose statement with a subject that likely states an attribute: a claim
    candidate, with what the frame head read in it."""

    index: int  # position in the batch
    fact: Fact
    subject: str
    profile: FrameProfile
    valid_from: Instant
    values: frozenset[str]  # the values it names (:func:`_values`)
    gated: bool  # below the state gate: it may only rejoin a claim it repeats (:func:`_rejoins`)

    @property
    def owner(self) -> tuple[str, str]:
        return (self.fact.namespace, self.subject)


@dataclass(frozen=True, slots=True)
class _Known:
    """A claim a new statement may restate or end: a stored version or a decided batch item."""

    id: str
    text: str
    slot: str
    object: str
    valid_from: Instant
    valid_to: Instant
    values: frozenset[str]  # the values it names (:func:`_values`)


Pair = tuple[str, str]
Owner = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Placed:
    """What :func:`place_claims` made of a batch: its statements (claims where placed) and
    the claims of other slots those statements also end (edges to write with them)."""

    facts: tuple[Fact, ...]
    closings: tuple[ProseSupersession, ...] = ()


def place_claims(
    judge: ClaimJudge,
    facts: Sequence[Fact],
    vectors: Mapping[str, Vector],
    *,
    ledger: LedgerStore,
    index: VectorIndex,
    now: Instant,
    speakers: Sequence[str | None] | None = None,
) -> Placed:
    """``facts`` with every prose statement the judge places made a claim statement (new
    Fact values; the inputs are not changed), and the edges closing the claims of other slots
    a statement also ends. ``vectors`` maps texts to the memory's vectors; ``index`` gives the
    stored claims' vectors; ``speakers`` (parallel to ``facts``) who wrote each: a
    statement's subject is scoped to its speaker (:func:`scoped_subject`), so claims of two
    speakers never meet."""
    who = list(speakers) if speakers is not None else [None] * len(facts)
    placed = _placed(judge, facts, vectors, now, who)
    if not placed:
        return Placed(tuple(facts))
    times: dict[Owner, set[Instant]] = {}
    for item in placed:
        times.setdefault(item.owner, set()).add(item.valid_from)
    stored = {owner: _stored(ledger, owner, sorted(at)) for owner, at in times.items()}
    near = _Readings(judge, vectors, placed, index, [k for ks in stored.values() for k in ks])
    known = {owner: list(claims) for owner, claims in stored.items()}  # + the batch's decided
    verdicts: dict[Pair, Verdict] = {}
    out = list(facts)
    closings: list[ProseSupersession] = []
    for wave in _waves(placed):
        judged = {item.index: _judged(judge, item, known[item.owner], near) for item in wave}
        for item in wave:
            if item.gated:
                judged[item.index] = [k for k in judged[item.index] if _repeats(item, k)]
        verdicts = _scored(
            judge.scorer,
            verdicts,
            [
                _pair(other, item)
                for item in wave
                for other in judged[item.index]
                if not _same_text(other, item)
            ],
        )
        decided: list[tuple[_Placed, Fact, list[tuple[float, _Known]]]] = []
        for item in wave:
            if item.gated:
                rejoined = _rejoins(judge, item, judged[item.index], verdicts)
                if rejoined is not None:
                    out[item.index] = rejoined
                continue  # plain prose that ends nothing, and nothing is judged against
            slots = {k.slot for k in known[item.owner]}
            claim = _decide(judge, item, judged[item.index], verdicts, slots, near)
            out[item.index] = claim
            ended = _also_ended(judge, item, claim, judged[item.index], verdicts, near)
            decided.append((item, claim, ended))
        siblings = {
            item.index: _siblings(item, claim, ended, judged[item.index], known[item.owner], near)
            for item, claim, ended in decided
        }  # one more scorer call for the round's changes, when any has a sibling
        verdicts = _scored(
            judge.scorer,
            verdicts,
            [_pair(k, item) for item, _, _ in decided for k in siblings[item.index]],
        )
        for item, claim, also in decided:
            ended = [*also, *_siblings_ended(item, siblings[item.index], verdicts)]
            closings.extend(
                ProseSupersession(older=k.id, newer=claim.id, rule=judge.name, score=score)
                for score, k in ended
            )
            gone = {k.id for _, k in ended}
            known[item.owner] = [
                replace(k, valid_to=item.valid_from) if k.id in gone else k
                for k in known[item.owner]
            ]
            known[item.owner].append(_known_of(claim, item))
    return Placed(tuple(out), tuple(closings))


def _also_ended(
    judge: ClaimJudge,
    item: _Placed,
    claim: Fact,
    judged: Sequence[_Known],
    verdicts: Mapping[Pair, Verdict],
    near: _Readings,
) -> list[tuple[float, _Known]]:
    """The claims of other slots than ``claim``'s that the statement also ends: the version
    of each that it falls in, when the scorer says "ends" at the judge's threshold and the
    statement names a value that claim does not (:func:`named_values`; "Dana found comfort in
    work" names none, and ends nothing beyond its own decision), neither read as unchanging
    (:func:`_unchanging`). One lost link of a chain left two slots of one attribute open; the
    next change closes both."""
    out: list[tuple[float, _Known]] = []
    for other in judged:
        if other.slot == claim.relation or not _falls_in(item, other):
            continue
        if not _new_value(item.values, other.values):
            continue  # no value of its own replaced: news of the subject, not a change
        if _unchanging(item, other, near):
            continue
        verdict = verdicts[_pair(other, item)]
        if verdict.ends >= judge.ends_threshold and verdict.ends > verdict.restates:
            out.append((verdict.ends, other))
    return out


def _siblings(
    item: _Placed,
    claim: Fact,
    ended: Sequence[tuple[float, _Known]],
    judged: Sequence[_Known],
    known: Sequence[_Known],
    near: _Readings,
) -> list[_Known]:
    """The claims of the subject's other slots that say what a claim the statement ends
    says: the same values (at least one) as that claim, in the version the statement falls
    in, that the frame head finds at least :data:`SIBLING_AGREEMENT` likely to state the
    statement's attribute, and the statement names a value they lack. One attribute said in
    several phrasings splits into several slots when the frame head reads the phrasings
    less alike than the agreement gate asks ("... resides in Helsinki", "Per the HR system,
    ... is based in Helsinki"); a change ended one of them and left the others current."""
    replaced = [k for _, k in ended]
    if claim.metadata.get("claim_verdict") == ENDS:
        replaced += [k for k in judged if k.id == claim.metadata.get("claim_of")]
    values = {k.values for k in replaced if k.values}
    if not values:
        return []
    taken = {k.id for k in replaced}
    return [
        k
        for k in known
        if k.slot != claim.relation
        and k.id not in taken
        and k.values in values
        and _falls_in(item, k)
        and _new_value(item.values, k.values)
        and not _unchanging(item, k, near)
        and near.agreement(k.text, item.fact.text) >= SIBLING_AGREEMENT
    ]


def _siblings_ended(
    item: _Placed, siblings: Sequence[_Known], verdicts: Mapping[Pair, Verdict]
) -> list[tuple[float, _Known]]:
    """The siblings (:func:`_siblings`) the statement ends: those for which the scorer finds
    "ends" likelier than "neither" (its score), as for a change the values decide."""
    out: list[tuple[float, _Known]] = []
    for sibling in siblings:
        verdict = verdicts[_pair(sibling, item)]
        if verdict.ends > verdict.neither:
            out.append((verdict.ends, sibling))
    return out


def _scored(
    scorer: VerdictScorer, verdicts: Mapping[Pair, Verdict], pairs: Sequence[Pair]
) -> dict[Pair, Verdict]:
    """``verdicts`` with the pairs it lacks scored, in one call."""
    asked = [pair for pair in dict.fromkeys(pairs) if pair not in verdicts]
    if not asked:
        return dict(verdicts)
    return {**verdicts, **dict(zip(asked, scorer.verdict_scores(asked), strict=True))}


def _waves(placed: Sequence[_Placed]) -> list[list[_Placed]]:
    """The statements in rounds: round i holds each subject's i-th statement in valid-time
    order. A decision depends only on its subject's earlier ones, so one scorer call serves a
    round, and only the pairs the decisions read are scored."""
    by_owner: dict[Owner, list[_Placed]] = {}
    for item in sorted(placed, key=lambda p: (p.valid_from, p.index)):
        by_owner.setdefault(item.owner, []).append(item)
    rounds = max(len(items) for items in by_owner.values())
    return [[items[i] for items in by_owner.values() if i < len(items)] for i in range(rounds)]


class _Readings:
    """Per statement text: its vector (the batch's, or the index's for stored claims) and its
    frame profile; cosines and attribute agreement between statements."""

    def __init__(
        self,
        judge: ClaimJudge,
        vectors: Mapping[str, Vector],
        placed: Sequence[_Placed],
        index: VectorIndex,
        stored: Sequence[_Known],
    ) -> None:
        import numpy as np

        by_text: dict[str, Vector] = dict(vectors)
        ids = list(dict.fromkeys(k.id for k in stored))
        found = index.vectors(ids) if ids else {}
        for known in stored:
            if known.id in found:
                by_text.setdefault(known.text, found[known.id])
        self._row = {text: row for row, text in enumerate(by_text)}
        matrix = np.asarray(list(by_text.values()), dtype=np.float64)
        if matrix.size:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms > 0.0, norms, 1.0)
        self._unit = matrix
        self._profiles = {p.fact.text: p.profile for p in placed}
        unread = list(
            dict.fromkeys(
                k.text
                for k in stored
                if k.text not in self._profiles and (judge.frame_embedder or k.text in by_text)
            )
        )  # a stored claim the index lags on is unread: it agrees with nothing, so is not judged
        self._profiles.update(zip(unread, _profiles(judge, unread, by_text), strict=True))

    def cosine(self, a: str, b: str) -> float:
        """The cosine of two statements' vectors; 0.0 when one is unknown (it ranks last)."""
        i, j = self._row.get(a), self._row.get(b)
        if i is None or j is None:
            return 0.0
        return float(self._unit[i] @ self._unit[j])

    def frame(self, text: str) -> Frame | None:
        """The attribute the frame head is sure a statement states (None when unread)."""
        profile = self.profile(text)
        return None if profile is None else profile.frame

    def profile(self, text: str) -> FrameProfile | None:
        """A statement's frame profile (None when unread)."""
        return self._profiles.get(text)

    def agreement(self, a: str, b: str) -> float:
        """How likely two statements state the same attribute (0.0 when one is unread)."""
        one, two = self._profiles.get(a), self._profiles.get(b)
        return 0.0 if one is None or two is None else one.agreement(two)


def _profiles(
    judge: ClaimJudge, texts: Sequence[str], vectors: Mapping[str, Vector]
) -> list[FrameProfile]:
    """The frame profiles of statements: from the memory's vectors, or from vectors the
    judge's ``frame_embedder`` makes when the frame head reads another model's."""
    if not texts:
        return []
    if judge.frame_embedder is not None:
        return judge.frames.profiles(judge.frame_embedder.embed_documents(list(texts)))
    return judge.frames.profiles([vectors[t] for t in texts])


def _placed(
    judge: ClaimJudge,
    facts: Sequence[Fact],
    vectors: Mapping[str, Vector],
    now: Instant,
    speakers: Sequence[str | None],
) -> list[_Placed]:
    prose = [
        (index, fact, scoped_subject(subject, speakers[index]))
        for index, fact in enumerate(facts)
        if fact.key is None
        and (subject := statement_subject(fact.text, writer=speakers[index] is not None))
        is not None
    ]
    profiles = _profiles(judge, [fact.text for _, fact, _ in prose], vectors)
    return [
        _Placed(
            index,
            fact,
            subject,
            profile,
            _valid_from(fact, now),
            _values(fact.text, subject),
            gated=profile.state < judge.state_threshold,
        )
        for (index, fact, subject), profile in zip(prose, profiles, strict=True)
    ]


def _valid_from(fact: Fact, now: Instant) -> Instant:
    return now if fact.valid_from is None else to_instant(fact.valid_from, "valid_from")


def _stored(ledger: LedgerStore, owner: Owner, times: Sequence[Instant]) -> list[_Known]:
    """The subject's claim versions valid at any of ``times`` or now, and the versions of
    their slots starting after the earliest of ``times`` (a late arrival falls before them)."""
    namespace, subject = owner
    found: dict[str, Fact] = {}
    for at in [*times, None]:
        valid_at = None if at is None else from_instant(at)
        for fact in ledger.as_of(valid_at=valid_at, namespace=namespace, subject=subject):
            if "claim_verdict" in fact.metadata and fact.object is not None:
                found.setdefault(fact.id, fact)
    out = [_known(fact, subject) for fact in found.values()]
    earliest = min(times)
    for slot in sorted({k.slot for k in out}):
        for fact in ledger.history(subject, slot, namespace=namespace):
            if fact.retired_at is None and fact.object is not None and fact.id not in found:
                known = _known(fact, subject)
                if known.valid_from > earliest:
                    found[fact.id] = fact
                    out.append(known)
    return out


def _known(fact: Fact, subject: str) -> _Known:
    return _Known(
        fact.id,
        fact.text,
        str(fact.relation),
        str(fact.object),
        to_instant(fact.valid_from, "valid_from") if fact.valid_from else 0,
        to_instant(fact.valid_to, "valid_to") if fact.valid_to else OPEN,
        _values(fact.text, subject),
    )


def _start(known: _Known) -> Instant:
    return known.valid_from


def _judged(
    judge: ClaimJudge, item: _Placed, known: Sequence[_Known], near: _Readings
) -> list[_Known]:
    """The claims a statement is judged against: per slot the version it falls in and the
    next one, of the slots whose versions likely state the same attribute (agreement at the
    judge's threshold), at most :data:`CANDIDATES` of them, the nearest in meaning."""
    by_slot: dict[str, list[_Known]] = {}
    for k in sorted(known, key=_start):
        by_slot.setdefault(k.slot, []).append(k)
    text = item.fact.text
    chosen: list[tuple[float, list[_Known]]] = []
    for versions in by_slot.values():
        before = [k for k in versions if k.valid_from <= item.valid_from][-1:]
        after = [k for k in versions if k.valid_from > item.valid_from][:1]
        picked = [
            k
            for k in [*(k for k in before if k.valid_to > item.valid_from), *after]
            if near.agreement(k.text, text) >= judge.agreement_threshold
        ]
        if picked:
            chosen.append((max(near.cosine(k.text, text) for k in picked), picked))
    chosen.sort(key=lambda c: -c[0])
    return [k for _, picked in chosen[:CANDIDATES] for k in picked]


def _pair(known: _Known, item: _Placed) -> Pair:
    """(earlier text, later text) of a claim and a statement."""
    if known.valid_from <= item.valid_from:
        return (known.text, item.fact.text)
    return (item.fact.text, known.text)


def _decide(
    judge: ClaimJudge,
    item: _Placed,
    judged: Sequence[_Known],
    verdicts: Mapping[Pair, Verdict],
    slots: set[str],
    near: _Readings,
) -> Fact:
    """The claim statement ``item`` becomes: it restates a claim, ends one, or starts one in
    a slot of its own. An "ends" needs evidence beside the score (:func:`_replaces`)."""
    restates: tuple[float, _Known] | None = None
    ends: tuple[float, _Known] | None = None
    for other in judged:
        if _same_text(other, item):
            return _claim(judge, item, other.slot, other.object, RESTATES, 1.0, other.id)
        verdict = verdicts[_pair(other, item)]
        if (
            verdict.restates >= judge.restates_threshold
            and (restates is None or verdict.restates > restates[0])
            and not _conflict(item.values, other.values)
        ):
            restates = (verdict.restates, other)
        if (
            verdict.ends >= judge.ends_threshold
            and (ends is None or verdict.ends > ends[0])
            and _replaces(item, other, near)
        ):
            ends = (verdict.ends, other)
    if restates is None and ends is None:
        restates, ends = _by_values(item, judged, verdicts, near)
    if restates is not None:
        score, other = restates
        return _claim(judge, item, other.slot, other.object, RESTATES, score, other.id)
    if ends is not None:
        score, other = ends
        return _claim(judge, item, other.slot, claim_object(item.fact.text), ENDS, score, other.id)
    slot = _new_slot(item, slots)
    return _claim(judge, item, slot, claim_object(item.fact.text), NEW, None, None)


def _repeats(item: _Placed, known: _Known) -> bool:
    """Whether a statement repeats a claim version it falls in: the same text, or exactly the
    same values (at least one)."""
    if not _falls_in(item, known):
        return False
    if _same_text(known, item):
        return True
    return bool(item.values) and item.values == known.values


def _rejoins(
    judge: ClaimJudge, item: _Placed, judged: Sequence[_Known], verdicts: Mapping[Pair, Verdict]
) -> Fact | None:
    """The claim a statement below the state gate restates, or None (it stays plain prose).
    Such a statement never ends anything; one that repeats a claim of the same attribute (the
    frame head's agreement) word for word or value for value, while the scorer does not say
    "ends", joins it, so it closes with it ("Chiara draws a salary from Cobalt Robotics." after
    "Chiara's employer is Cobalt Robotics.": else each stale restatement the head reads as
    news stays current for good)."""
    best: tuple[float, _Known] | None = None
    for known in judged:
        if _same_text(known, item):
            return _claim(judge, item, known.slot, known.object, RESTATES, 1.0, known.id)
        verdict = verdicts[_pair(known, item)]
        if verdict.ends >= judge.ends_threshold:
            continue
        score = 1.0 - verdict.ends
        if best is None or score > best[0]:
            best = (score, known)
    if best is None:
        return None
    score, known = best
    return _claim(judge, item, known.slot, known.object, RESTATES, score, known.id)


def _replaces(item: _Placed, other: _Known, near: _Readings) -> bool:
    """Whether a statement can replace a claim, beside the scorer's word: it names a value
    the claim does not (:func:`named_values`: "Denver" after "Lisbon"), or the frame head names
    one attribute for both ("staff engineer" after "release manager": titles are lower-case).
    News of a subject that names no value ("Dana found comfort in work") replaces nothing, and
    nothing replaces a reading of an attribute that never changes (:func:`_unchanging`)."""
    if _unchanging(item, other, near):
        return False
    if _new_value(item.values, other.values):
        return True
    mine, their_frame = item.profile.frame, near.frame(other.text)
    return mine is not None and their_frame is not None and mine.attribute == their_frame.attribute


def claim_object(text: str) -> str:
    """The object that names a new claim: the statement's text, or for a statement longer
    than a key's field may be (a chat message of several paragraphs) ``claim:`` and a digest
    of it, so the library never refuses a field it filled in itself."""
    if len(text) <= MAX_NAME_CHARS:
        return text
    return f"{CLAIM_DIGEST}{hashlib.blake2b(text.encode(), digest_size=16).hexdigest()}"


def _by_values(
    item: _Placed, judged: Sequence[_Known], verdicts: Mapping[Pair, Verdict], near: _Readings
) -> tuple[tuple[float, _Known] | None, tuple[float, _Known] | None]:
    """When the scorer is unsure: (restates, ends) read from the values the statements name
    (:func:`named_values`). A claim of the same attribute (every candidate agrees with the
    statement) naming exactly the same values is restated (score 1 - the scorer's ends); one
    whose values the statement does not all name ("Tom left, Priya is my manager now." after
    "My manager is Tom.": Priya is new) is ended (score: the scorer's ends) when the scorer
    finds "ends" likelier than "neither", or whatever the scorer says when the values decide
    (:func:`_values_decide`): one attribute, a new value, as the key rule reads keyed facts.
    A statement naming no value leaves both to the scorer."""
    if not item.values:
        return None, None
    same: list[tuple[float, _Known]] = []
    other: list[tuple[float, _Known]] = []
    for known in judged:
        if not _falls_in(item, known):
            continue  # only the version the statement falls in
        verdict = verdicts[_pair(known, item)]
        if known.values == item.values:
            same.append((1.0 - verdict.ends, known))
        elif (
            _new_value(item.values, known.values)
            and not _unchanging(item, known, near)
            and (verdict.ends > verdict.neither or _values_decide(item, known, near))
        ):
            other.append((verdict.ends, known))
    best = max(same, key=lambda s: s[0], default=None)
    if best is not None:
        return best, None
    return None, max(other, key=lambda s: s[0], default=None)


def _values_decide(item: _Placed, known: _Known, near: _Readings) -> bool:
    """Whether a new value ends a claim whatever the scorer says: the frame head reads one
    attribute as the likeliest for both, and is sure of it for one of them or finds them at
    least :data:`VALUES_AGREEMENT` alike (every candidate agrees at the gate), and same
    subject, one attribute and a new value is the key rule itself.
    kappa reads phrasings it never saw as "neither" ("... drives a Tesla Model 3" -> "...
    gets around in a Toyota Corolla"). Never for a reading that may hold several values at
    once: an attribute whose name says its values add up (``pet_name``: "James has a dog
    named Ned" beside "... a dog named Max"), or a statement that says it adds one ("also",
    "another"); the caller has excluded an attribute that never changes (:func:`_unchanging`)."""
    theirs = near.profile(known.text)
    attribute = item.profile.likeliest
    if theirs is None or attribute is None or attribute != theirs.likeliest:
        return False
    if (
        item.profile.frame is None
        and theirs.frame is None
        and near.agreement(known.text, item.fact.text) < VALUES_AGREEMENT
    ):
        return False  # "I'm under Tom." / "I'm busy with Borealis at work.": both unsure
    if adds_up(attribute):
        return False
    return not says_it_adds(item.fact.text)


def _unchanging(item: _Placed, known: _Known, near: _Readings) -> bool:
    """Whether the frame head reads the statement or the claim as stating an attribute whose
    value never changes (its likeliest is one of the frame card's ``static_labels``): two
    birthplaces are a misreading, not a move, so neither ends the other, however sure the
    scorer is ("Pablo came into the world in Ireland." is not ended by "Pablo is based in
    Marseille.", both read as ``hometown``). A claim with no profile is not such a reading."""
    theirs = near.profile(known.text)
    return item.profile.unchanging or (theirs is not None and theirs.unchanging)


def _values(text: str, subject: str) -> frozenset[str]:
    """The values a statement names, but the words of its subject's name ("dana" is no value)."""
    return named_values(text) - set(subject.rpartition(SPEAKER_SEPARATOR)[2].split())


def _new_value(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether a statement naming ``mine`` replaces a value of a claim naming ``theirs``: the
    claim names one and the statement one of its own ("Denver" after "Lisbon")."""
    return bool(theirs) and bool(mine - theirs)


def _conflict(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether two statements name values that cannot be one claim: each names one the other
    does not ("415-555-0111" and "415-555-0158"; not "Lisbon" and "Lisbon, close to Belem")."""
    return bool(mine - theirs) and bool(theirs - mine)


def _same_text(known: _Known, item: _Placed) -> bool:
    """Whether a statement says a claim's text again (the scorer never reads such a pair)."""
    return normalize_text(known.text) == normalize_text(item.fact.text)


def _falls_in(item: _Placed, known: _Known) -> bool:
    """Whether the statement's valid_from falls in the claim version's validity."""
    return known.valid_from <= item.valid_from < known.valid_to


def _new_slot(item: _Placed, taken: set[str]) -> str:
    """The frame head's label when the subject has no claim of it yet, else a slot named
    after the statement (a claim that ends nothing must not share a slot).

    The name carries a digest of the whole statement id, not a piece of the id: generated ids
    begin with the time they were made and a caller's ids often share a prefix, and two
    statements in one slot would let the key rule close one with the other."""
    label = None if item.profile.frame is None else item.profile.frame.attribute
    if label is not None and label not in taken:
        return label
    digest = hashlib.blake2b(item.fact.id.encode(), digest_size=16).hexdigest()
    short = f"{label or STATEMENT_SLOT}_{digest[:8]}"
    return short if short not in taken else f"{label or STATEMENT_SLOT}_{digest}"


def _claim(
    judge: ClaimJudge,
    item: _Placed,
    slot: str,
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
        relation=slot,
        object=claim,
        metadata={**item.fact.metadata, **decision},
    )


def _known_of(claim: Fact, item: _Placed) -> _Known:
    return _Known(
        claim.id,
        claim.text,
        str(claim.relation),
        str(claim.object),
        item.valid_from,
        OPEN,
        item.values,
    )


def claim_judge(
    *,
    scorer: KappaScorer | None = None,
    frames: FrameHead | None = None,
    frame_embedder: Embedder | None = None,
) -> ClaimJudge:
    """The shipped claim judge: the frame head for structure, kappa for the verdicts, at the
    thresholds their cards chose on held-out and dev data (the frame card's state and
    agreement thresholds, or its frame threshold for one it lacks) (a kappa card without a restates
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
        state_threshold=frames.card.state_threshold or frames.card.threshold,
        agreement_threshold=frames.card.agreement_threshold or frames.card.threshold,
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
