"""The read path of docs/design.md: (expansion) -> index top-k among visible facts -> union the
recency buffer -> fuse and de-duplicate -> resolve in the ledger -> Phi_T -> hits."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from shared_core.clock import Clock, Instant, from_instant, to_instant
from shared_core.embedders.base import Embedder, check_vectors, embedding_call
from shared_core.errors import EmbedderError, InvalidInputError
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import StoredVersion, WriteResult
from shared_core.llm_calls import TextLLM
from shared_core.memory.expansion import aexpand_query, expand_query
from shared_core.memory.fusion import reciprocal_rank_fusion
from shared_core.memory.hits import Hit
from shared_core.memory.index_mirror import IndexMirror
from shared_core.memory.options import SearchOptions
from shared_core.memory.query import Query
from shared_core.memory.search_rows import Ranked, SearchRows
from shared_core.phi_t import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    atemporal_dominance,
    shadows_by_survivor,
    temporal_dominance,
)
from shared_core.products import row_dots
from shared_core.recency import RecencyBuffer


class Reader:
    """A memory's read path, sync and async: a search enters here with its options and leaves
    with its hits. The index is brought up to date first (under the memory's lock); the
    recency buffer holds the facts written last, with the vectors they were written with."""

    def __init__(
        self,
        ledger: LedgerStore,
        index: VectorIndex,
        embedder: Embedder,
        *,
        mirror: IndexMirror,
        lock: threading.RLock,
        buffer: RecencyBuffer,
        expander: TextLLM | None,
        clock: Clock,
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._embedder = embedder
        self._mirror = mirror
        self._lock = lock
        self._buffer = buffer
        self._expander = expander
        self._clock = clock
        # vectors of buffered facts as they were written, so a buffered search need not read
        # them back from the index; pruned to what the buffer still holds
        self._buffered_vectors: dict[str, Vector] = {}

    def search(self, text: str, options: SearchOptions) -> list[Hit]:
        """The hits for ``text``: its variants ranked among the visible facts, then Phi_T with
        the options' detector, then the top ``k`` (and every buffered hit)."""
        query = self._query(text, options)
        hits = self._ranked(query, self._variants(query))
        return self._finish(query, hits)

    async def asearch(self, text: str, options: SearchOptions) -> list[Hit]:
        """:meth:`search` for async callers: the expander's and the detector's async forms are
        awaited on the running loop (an LLM judge's, say); embedding, the index and the ledger
        are read in a worker thread, and a detector without an async form runs in one too."""
        query = self._query(text, options)
        variants = await self._avariants(query)
        hits = await asyncio.to_thread(self._ranked, query, variants)
        return await self._afinish(query, hits)

    def search_by_vector(self, vector: Sequence[float], options: SearchOptions) -> list[Hit]:
        """:meth:`search` for a query already embedded by the memory's embedder (its dimension
        is checked); ``expand`` needs the query text and is refused."""
        if options.expand:
            raise InvalidInputError(
                "expand", "needs the query text", "use search(query, ...) to expand a query"
            )
        query = self._request(None, options)
        checked = _query_vector(vector, dimension=self._embedder.dimension)
        self._catch_up()
        return self._finish(query, self._rank(query, [("", checked)]))

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored embeddings of these facts, by fact id (ids the index lacks are absent)."""
        self._catch_up()
        return self._index.vectors(list(fact_ids))

    def remember(self, results: Sequence[WriteResult], vectors: Mapping[str, Vector]) -> None:
        """After a ledger write: its facts join the recency buffer, with the vectors their texts
        were just embedded to (``vectors`` maps texts to vectors)."""
        written: dict[str, Vector] = {}
        for result in results:
            if result.fact is not None:
                self._buffer.add(Candidate.from_fact(result.fact))
                if result.fact.text in vectors:
                    written[result.fact.id] = vectors[result.fact.text]
        held = {c.id for c in self._buffer.recent()}
        kept = {i: v for i, v in self._buffered_vectors.items() if i in held}
        kept.update((i, v) for i, v in written.items() if i in held)
        self._buffered_vectors = kept

    def _query(self, text: str, options: SearchOptions) -> Query:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("query", "is empty", "pass the text to search for")
        return self._request(text, options)

    def _request(self, text: str | None, options: SearchOptions) -> Query:
        """The request with its times resolved (``valid_at`` defaults to the clock's now);
        ``text`` is None for a search by vector."""
        if options.expand and self._expander is None:
            raise InvalidInputError(
                "expand", "needs a query expander", "pass MemoryConfig(expander=...)"
            )
        now = options.valid_at if options.valid_at is not None else self._clock.now()
        valid: Instant = to_instant(now, "valid_at")
        known = None if options.known_at is None else to_instant(options.known_at, "known_at")
        return Query(
            text=text,
            options=options,
            valid_at=None if options.include_history else valid,
            known_at=known,
        )

    def _variants(self, query: Query) -> list[str]:
        """The query and, when asked, the expander's rewrites of it."""
        if query.text is None:
            return []
        if not query.options.expand or self._expander is None:
            return [query.text]
        return [query.text, *expand_query(self._expander, query.text, query.options.expand)]

    async def _avariants(self, query: Query) -> list[str]:
        """:meth:`_variants` for async callers: the expander's async form is awaited."""
        if query.text is None:
            return []
        if not query.options.expand or self._expander is None:
            return [query.text]
        rewrites = await aexpand_query(self._expander, query.text, query.options.expand)
        return [query.text, *rewrites]

    def _catch_up(self) -> None:
        with self._lock:
            self._mirror.catch_up()

    def _ranked(self, query: Query, texts: list[str]) -> list[Hit]:
        """Catch up, embed the query's variants and rank the visible facts (before Phi_T)."""
        self._catch_up()
        return self._rank(query, _query_vectors(self._embedder, texts))

    def _rank(self, query: Query, vectors: Sequence[tuple[str, Vector]]) -> list[Hit]:
        """The visible facts nearest to the query's vectors, fused, before Phi_T."""
        ranked = self._fused(query, vectors)
        return [Hit(r.version.fact, r.score, from_buffer=r.from_buffer) for r in ranked]

    def _finish(self, query: Query, hits: list[Hit]) -> list[Hit]:
        """Phi_T over ranked hits (with the query's detector), then the top ``k``."""
        if query.options.detector is not None:
            hits = _dominate(hits, query.options.detector, query.text)
        return _top(hits, query.options.k)

    async def _afinish(self, query: Query, hits: list[Hit]) -> list[Hit]:
        """:meth:`_finish` for async callers (see :func:`atemporal_dominance`)."""
        detector = query.options.detector
        if detector is not None:
            candidates = [Candidate.from_fact(hit.fact, score=hit.score) for hit in hits]
            result = await atemporal_dominance(candidates, detector, query=query.text)
            hits = _survivors(hits, result)
        return _top(hits, query.options.k)

    def _fused(self, query: Query, vectors: Sequence[tuple[str, Vector]]) -> list[Ranked]:
        buffered = self._buffered(query)
        buffered_vectors = self._vectors_of([v.record.fact_id for v in buffered])
        rows = SearchRows(self._ledger, query, buffered)
        rankings: list[list[int]] = []
        best: dict[int, float] = {}
        retrieved: set[int] = set()
        buffered_rows = [
            (v.record.row_id, buffered_vectors[v.record.fact_id])
            for v in buffered
            if v.record.fact_id in buffered_vectors
        ]
        for _, vector in vectors:
            matches = self._index.search(
                vector,
                k=query.options.k,
                namespace=query.options.namespace,
                valid_at=query.valid_at,
                known_at=query.known_at,
                where=query.options.where,
                rows_only=True,  # every row is read from the ledger
                visible_rows=rows,
            )
            scored = [(m.row_id, m.score) for m in matches]
            retrieved.update(row_id for row_id, _ in scored)
            scored += _cosines(vector, buffered_rows)
            scored.sort(key=lambda pair: -pair[1])
            rankings.append([row_id for row_id, _ in scored])
            for row_id, score in scored:
                best[row_id] = max(score, best.get(row_id, -math.inf))
        order = reciprocal_rank_fusion(rankings)
        return rows.ranked(order, best, retrieved)

    def _vectors_of(self, fact_ids: list[str]) -> dict[str, Vector]:
        cached = self._buffered_vectors
        found = {i: cached[i] for i in fact_ids if i in cached}
        missing = [i for i in fact_ids if i not in found]
        if missing:
            found.update(self._index.vectors(missing))
        return found

    def _buffered(self, query: Query) -> list[StoredVersion]:
        if not query.options.use_recency_buffer:
            return []
        ids = [c.id for c in self._buffer.recent(namespace=query.options.namespace)]
        if not ids:
            return []
        known = None if query.known_at is None else from_instant(query.known_at)
        versions = self._ledger.versions(
            fact_ids=ids, known_at=known, attributes=query.options.where is not None
        )
        return [v for v in versions if query.shows(v)]


def _query_vectors(embedder: Embedder, texts: list[str]) -> list[tuple[str, Vector]]:
    """Each query text with the embedder's query vector for it, checked."""
    source = f"embedder {embedder.name!r}"
    vectors = check_vectors(
        [embedding_call(source, partial(embedder.embed_query, text)) for text in texts],
        count=len(texts),
        dimension=embedder.dimension,
        source=source,
    )
    return list(zip(texts, vectors, strict=True))


def _query_vector(vector: Sequence[float], *, dimension: int) -> list[float]:
    """A caller's query vector, checked (InvalidInputError unless ``dimension`` finite floats)."""
    try:
        checked = check_vectors([vector], count=1, dimension=dimension, source="vector")
    except EmbedderError as exc:
        raise InvalidInputError("vector", str(exc), f"pass {dimension} finite floats") from exc
    return checked[0]


def _top(hits: list[Hit], k: int) -> list[Hit]:
    """The first ``k`` retrieved hits, and every buffered one (the buffer is a union, as in
    GC-Mem: it exists to bring in what retrieval missed)."""
    out: list[Hit] = []
    retrieved = 0
    for hit in hits:
        if hit.from_buffer:
            out.append(hit)
        elif retrieved < k:
            out.append(hit)
            retrieved += 1
    return out


def _dominate(hits: list[Hit], detector: ConflictDetector, query: str | None) -> list[Hit]:
    """Phi_T over the hits; each removed candidate is attached to the hit its chain ends at."""
    candidates = [Candidate.from_fact(hit.fact, score=hit.score) for hit in hits]
    return _survivors(hits, temporal_dominance(candidates, detector, query=query))


def _survivors(hits: list[Hit], result: DominanceResult) -> list[Hit]:
    groups = shadows_by_survivor(result)
    kept = {candidate.id for candidate in result.kept}
    return [
        replace(hit, shadows=groups.get(hit.fact.id, ())) for hit in hits if hit.fact.id in kept
    ]


def _cosines(vector: Vector, rows: Sequence[tuple[int, Vector]]) -> list[tuple[int, float]]:
    """(row id, cosine similarity to ``vector``) for each (row id, vector)."""
    if not rows:
        return []
    import numpy as np

    matrix = np.asarray([stored for _, stored in rows], dtype=np.float64)
    query = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    dots = row_dots(matrix, query)
    scores = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return [(row_id, float(score)) for (row_id, _), score in zip(rows, scores, strict=True)]
