"""kappa for Phi_T at plain-RAG cost: only pairs about one subject and one attribute are scored.

:class:`FramedConflictDetector` is an NLI-style detector (a :class:`PairScorer`, e.g. the
shipped kappa) behind a pure pair rule, :func:`comparable`: two candidates are compared only
when they share a namespace, a speaker (when a speaker field is named) and a subject, and their
frame profiles agree on the attribute they state (:meth:`FrameProfile.agreement` at the
threshold), an attribute whose value may change (neither reads as one of the frame card's
``static_labels``). Everything else is never scored, so a prefilter can only keep chunks,
never drop one that the unfiltered detector would keep.

What it needs of a statement (its :class:`Reading`: subject and frame profile) is read once per
text and kept (:class:`ReadingStore`), at write time when the caller :meth:`remembers
<FramedConflictDetector.remember>` its statements with their vectors; a read of a text it has
not seen reads it then, from ``vectors`` (e.g. ``memory.vectors``), or leaves it uncompared.
Pair verdicts are kept too (:class:`VerdictStore`; a verdict never changes for fixed weights),
so a read scores only pairs never scored before, all in one scorer call. :meth:`precompute`
scores at write time each statement against its nearest same-subject, same-attribute
neighbours, so that most reads find every verdict they need already kept and call no model.
Those verdicts only inform read-time Phi_T: nothing is closed or retired by them.

``on_unscored="keep"`` makes a read never call the scorer: a pair without a kept verdict is
treated as no conflict (a change missed, never a fact dropped).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from shared_core.detectors.framed_store import (
    Digest,
    InMemoryReadings,
    InMemoryVerdicts,
    PairDigest,
    Reading,
    ReadingStore,
    VerdictStore,
    text_digest,
)
from shared_core.detectors.frames import FrameProfile
from shared_core.detectors.nli import PairScorer, checked_scores
from shared_core.errors import InvalidInputError
from shared_core.phi_t import Candidate, Conflict, ordered_pairs

Vector = Sequence[float]
VectorsOf = Callable[[Sequence[str]], Mapping[str, Vector]]
"""Candidate ids -> their stored vectors (ids it lacks are absent), e.g. ``memory.vectors``."""
Unscored = Literal["score", "keep"]
PRECOMPUTE_BATCH = 512
"""Pairs per scorer call in :meth:`FramedConflictDetector.precompute`."""


class ProfileReader(Protocol):
    """Reads statement vectors (e.g. a FrameHead): one :class:`FrameProfile` per vector."""

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]: ...


def comparable(
    older: Candidate,
    newer: Candidate,
    first: Reading | None,
    second: Reading | None,
    *,
    agreement_threshold: float,
    speaker_field: str | None = None,
) -> bool:
    """Whether Phi_T may ask a scorer about (older, newer): same namespace, same speaker (when
    ``speaker_field`` names one in the metadata; a speaker on one side only differs), same
    subject (a keyed candidate's key subject, else its reading's), both profiles read and
    agreeing at ``agreement_threshold``, and neither read as an attribute whose value never
    changes (``FrameProfile.unchanging``: a birthplace is not dropped for a newer city, as the
    write-time claim judge never ends one). A side without a reading is never compared."""
    if first is None or second is None or older.namespace != newer.namespace:
        return False
    if speaker_field is not None and older.metadata.get(speaker_field) != newer.metadata.get(
        speaker_field
    ):
        return False
    subject = _subject(older, first)
    if subject is None or subject != _subject(newer, second):
        return False
    if first.profile is None or second.profile is None:
        return False
    if first.profile.unchanging or second.profile.unchanging:
        return False
    return first.profile.agreement(second.profile) >= agreement_threshold


def _subject(candidate: Candidate, reading: Reading) -> str | None:
    return candidate.key.subject if candidate.key is not None else reading.subject


@dataclass(frozen=True, slots=True)
class FramedCounts:
    """One read's (or the totals') pairs: ``considered`` (every ordered pair Phi_T could act
    on), ``compared`` (passing :func:`comparable`), ``cached`` (of those, with a kept verdict),
    ``scored`` (sent to the scorer) and ``calls`` (scorer calls)."""

    considered: int = 0
    compared: int = 0
    cached: int = 0
    scored: int = 0
    calls: int = 0

    def __add__(self, other: FramedCounts) -> FramedCounts:
        return FramedCounts(
            self.considered + other.considered,
            self.compared + other.compared,
            self.cached + other.cached,
            self.scored + other.scored,
            self.calls + other.calls,
        )


class FramedConflictDetector:
    """Phi_T's kappa over same-subject, same-attribute pairs only (see the module doc).

    Args:
        scorer: scores (older, newer) text pairs: P(the newer ends the older).
        frames: reads statement vectors into frame profiles (e.g. the shipped FrameHead).
        threshold: the score from which a pair is a conflict, in (0, 1].
        agreement_threshold: the frame agreement from which two statements share an
            attribute, in (0, 1].
        subject_of: a statement's subject (default the library's subject rule).
        vectors: for texts never remembered, their vectors by candidate id at read time
            (e.g. ``memory.vectors``); without it such candidates are not compared.
        speaker_field: the metadata field naming who wrote a statement, if any.
        readings: where readings are kept (default in memory).
        verdicts: where pair verdicts are kept (default in memory).
        on_unscored: ``"score"`` scores pairs without a kept verdict (one call per read);
            ``"keep"`` treats them as no conflict and never calls the scorer at read time.
        name: labels its verdicts.

    Raises:
        InvalidInputError: a part lacks its method or an option is out of range.
    """

    def __init__(
        self,
        scorer: PairScorer,
        *,
        frames: ProfileReader,
        threshold: float,
        agreement_threshold: float,
        subject_of: Callable[[str], str | None] | None = None,
        vectors: VectorsOf | None = None,
        speaker_field: str | None = None,
        readings: ReadingStore | None = None,
        verdicts: VerdictStore | None = None,
        on_unscored: Unscored = "score",
        name: str = "framed-kappa",
    ) -> None:
        for field, part, method in (
            ("scorer", scorer, "contradiction_scores"),
            ("frames", frames, "profiles"),
        ):
            if not callable(getattr(part, method, None)):
                raise InvalidInputError(
                    field, f"is a {type(part).__name__} without {method}", f"pass a {method} reader"
                )
        for field, value in (
            ("threshold", threshold),
            ("agreement_threshold", agreement_threshold),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise InvalidInputError(field, f"is {value!r}", "pass a number in (0, 1]")
        for field, given in (("subject_of", subject_of), ("vectors", vectors)):
            if given is not None and not callable(given):
                raise InvalidInputError(field, "is not callable", "pass a function or None")
        if on_unscored not in ("score", "keep"):
            raise InvalidInputError("on_unscored", f"is {on_unscored!r}", 'pass "score" or "keep"')
        if not isinstance(name, str) or not name:
            raise InvalidInputError("name", f"is {name!r}", "pass a non-empty label")
        self.scorer = scorer
        self.frames = frames
        self.threshold = float(threshold)
        self.agreement_threshold = float(agreement_threshold)
        self._subject_of = subject_of
        self._vectors = vectors
        self.speaker_field = speaker_field
        self.readings: ReadingStore = InMemoryReadings() if readings is None else readings
        self.verdicts: VerdictStore = InMemoryVerdicts() if verdicts is None else verdicts
        self.on_unscored: Unscored = on_unscored
        self.name = name
        self._counts_lock = threading.Lock()
        self.totals = FramedCounts()
        self.last_counts = FramedCounts()

    def __repr__(self) -> str:
        return f"FramedConflictDetector({self.scorer!r}, threshold={self.threshold})"

    # ---------------------------------------------------------------- write time
    def remember(self, texts: Sequence[str], vectors: Sequence[Vector]) -> None:
        """Read statements now (their subject and frame profile, from ``vectors``, one per
        text, of the frame head's embedder), so that reads of them parse and profile nothing."""
        if len(texts) != len(vectors):
            raise InvalidInputError(
                "vectors", f"has {len(vectors)} entries for {len(texts)} texts", "pass one per text"
            )
        digests = [text_digest(text) for text in texts]
        known = self.readings.get_many(digests)
        fresh = {d: i for i, d in enumerate(digests) if d not in known}
        if not fresh:
            return
        rows = list(fresh.values())
        profiles = self.frames.profiles([vectors[i] for i in rows])
        subject_of = self._subject_rule()
        self.readings.put_many(
            {
                digests[i]: Reading(subject_of(texts[i]), profile)
                for i, profile in zip(rows, profiles, strict=True)
            }
        )

    def precompute(
        self,
        candidates: Sequence[Candidate],
        vectors: Sequence[Vector],
        *,
        neighbours: int = 4,
    ) -> int:
        """Write-time verdicts: each dated candidate against its ``neighbours`` nearest (by
        the cosine of ``vectors``, one per candidate) among those :func:`comparable` with it,
        scored and kept for later reads; returns how many pairs were scored. The candidates
        are remembered first. Nothing is closed by it: the verdicts only serve Phi_T."""
        import numpy as np

        if isinstance(neighbours, bool) or not isinstance(neighbours, int) or neighbours < 1:
            raise InvalidInputError("neighbours", f"is {neighbours!r}", "pass a positive integer")
        pool = list(candidates)
        self.remember([c.text for c in pool], vectors)
        readings = self.readings.get_many([text_digest(c.text) for c in pool])
        groups: dict[tuple[str, object, str], list[int]] = {}
        for i, c in enumerate(pool):
            reading = readings.get(text_digest(c.text))
            subject = None if reading is None else _subject(c, reading)
            if c.timestamp is not None and subject is not None:
                speaker = c.metadata.get(self.speaker_field) if self.speaker_field else None
                groups.setdefault((c.namespace, speaker, subject), []).append(i)
        matrix = np.asarray(vectors, dtype=np.float64)
        if matrix.size:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms > 0.0, norms, 1.0)
        wanted: dict[PairDigest, tuple[str, str]] = {}
        for members in groups.values():
            cosines = matrix[members] @ matrix[members].T
            for a, i in enumerate(members):
                near = 0
                for b in np.argsort(-cosines[a]):
                    j = members[int(b)]
                    if near >= neighbours:
                        break
                    older, newer = (i, j) if pool[j].is_newer_than(pool[i]) else (j, i)
                    if i == j or not pool[newer].is_newer_than(pool[older]):
                        continue
                    first = readings.get(text_digest(pool[older].text))
                    second = readings.get(text_digest(pool[newer].text))
                    if comparable(
                        pool[older],
                        pool[newer],
                        first,
                        second,
                        agreement_threshold=self.agreement_threshold,
                        speaker_field=self.speaker_field,
                    ):
                        near += 1
                        texts = (pool[older].text, pool[newer].text)
                        wanted[(text_digest(texts[0]), text_digest(texts[1]))] = texts
        kept = self.verdicts.get_many(list(wanted))
        missing = [(key, texts) for key, texts in wanted.items() if key not in kept]
        for start in range(0, len(missing), PRECOMPUTE_BATCH):
            batch = missing[start : start + PRECOMPUTE_BATCH]
            scores = checked_scores(self.scorer, [texts for _, texts in batch], name=self.name)
            self.verdicts.put_many({key: s for (key, _), s in zip(batch, scores, strict=True)})
        return len(missing)

    # ---------------------------------------------------------------- read time
    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """The conflicts among ``candidates`` (``query`` is not used)."""
        plan = self._plan(tuple(candidates))
        if plan.asked:
            plan.fill(checked_scores(self.scorer, plan.asked, name=self.name))
        return self._finish(plan)

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """:meth:`find_conflicts` for async callers: the scorer runs in a worker thread."""
        plan = await asyncio.to_thread(self._plan, tuple(candidates))
        if plan.asked:
            scores = await asyncio.to_thread(
                checked_scores, self.scorer, plan.asked, name=self.name
            )
            plan.fill(scores)
        return self._finish(plan)

    def reset_counts(self) -> None:
        with self._counts_lock:
            self.totals = FramedCounts()
            self.last_counts = FramedCounts()

    def _plan(self, pool: tuple[Candidate, ...]) -> _Plan:
        considered = ordered_pairs(pool)
        if not considered:
            return _Plan(pool, [], {}, [], [], FramedCounts())
        readings = self._readings_of(pool)
        pairs = [
            (i, j)
            for i, j in considered
            if comparable(
                pool[i],
                pool[j],
                readings[i],
                readings[j],
                agreement_threshold=self.agreement_threshold,
                speaker_field=self.speaker_field,
            )
        ]
        keys = [(text_digest(pool[i].text), text_digest(pool[j].text)) for i, j in pairs]
        known = self.verdicts.get_many(keys) if keys else {}
        unknown = list(dict.fromkeys(k for k in keys if k not in known))
        asked_keys = unknown if self.on_unscored == "score" else []
        texts = {text_digest(c.text): c.text for c in pool}
        asked = [(texts[a], texts[b]) for a, b in asked_keys]
        counts = FramedCounts(
            considered=len(considered),
            compared=len(pairs),
            cached=len(pairs) - sum(1 for k in keys if k not in known),
            scored=len(asked),
            calls=1 if asked else 0,
        )
        return _Plan(pool, pairs, known, asked_keys, asked, counts, store=self.verdicts)

    def _finish(self, plan: _Plan) -> list[Conflict]:
        with self._counts_lock:
            self.totals = self.totals + plan.counts
            self.last_counts = plan.counts
        found = []
        for older, newer in plan.pairs:
            key = (text_digest(plan.pool[older].text), text_digest(plan.pool[newer].text))
            score = plan.known.get(key)
            if score is not None and score >= self.threshold:
                found.append(Conflict(older, newer, self.name, score))
        return found

    def _readings_of(self, pool: Sequence[Candidate]) -> list[Reading | None]:
        """Each candidate's reading: kept, else read now from ``vectors`` (and kept), else
        None (a text never remembered and without a vector is not compared)."""
        digests: list[Digest] = [text_digest(c.text) for c in pool]
        kept = self.readings.get_many(digests)
        missing = [c for c, d in zip(pool, digests, strict=True) if d not in kept]
        if missing and self._vectors is not None:
            found = self._vectors([c.id for c in missing])
            have = [c for c in missing if c.id in found]
            if have:
                self.remember([c.text for c in have], [found[c.id] for c in have])
                kept.update(self.readings.get_many([text_digest(c.text) for c in have]))
        return [kept.get(d) for d in digests]

    def _subject_rule(self) -> Callable[[str], str | None]:
        if self._subject_of is not None:
            return self._subject_of
        from shared_core.judging.subjects import statement_subject  # the rule's word lists

        return statement_subject


@dataclass(slots=True)
class _Plan:
    """One read's pairs to compare, the verdicts already kept, and those to ask the scorer."""

    pool: tuple[Candidate, ...]
    pairs: list[tuple[int, int]]
    known: dict[PairDigest, float]
    asked_keys: list[PairDigest]
    asked: list[tuple[str, str]]
    counts: FramedCounts
    store: VerdictStore | None = None

    def fill(self, scores: Sequence[float]) -> None:
        """The scorer's answers for :attr:`asked`, kept in the plan and the store."""
        fresh = dict(zip(self.asked_keys, scores, strict=True))
        self.known.update(fresh)
        if self.store is not None:
            self.store.put_many(fresh)


def framed_kappa_detector(
    *,
    scorer: object | None = None,
    frames: ProfileReader | None = None,
    threshold: float | None = None,
    agreement_threshold: float | None = None,
    vectors: VectorsOf | None = None,
    speaker_field: str | None = None,
    on_unscored: Unscored = "score",
) -> FramedConflictDetector:
    """The shipped kappa and frame head behind the framed pair rule, at the cards' thresholds
    (kappa's dev-set threshold; the frame card's agreement threshold, else its threshold, as
    the write-time claim judge uses). Loads nothing until the first scored pair."""
    from shared_core.detectors.frames import FrameHead
    from shared_core.detectors.kappa import KappaScorer

    kappa = KappaScorer() if scorer is None else scorer
    if not isinstance(kappa, KappaScorer):
        raise InvalidInputError("scorer", f"is a {type(kappa).__name__}", "pass a KappaScorer")
    head = FrameHead() if frames is None else frames
    card = getattr(head, "card", None)
    agreement = agreement_threshold
    if agreement is None:
        if card is None:
            raise InvalidInputError(
                "agreement_threshold", "is not given", "pass it, or a FrameHead with a card"
            )
        agreement = card.agreement_threshold or card.threshold
    return FramedConflictDetector(
        kappa,
        frames=head,
        threshold=kappa.card.threshold if threshold is None else threshold,
        agreement_threshold=agreement,
        vectors=vectors,
        speaker_field=speaker_field,
        on_unscored=on_unscored,
        name=kappa.card.name,
    )
