"""The read path of docs/design.md: (expansion) -> index top-k among visible facts -> union the
recency buffer -> fuse and de-duplicate -> resolve in the ledger -> Phi_T -> hits."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from shared_core.clock import Clock, Instant, from_instant, to_instant
from shared_core.dominance import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    atemporal_dominance,
    shadows_by_survivor,
    temporal_dominance,
)
from shared_core.embedders.base import Embedder, check_vectors, embedding_call
from shared_core.errors import EmbedderError, InvalidInputError
from shared_core.filters import matches
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.results import StoredVersion
from shared_core.ledger.store import LedgerStore
from shared_core.llm_calls import TextLLM
from shared_core.memory.expansion import aexpand_query, expand_query
from shared_core.memory.fusion import reciprocal_rank_fusion
from shared_core.memory.hits import Hit
from shared_core.memory.options import SearchOptions
from shared_core.recency import RecencyBuffer


@dataclass(frozen=True, slots=True)
class Query:
    """A search request with its times resolved: ``valid_at`` is the instant asked about (now
    unless the options say otherwise; ``None``: any valid time, i.e. history) and ``known_at``
    ``None`` means as known now."""

    text: str | None  # None: a search by vector
    options: SearchOptions
    valid_at: Instant | None
    known_at: Instant | None


@dataclass(frozen=True, slots=True)
class _Ranked:
    version: StoredVersion
    score: float  # the best cosine similarity over the query variants
    from_buffer: bool


class Reader:
    """Answers :class:`Query` objects from an index, resolved against the ledger."""

    def __init__(
        self,
        ledger: LedgerStore,
        index: VectorIndex,
        buffer: RecencyBuffer,
        expander: TextLLM | None,
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._buffer = buffer
        self.expander = expander
        # vectors of buffered facts as they were written, so a buffered search need not read
        # them back from the index; pruned to what the buffer still holds
        self._buffered_vectors: dict[str, Vector] = {}

    def remember(self, vectors: Mapping[str, Vector]) -> None:
        """Keep the vectors of just-written, buffered facts (by fact id)."""
        held = {c.id for c in self._buffer.recent()}
        kept = {i: v for i, v in self._buffered_vectors.items() if i in held}
        kept.update((i, v) for i, v in vectors.items() if i in held)
        self._buffered_vectors = kept

    def request(self, text: str | None, options: SearchOptions, *, clock: Clock) -> Query:
        """The request with its times resolved (``valid_at`` defaults to ``clock``'s now);
        ``text`` is None for a search by vector."""
        if options.expand and self.expander is None:
            raise InvalidInputError(
                "expand", "needs a query expander", "pass MemoryConfig(expander=...)"
            )
        now = options.valid_at if options.valid_at is not None else clock.now()
        valid: Instant = to_instant(now, "valid_at")
        known = None if options.known_at is None else to_instant(options.known_at, "known_at")
        return Query(
            text=text,
            options=options,
            valid_at=None if options.include_history else valid,
            known_at=known,
        )

    def variants(self, query: Query) -> list[str]:
        """The query and, when asked, the expander's rewrites of it."""
        if query.text is None:
            return []
        if not query.options.expand or self.expander is None:
            return [query.text]
        return [query.text, *expand_query(self.expander, query.text, query.options.expand)]

    async def avariants(self, query: Query) -> list[str]:
        """:meth:`variants` for async callers: the expander's async form is awaited."""
        if query.text is None:
            return []
        if not query.options.expand or self.expander is None:
            return [query.text]
        rewrites = await aexpand_query(self.expander, query.text, query.options.expand)
        return [query.text, *rewrites]

    def search(self, query: Query, vectors: Sequence[tuple[str, Vector]]) -> list[Hit]:
        """The hits for ``query``, given one vector per query variant."""
        return self.finish(query, self.rank(query, vectors))

    def rank(self, query: Query, vectors: Sequence[tuple[str, Vector]]) -> list[Hit]:
        """The visible facts nearest to the query's vectors, fused, before Phi_T."""
        ranked = self._ranked(query, vectors)
        return [Hit(r.version.fact, r.score, from_buffer=r.from_buffer) for r in ranked]

    def finish(self, query: Query, hits: list[Hit]) -> list[Hit]:
        """Phi_T over ranked hits (with the query's detector), then the top ``k``."""
        if query.options.detector is not None:
            hits = _dominate(hits, query.options.detector, query.text)
        return _top(hits, query.options.k)

    async def afinish(self, query: Query, hits: list[Hit]) -> list[Hit]:
        """:meth:`finish` for async callers (see :func:`atemporal_dominance`)."""
        detector = query.options.detector
        if detector is not None:
            candidates = [Candidate.from_fact(hit.fact, score=hit.score) for hit in hits]
            result = await atemporal_dominance(candidates, detector, query=query.text)
            hits = _survivors(hits, result)
        return _top(hits, query.options.k)

    def _ranked(self, query: Query, vectors: Sequence[tuple[str, Vector]]) -> list[_Ranked]:
        buffered = self._buffered(query)
        buffered_vectors = self._vectors_of([v.record.fact_id for v in buffered])
        resolved = _Resolved(self._ledger, query, buffered)
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
                visible_rows=resolved,
            )
            scored = [(m.row_id, m.score) for m in matches]
            retrieved.update(row_id for row_id, _ in scored)
            scored += _cosines(vector, buffered_rows)
            scored.sort(key=lambda pair: -pair[1])
            rankings.append([row_id for row_id, _ in scored])
            for row_id, score in scored:
                best[row_id] = max(score, best.get(row_id, -math.inf))
        order = reciprocal_rank_fusion(rankings)
        return resolved.ranked(order, best, retrieved)

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
        return [v for v in versions if _visible(v, query)]


def query_vectors(embedder: Embedder, texts: list[str]) -> list[tuple[str, Vector]]:
    """Each query text with the embedder's query vector for it, checked."""
    source = f"embedder {embedder.name!r}"
    vectors = check_vectors(
        [embedding_call(source, partial(embedder.embed_query, text)) for text in texts],
        count=len(texts),
        dimension=embedder.dimension,
        source=source,
    )
    return list(zip(texts, vectors, strict=True))


def query_vector(vector: Sequence[float], *, dimension: int) -> list[float]:
    """A caller's query vector, checked (InvalidInputError unless ``dimension`` finite floats)."""
    try:
        checked = check_vectors([vector], count=1, dimension=dimension, source="vector")
    except EmbedderError as exc:
        raise InvalidInputError("vector", str(exc), f"pass {dimension} finite floats") from exc
    return checked[0]


class _Resolved:
    """The ledger's answers for the rows one search reads, each row asked once: the index may
    ask which of its candidates are visible (the ledger is the source of truth), and the
    ranked rows are then resolved from what was read."""

    def __init__(
        self, ledger: LedgerStore, query: Query, read: Sequence[StoredVersion] = ()
    ) -> None:
        self._ledger = ledger
        self._query = query
        self._known = None if query.known_at is None else from_instant(query.known_at)
        self._versions: dict[int, StoredVersion | None] = {v.record.row_id: v for v in read}
        self._shown: dict[int, bool] = {}
        self._listed: set[int] | None = None  # every visible row, once listed
        self._listing: tuple[int, list[int] | None] | None = None  # (limit, the ledger's answer)

    def __call__(self, row_ids: Sequence[int]) -> set[int]:
        return self.visible(row_ids)

    def list_rows(self, limit: int) -> list[int] | None:
        """Every row visible at the query's times (before its ``where``), when at most
        ``limit`` (:class:`~shared_core.index.base.RowLister`)."""
        if self._listing is not None:  # one scan of the ledger per search, however many vectors
            asked, answer = self._listing
            if answer is not None and len(answer) <= limit:
                return answer
            if answer is None and asked >= limit:
                return None
        query = self._query
        listed = self._ledger.list_visible_rows(
            namespace=query.options.namespace,
            valid_at=None if query.valid_at is None else from_instant(query.valid_at),
            known_at=self._known,
            limit=limit,
        )
        self._listing = limit, listed
        if listed is not None:
            self._listed = set(listed)
        return listed

    def versions(self, row_ids: Sequence[int]) -> dict[int, StoredVersion | None]:
        """Each row's version (None: the ledger does not show it, an index that lags behind)."""
        missing = [r for r in dict.fromkeys(row_ids) if r not in self._versions]
        if missing:
            self._versions.update(dict.fromkeys(missing))
            read = self._ledger.versions(
                row_ids=missing,
                known_at=self._known,
                attributes=self._query.options.where is not None,
            )
            self._versions.update((v.record.row_id, v) for v in read)
        return {r: self._versions[r] for r in row_ids}

    def visible(self, row_ids: Sequence[int]) -> set[int]:
        """The rows among ``row_ids`` that the query may return. Without a ``where`` the ledger
        answers without decoding the rows; a filter needs their attributes."""
        query = self._query
        if query.options.where is not None:
            found = self.versions(row_ids).items()
            return {row for row, v in found if v is not None and _visible(v, query)}
        if self._listed is not None:
            return {r for r in row_ids if r in self._listed}
        missing = [r for r in dict.fromkeys(row_ids) if r not in self._shown]
        if missing:
            valid = None if query.valid_at is None else from_instant(query.valid_at)
            shown = self._ledger.visible_rows(
                missing, namespace=query.options.namespace, valid_at=valid, known_at=self._known
            )
            self._shown.update((r, r in shown) for r in missing)
        return {r for r in row_ids if self._shown[r]}

    def ranked(
        self, order: list[int], best: dict[int, float], retrieved: set[int]
    ) -> list[_Ranked]:
        """Ledger versions of the ranked rows; rows the ledger does not show (an index that
        lags behind) are dropped, and a fact id appears once."""
        found = self.versions(order)
        out: list[_Ranked] = []
        seen: set[str] = set()
        for row_id in order:
            version = found[row_id]
            if version is None or not _visible(version, self._query) or version.fact.id in seen:
                continue
            seen.add(version.fact.id)
            out.append(_Ranked(version, best[row_id], row_id not in retrieved))
        return out


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


def _visible(version: StoredVersion, query: Query) -> bool:
    record = version.record
    return (
        record.namespace == query.options.namespace
        and record.visible(query.valid_at, query.known_at)
        and matches(query.options.where, record.attributes)
    )


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
    dots = matrix @ query
    scores = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return [(row_id, float(score)) for (row_id, _), score in zip(rows, scores, strict=True)]
