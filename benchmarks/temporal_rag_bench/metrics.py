"""Scoring retrieved chunks against questions, and the aggregates the report shows.

Per question: *hit* (a gold answer is stated by a retrieved chunk about the question's entity
and family, or, when scoring by evidence, an evidence chunk id was retrieved), *leak* (a stale
answer is stated), *clean* (hit and no leak), *complete* (every gold answer, or every evidence
id, retrieved: the MANY questions' measure). Per method and cell: the rates with seeded
bootstrap 95% intervals, shadows removed per query, latency p50/p95. Also static retention
against plain top-k, the conflict detector's precision/recall against the chunks' ground truth,
and the entity bags of the bag-of-facts mode. Pure: standard library only.
"""

from __future__ import annotations

import bisect
import math
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from shared_core.facts import Cardinality
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    Question,
    QuestionKind,
    Retrieved,
    normalize_answer,
    states,
)

ALL = "all"  # the cell holding every question


def about(chunk: Chunk, question: Question) -> bool:
    """Whether ``chunk`` may answer ``question``: same entity and family where both are known
    (another person's old city is not a leak)."""
    if question.entity is not None and chunk.entity not in (None, question.entity):
        return False
    return question.family is None or chunk.family in (None, question.family)


def _stated(chunks: Sequence[Chunk], question: Question, answer: str) -> bool:
    return any(about(chunk, question) and states(chunk, answer) for chunk in chunks)


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """How one method did on one question."""

    question_id: str
    cell: str
    kind: QuestionKind
    hit: bool
    leak: bool
    complete: bool
    shadows: int = 0
    seconds: float = 0.0

    @property
    def clean(self) -> bool:
        return self.hit and not self.leak

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "kind": self.kind.value, "clean": self.clean}


def score_question(
    question: Question, retrieved: Retrieved, *, k: int | None = None, by_evidence: bool = False
) -> QuestionScore:
    """Score the first ``k`` retrieved chunks (all when None); ``by_evidence``: hit and
    complete by evidence chunk id (LoCoMo), leak still by stale answers."""
    chunks = retrieved.chunks if k is None else retrieved.chunks[:k]
    if by_evidence:
        ids = {chunk.id for chunk in chunks}
        hit = any(i in ids for i in question.evidence)
        complete = bool(question.evidence) and all(i in ids for i in question.evidence)
    else:
        found = [_stated(chunks, question, answer) for answer in question.gold]
        hit, complete = any(found), bool(found) and all(found)
    return QuestionScore(
        question_id=question.id,
        cell=question.cell,
        kind=question.kind,
        hit=hit,
        leak=any(_stated(chunks, question, answer) for answer in question.stale),
        complete=complete,
        shadows=retrieved.shadows,
        seconds=retrieved.seconds,
    )


def score_all(
    dataset: Dataset, answers: dict[str, Retrieved], *, k: int | None = None
) -> list[QuestionScore]:
    """Score every question of ``dataset`` that ``answers`` (question id -> Retrieved) holds."""
    return [
        score_question(q, answers[q.id], k=k, by_evidence=dataset.score_by_evidence)
        for q in dataset.questions
        if q.id in answers
    ]


@dataclass(frozen=True, slots=True)
class Interval:
    """A rate and its bootstrap confidence interval."""

    estimate: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0.0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _binomial_cdf(n: int, p: float) -> list[float]:
    """P(X <= j) for X ~ Binomial(n, p), j = 0..n, computed in log space."""
    if p <= 0.0 or p >= 1.0:
        return [1.0 if (p <= 0.0 or j == n) else 0.0 for j in range(n + 1)]
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    total, cdf = 0.0, []
    for j in range(n + 1):
        total += math.exp(
            log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q
        )
        cdf.append(total)
    return cdf


def bootstrap(
    values: Sequence[bool] | Sequence[float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """The mean of ``values`` with a seeded percentile-bootstrap interval. For 0/1 values a
    resample's sum is Binomial(n, mean): one draw per resample, so fast at any n."""
    n = len(values)
    if n == 0:
        return Interval(0.0, 0.0, 0.0, 0)
    numbers = [float(v) for v in values]
    mean = sum(numbers) / n
    rng = random.Random(seed)
    if all(v in (0.0, 1.0) for v in numbers):
        cdf = _binomial_cdf(n, mean)
        means = [min(bisect.bisect_left(cdf, rng.random()), n) / n for _ in range(resamples)]
    else:
        means = [sum(rng.choices(numbers, k=n)) / n for _ in range(resamples)]
    tail = (1.0 - confidence) / 2
    low, high = percentile(means, tail), percentile(means, 1.0 - tail)
    return Interval(mean, min(low, mean), max(high, mean), n)


def _seed(seed: int, *parts: str) -> int:
    """A stable seed per (seed, method, cell, metric): str hashes vary per process."""
    return zlib.crc32("|".join((str(seed), *parts)).encode())


@dataclass(frozen=True, slots=True)
class CellResult:
    """One method on one cell: rates with intervals, shadows per query, read latency."""

    method: str
    cell: str
    n: int
    hit: Interval
    leak: Interval
    clean: Interval
    complete: float
    shadows_per_query: float
    latency_p50: float
    latency_p95: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def aggregate(
    method: str, cell: str, scores: Sequence[QuestionScore], *, resamples: int = 1000, seed: int = 0
) -> CellResult:
    """The aggregate of ``scores`` (already restricted to ``cell``)."""

    def interval(metric: str, values: list[bool]) -> Interval:
        return bootstrap(values, resamples=resamples, seed=_seed(seed, method, cell, metric))

    n = len(scores)
    seconds = [s.seconds for s in scores]
    return CellResult(
        method=method,
        cell=cell,
        n=n,
        hit=interval("hit", [s.hit for s in scores]),
        leak=interval("leak", [s.leak for s in scores]),
        clean=interval("clean", [s.clean for s in scores]),
        complete=sum(s.complete for s in scores) / n if n else 0.0,
        shadows_per_query=sum(s.shadows for s in scores) / n if n else 0.0,
        latency_p50=percentile(seconds, 0.50),
        latency_p95=percentile(seconds, 0.95),
    )


def by_cell(scores: Iterable[QuestionScore]) -> dict[str, list[QuestionScore]]:
    """Scores grouped by cell, cells in order of first appearance."""
    groups: dict[str, list[QuestionScore]] = {}
    for score in scores:
        groups.setdefault(score.cell, []).append(score)
    return groups


def aggregate_cells(
    method: str, scores: Sequence[QuestionScore], *, resamples: int = 1000, seed: int = 0
) -> tuple[CellResult, ...]:
    """One result per cell (order of first appearance), then one for :data:`ALL`."""
    results = [
        aggregate(method, cell, group, resamples=resamples, seed=seed)
        for cell, group in by_cell(scores).items()
    ]
    results.append(aggregate(method, ALL, scores, resamples=resamples, seed=seed))
    return tuple(results)


@dataclass(frozen=True, slots=True)
class MethodSummary:
    """The headline figures of one method (None where the dataset has no such question):
    current-hit/stale-leak/clean over CURRENT questions, static hit over STATIC ones, as-of
    accuracy (clean) over AS_OF ones."""

    method: str
    n: int
    current_hit: Interval | None
    stale_leak: Interval | None
    clean: Interval | None
    static_hit: Interval | None
    as_of_accuracy: Interval | None
    shadows_per_query: float
    latency_p50: float
    latency_p95: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(
    method: str, scores: Sequence[QuestionScore], *, resamples: int = 1000, seed: int = 0
) -> MethodSummary:
    """The headline figures of ``scores`` (one method's scores on one dataset)."""

    def rate(kind: QuestionKind, metric: str) -> Interval | None:
        values = [bool(getattr(s, metric)) for s in scores if s.kind is kind]
        if not values:
            return None
        return bootstrap(values, resamples=resamples, seed=_seed(seed, method, kind, metric))

    n = len(scores)
    seconds = [s.seconds for s in scores]
    return MethodSummary(
        method=method,
        n=n,
        current_hit=rate(QuestionKind.CURRENT, "hit"),
        stale_leak=rate(QuestionKind.CURRENT, "leak"),
        clean=rate(QuestionKind.CURRENT, "clean"),
        static_hit=rate(QuestionKind.STATIC, "hit"),
        as_of_accuracy=rate(QuestionKind.AS_OF, "clean"),
        shadows_per_query=sum(s.shadows for s in scores) / n if n else 0.0,
        latency_p50=percentile(seconds, 0.50),
        latency_p95=percentile(seconds, 0.95),
    )


@dataclass(frozen=True, slots=True)
class Retention:
    """Static retention of a method against a baseline (plain top-k) on the same STATIC
    questions: the hit rates, their ratio (None when the baseline hits none) and their
    difference in percentage points."""

    method: str
    baseline: str
    n: int
    rate: float
    baseline_rate: float
    ratio: float | None
    difference_points: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def static_retention(
    method: str,
    scores: Sequence[QuestionScore],
    baseline: str,
    baseline_scores: Sequence[QuestionScore],
) -> Retention:
    """Hit rates on the STATIC questions both score lists hold (paired by question id)."""
    mine = {s.question_id: s.hit for s in scores if s.kind is QuestionKind.STATIC}
    theirs = {s.question_id: s.hit for s in baseline_scores if s.kind is QuestionKind.STATIC}
    shared = [i for i in mine if i in theirs]
    n = len(shared)
    rate = sum(mine[i] for i in shared) / n if n else 0.0
    base = sum(theirs[i] for i in shared) / n if n else 0.0
    return Retention(
        method=method,
        baseline=baseline,
        n=n,
        rate=rate,
        baseline_rate=base,
        ratio=rate / base if base else None,
        difference_points=100.0 * (rate - base),
    )


def entity_bags(dataset: Dataset) -> dict[str, list[Chunk]]:
    """Every chunk about each entity, in ingestion order: the bag-of-facts mode retrieves an
    entity's whole bag (k = all of them) to isolate Phi_T from retrieval."""
    bags: dict[str, list[Chunk]] = {}
    for chunk in sorted(dataset.chunks, key=lambda c: c.recorded_order):
        if chunk.entity is not None:
            bags.setdefault(chunk.entity, []).append(chunk)
    return bags


def is_conflict(older: Chunk, newer: Chunk, cardinality: Cardinality = Cardinality.ONE) -> bool:
    """Ground truth: same entity and family, different value, strictly newer timestamp, and a
    relation of cardinality ONE (the newer then supersedes the older)."""
    return (
        cardinality is Cardinality.ONE
        and older.kind is not ChunkKind.DISTRACTOR
        and older.entity is not None
        and older.family is not None
        and older.value is not None
        and newer.value is not None
        and (older.entity, older.family) == (newer.entity, newer.family)
        and normalize_answer(older.value) != normalize_answer(newer.value)
        and older.timestamp < newer.timestamp
    )


def true_conflicts(dataset: Dataset) -> frozenset[tuple[str, str]]:
    """Every (older id, newer id) pair of the dataset that :func:`is_conflict` holds for
    (distractors have no value, so never conflict)."""
    groups: dict[tuple[str, str], list[Chunk]] = {}
    for chunk in dataset.chunks:
        if chunk.entity is not None and chunk.family is not None and chunk.value is not None:
            groups.setdefault((chunk.entity, chunk.family), []).append(chunk)
    pairs: set[tuple[str, str]] = set()
    for (_, family), group in groups.items():
        if dataset.cardinalities.get(family, Cardinality.ONE) is not Cardinality.ONE:
            continue
        group.sort(key=lambda c: c.timestamp)
        values = [normalize_answer(c.value or "") for c in group]
        for j, newer in enumerate(group):
            pairs.update(
                (older.id, newer.id)
                for older, value in zip(group[:j], values[:j], strict=True)
                if value != values[j] and older.timestamp < newer.timestamp
            )
    return frozenset(pairs)


@dataclass(frozen=True, slots=True)
class DetectorScore:
    """A conflict detector against ground truth: precision = true reported / reported, recall
    = true reported / expected (None when the denominator is 0)."""

    reported: int
    expected: int
    true_positives: int
    precision: float | None
    recall: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def detector_scores(
    dataset: Dataset,
    reported: Iterable[tuple[str, str]],
    *,
    examined: Iterable[tuple[str, str]] | None = None,
    ordered: bool = False,
) -> DetectorScore:
    """Score a detector's reported (older id, newer id) pairs against :func:`true_conflicts`.

    ``examined``: the pairs the detector was shown (e.g. every pair inside each retrieved set);
    recall then counts only true pairs among them (None: every true pair of the dataset, as in
    the bag-of-facts mode). ``ordered=False`` matches pairs in either orientation (ordering by
    time is Phi_T's job); ``True`` requires (older, newer).
    """

    def key(pair: tuple[str, str]) -> object:
        return pair if ordered else frozenset(pair)

    pairs = true_conflicts(dataset)
    if examined is not None:
        shown = {frozenset(pair) for pair in examined}
        expected = {key(pair) for pair in pairs if frozenset(pair) in shown}
    else:
        expected = {key(pair) for pair in pairs}
    truth = {key(pair) for pair in pairs}
    found = {key(pair) for pair in reported if pair[0] != pair[1]}
    hits = len(found & truth)
    return DetectorScore(
        reported=len(found),
        expected=len(expected),
        true_positives=hits,
        precision=hits / len(found) if found else None,
        recall=len(found & expected) / len(expected) if expected else None,
    )
