"""The retrieval methods the benchmark compares, all over one :class:`SharedStore`.

A method ingests a dataset (the shared store already holds every chunk's vector and a plain
Chroma collection of them) and answers questions with chunks in rank order. Every method sees
only what is visible at ``now`` (chunks with ``timestamp <= now``; for as-of questions ``now``
is the time asked about), the same query vector and the same candidates from Chroma.

The baselines here follow the published rules of the classes people use (the real classes run
too, through the adapters' entry points; see :mod:`temporal_rag_bench.registry`):

- ``plain``: the k nearest chunks.
- ``newest-first``: LlamaIndex ``FixedRecencyPostprocessor``: the ``fetch`` nearest, newest first.
- ``time-decay``: LangChain ``TimeWeightedVectorStoreRetriever``: similarity +
  ``(1 - decay_rate) ** hours_passed`` over the ``fetch`` nearest.
- ``emb-recency``: LlamaIndex ``EmbeddingRecencyPostprocessor``: newest first, dropping every
  older chunk whose cosine with a kept newer one exceeds ``cutoff``.
- ``multi-factor``: recency + relevance + usage + stability (the scoring GC-Mem ablates).

With ``buffer=N`` a method also unions the recency buffer (the N chunks ingested last, when
visible) into its candidates and keeps them beyond k, as GC-Mem's short-term memory does.
numpy is used through the shared store's matrices.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from temporal_rag_bench.model import Chunk, Dataset, Question, Retrieved
from temporal_rag_bench.shared_collection import SharedStore

FETCH_FACTOR = 4
"""Re-ranking methods re-rank the ``FETCH_FACTOR * k`` nearest candidates."""
HALF_LIFE_FRACTION = 0.1
"""Time-based scores use a half-life of this fraction of the dataset's time span."""
MULTI_FACTOR_WEIGHTS = {"relevance": 1.0, "recency": 0.5, "usage": 0.25, "stability": 0.25}
"""relevance = cosine; recency = 0.5 ** (age / half-life); usage = how many candidates restate
it (cosine >= RESTATED), over the most any candidate has; stability = the time span its
restatements cover, over the dataset's span. Relevance leads; recency may reorder close
candidates; usage and stability reward what was said often and long (the memory-strength
signals of forgetting-curve memories)."""
RESTATED = 0.9
EMB_RECENCY_CUTOFF = 0.7  # LlamaIndex's default similarity_cutoff


@runtime_checkable
class Method(Protocol):
    """A retrieval method under test. Optional attributes the runner reads when present:
    ``real_class`` (the framework class it runs, or None), ``description``, ``skip_reason
    (dataset) -> str | None``, ``bag(question, k, *, now) -> Retrieved`` (bag-of-facts mode),
    ``ingest_seconds`` (a build time to report instead of the ingest call's), ``close()``."""

    name: str

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None: ...

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved: ...


def span_seconds(dataset: Dataset) -> float:
    """The dataset's time span (first chunk to ``now``), at least one hour."""
    if not dataset.chunks:
        return 3600.0
    first = min(c.timestamp for c in dataset.chunks)
    return max((dataset.now - first).total_seconds(), 3600.0)


def half_life_hours(dataset: Dataset) -> float:
    """The half-life of the time-based scores on this dataset, in hours."""
    return span_seconds(dataset) * HALF_LIFE_FRACTION / 3600.0


def decay_rate_for(dataset: Dataset) -> float:
    """LangChain's ``decay_rate`` giving :func:`half_life_hours` (its default 0.01 per hour
    halves a score in 69 hours, which would make every chunk of a years-long timeline 0)."""
    return 1.0 - float(0.5 ** (1.0 / half_life_hours(dataset)))


def top_with_buffer(ranked: Sequence[int], buffered: Sequence[int], k: int) -> list[int]:
    """The first ``k`` ranked rows that are not buffered, and every buffered row (kept beyond
    k, in rank order): GC-Mem's union of retrieval and the short-term buffer."""
    keep = set(buffered)
    out: list[int] = []
    taken = 0
    for row in ranked:
        if row in keep:
            out.append(row)
        elif taken < k:
            out.append(row)
            taken += 1
    return out


class StoreMethod:
    """A method reading the shared Chroma collection: fetch, union the buffer, rank, cut."""

    family = "plain"
    description = "the k nearest chunks (cosine)"
    real_class: str | None = None
    fetch_factor = 1

    def __init__(self, *, buffer: int = 0) -> None:
        self.buffer = buffer
        self.name = self.family + ("+buffer" if buffer else "")
        self._shared: SharedStore | None = None
        self._dataset: Dataset | None = None

    @property
    def shared(self) -> SharedStore:
        if self._shared is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._shared

    @property
    def dataset(self) -> Dataset:
        if self._dataset is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._dataset

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        self._dataset = dataset
        self._shared = shared

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        speaker = question.speaker
        fetched = self.shared.fetch(question.asked, k * self.fetch_factor, now=now, speaker=speaker)
        recent = self.shared.recent(self.buffer, now=now, speaker=speaker)
        buffered = [r for r in recent if r not in fetched.rows]
        rows = [*fetched.rows, *buffered]
        vector = self.shared.query_vector(question.asked)
        scores = [*fetched.scores, *self.shared.similarities(buffered, vector)]
        ranked = self.rank(rows, scores, now=now)
        return self.retrieved(top_with_buffer(ranked, buffered, k))

    def bag(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        """Bag-of-facts mode: every visible chunk about the question's entity, unfiltered."""
        return self.retrieved(entity_rows(self.shared, question, now))

    def rank(self, rows: list[int], scores: list[float], *, now: datetime) -> list[int]:
        """The candidate rows in output order (plain: as retrieved)."""
        return rows

    def retrieved(self, rows: Sequence[int], shadows: int = 0) -> Retrieved:
        chunks: tuple[Chunk, ...] = tuple(self.shared.chunks[r] for r in rows)
        return Retrieved(chunks, shadows=shadows)


class PlainTopK(StoreMethod):
    family = "plain"


class NewestFirst(StoreMethod):
    family = "newest-first"
    description = "the 4k nearest, newest first (LlamaIndex FixedRecency-style)"
    fetch_factor = FETCH_FACTOR

    def rank(self, rows: list[int], scores: list[float], *, now: datetime) -> list[int]:
        stamps = self.shared.stamps
        return sorted(rows, key=lambda r: -stamps[r])  # stable: similarity breaks ties


class TimeDecay(StoreMethod):
    family = "time-decay"
    description = "similarity + (1 - decay_rate) ** hours (LangChain TimeWeighted-style)"
    fetch_factor = FETCH_FACTOR

    def rank(self, rows: list[int], scores: list[float], *, now: datetime) -> list[int]:
        rate = decay_rate_for(self.dataset)
        chunks = self.shared.chunks

        def combined(pair: tuple[int, float]) -> float:
            return pair[1] + float((1.0 - rate) ** hours_between(now, chunks[pair[0]].timestamp))

        return [
            row for row, _ in sorted(zip(rows, scores, strict=True), key=combined, reverse=True)
        ]


class EmbeddingRecency(StoreMethod):
    family = "emb-recency"
    description = "newest first, older near-duplicates (cosine > 0.7) dropped (LlamaIndex-style)"
    fetch_factor = FETCH_FACTOR
    cutoff = EMB_RECENCY_CUTOFF

    def rank(self, rows: list[int], scores: list[float], *, now: datetime) -> list[int]:
        stamps = self.shared.stamps
        ordered = sorted(rows, key=lambda r: -stamps[r])
        if not ordered:
            return []
        similar = self.shared.pairwise(ordered)
        dropped: set[int] = set()
        for i in range(len(ordered)):
            if i in dropped:
                continue
            for j in range(i + 1, len(ordered)):
                if j not in dropped and float(similar[i, j]) > self.cutoff:
                    dropped.add(j)
        return [row for i, row in enumerate(ordered) if i not in dropped]


class MultiFactor(StoreMethod):
    family = "multi-factor"
    description = "relevance + recency + usage + stability (GC-Mem's multi-factor scoring)"
    fetch_factor = FETCH_FACTOR

    def rank(self, rows: list[int], scores: list[float], *, now: datetime) -> list[int]:
        if not rows:
            return []
        chunks, weights = self.shared.chunks, MULTI_FACTOR_WEIGHTS
        span = span_seconds(self.dataset)
        half_life = span * HALF_LIFE_FRACTION
        restated = self.shared.pairwise(rows) >= RESTATED
        counts = [int(restated[i].sum()) for i in range(len(rows))]
        most = max(counts)
        combined = []
        for i, row in enumerate(rows):
            age = max((now - chunks[row].timestamp).total_seconds(), 0.0)
            times = [chunks[rows[j]].timestamp for j in range(len(rows)) if restated[i, j]]
            lasted = (max(times) - min(times)).total_seconds()
            combined.append(
                weights["relevance"] * scores[i]
                + weights["recency"] * 0.5 ** (age / half_life)
                + weights["usage"] * counts[i] / most
                + weights["stability"] * min(lasted / span, 1.0)
            )
        order = sorted(range(len(rows)), key=lambda i: -combined[i])
        return [rows[i] for i in order]


def entity_rows(shared: SharedStore, question: Question, now: datetime) -> list[int]:
    """Every chunk about the question's entity visible at ``now``, most similar first (the
    bag-of-facts mode's candidates: retrieval taken out of the picture)."""
    if question.entity is None:
        return []
    rows = [
        i
        for i, chunk in enumerate(shared.chunks)
        if chunk.entity == question.entity and shared.visible(i, now)
    ]
    scores = shared.similarities(rows, shared.query_vector(question.asked))
    return [row for _, row in sorted(zip(scores, rows, strict=True), key=lambda p: -p[0])]


def hours_between(later: datetime, earlier: datetime) -> float:
    """Hours from ``earlier`` to ``later`` (0 when negative)."""
    return max((later - earlier).total_seconds() / 3600.0, 0.0)


BASELINES: tuple[type[StoreMethod], ...] = (
    PlainTopK,
    NewestFirst,
    TimeDecay,
    EmbeddingRecency,
    MultiFactor,
)

__all__ = [
    "BASELINES",
    "FETCH_FACTOR",
    "MULTI_FACTOR_WEIGHTS",
    "EmbeddingRecency",
    "Method",
    "MultiFactor",
    "NewestFirst",
    "PlainTopK",
    "StoreMethod",
    "TimeDecay",
    "decay_rate_for",
    "entity_rows",
    "half_life_hours",
    "hours_between",
    "span_seconds",
    "top_with_buffer",
]
