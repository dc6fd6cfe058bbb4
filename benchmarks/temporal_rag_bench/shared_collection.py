"""What every benchmark method shares: one dataset's chunks embedded once, in one Chroma collection.

:class:`SharedStore` embeds every chunk text once (and every question once), keeps the vectors
in a numpy matrix and writes them into a plain Chroma collection (vectors always passed, so
Chroma never embeds). Methods fetch candidates from it and score them with the same vectors;
:attr:`SharedStore.embedder` serves the cached vectors to anything that wants an
:class:`~shared_core.embedders.base.Embedder` (TemporalMemory, the framework adapters). numpy
and chromadb are imported inside functions only (tests/unit/test_boundaries.py).
"""

from __future__ import annotations

import importlib
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from shared_core.clock import to_instant
from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.index.chroma_client import precomputed_embedding_function
from temporal_rag_bench.model import SPEAKER_FIELD, Chunk, Dataset, Question, QuestionKind

T = TypeVar("T")
Progress = Callable[[str, int], Callable[[int], None]]
"""``progress(description, total)`` returns ``advance(n)``; the runner passes a rich one."""

EMBED_BATCH = 256
SEARCH_EF = 128  # HNSW search breadth of the shared collection (near-duplicates need breadth)
_UNSAFE = re.compile(r"[^a-zA-Z0-9]+")


def no_progress(description: str, total: int) -> Callable[[int], None]:
    """A progress callback that shows nothing."""
    return lambda n: None


def question_time(question: Question, dataset: Dataset) -> datetime:
    """The moment a question is asked about: its ``valid_at`` for as-of questions, else now."""
    if question.kind is QuestionKind.AS_OF and question.valid_at is not None:
        return question.valid_at
    return dataset.now


@dataclass(frozen=True, slots=True)
class VectorCache:
    """Vectors by text, shared by a run's stores (the two synthetic tracks share every text)."""

    documents: dict[str, list[float]] = field(default_factory=dict)
    queries: dict[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Fetched:
    """Candidate rows in rank order with their cosine similarity to the query."""

    rows: tuple[int, ...]
    scores: tuple[float, ...]


class SharedStore:
    """One dataset's chunks, their vectors and a plain Chroma collection of them.

    ``client``: a Chroma client shared by the run (every collection made for this dataset,
    the methods' too, is named after :attr:`name`); ``workdir``: a folder for files (ledgers).
    The query vectors of every question are computed up front, so reads never embed.
    """

    def __init__(
        self,
        dataset: Dataset,
        embedder: Embedder,
        *,
        client: Any,
        name: str,
        workdir: Path,
        progress: Progress = no_progress,
        cache: VectorCache | None = None,
        k: int = 5,
    ) -> None:
        np = importlib.import_module("numpy")
        self.dataset = dataset
        self.k = k  # the run's k: what every method's reads ask for
        self.chunks: tuple[Chunk, ...] = dataset.chunks
        self.row: dict[str, int] = {c.id: i for i, c in enumerate(self.chunks)}
        self.client = client
        self.workdir = workdir
        self._progress = progress
        safe = _UNSAFE.sub("_", name).strip("_") or "bench"
        self.name = f"{safe[:40]}_{uuid.uuid4().hex[:8]}"  # every collection's name starts so
        self._base = embedder
        self._cache = cache if cache is not None else VectorCache()
        started = time.perf_counter()
        self._embed_missing(embedder, progress)
        self.embed_seconds = time.perf_counter() - started
        self.matrix = _unit_rows(np, [self._cache.documents[c.text] for c in self.chunks])
        self.stamps = [to_instant(c.timestamp, "timestamp") for c in self.chunks]
        self.latest = max(self.stamps, default=0)
        self.order = sorted(range(len(self.chunks)), key=lambda i: self.chunks[i].recorded_order)
        self.embedder: Embedder = CallableEmbedder(
            self._embed_documents,
            name=embedder.name,
            dimension=embedder.dimension,
            embed_query=self._embed_query,
        )
        self._resources: dict[str, Any] = {}
        self._closers: list[Callable[[], None]] = []
        started = time.perf_counter()
        self.collection = self._build_collection(progress)
        self.index_seconds = time.perf_counter() - started

    # ------------------------------------------------------------------ vectors
    def query_vector(self, text: str) -> Any:
        """The unit query vector of ``text`` (a numpy array; computed now if not cached)."""
        np = importlib.import_module("numpy")
        vector = np.asarray(self._embed_query(text), dtype="float32")
        return vector / max(float(np.linalg.norm(vector)), 1e-12)

    def similarities(self, rows: Sequence[int], vector: Any) -> list[float]:
        """Cosine similarity of each row's chunk to a unit vector."""
        if not rows:
            return []
        return [float(x) for x in self.matrix[list(rows)] @ vector]

    def pairwise(self, rows: Sequence[int]) -> Any:
        """The cosine similarity matrix of the given rows (numpy)."""
        block = self.matrix[list(rows)]
        return block @ block.T

    # ------------------------------------------------------------------ reads
    def fetch(self, text: str, n: int, *, now: datetime, speaker: str | None = None) -> Fetched:
        """The ``n`` nearest chunks visible at ``now`` (timestamp <= now), from Chroma; with a
        ``speaker``, only that speaker's chunks (a chat app reads one user's memory)."""
        vector = self.query_vector(text)
        moment = to_instant(now, "now")
        clauses: list[dict[str, Any]] = []
        if moment < self.latest:
            clauses.append({"ts": {"$lte": moment}})
        if speaker is not None:
            clauses.append({SPEAKER_FIELD: speaker})
        where = None if not clauses else clauses[0] if len(clauses) == 1 else {"$and": clauses}
        count = len(self.chunks) if where is None else self.visible_count(now, speaker=speaker)
        n = min(n, count)
        if n <= 0:
            return Fetched((), ())
        found = self.collection.query(  # what a RAG retriever reads: texts and metadata too
            query_embeddings=vector[None, :],
            n_results=n,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        rows = tuple(self.row[i] for i in found["ids"][0])
        scores = tuple(1.0 - float(d) for d in found["distances"][0])
        return Fetched(rows, scores)

    def candidate_rows(self, n: int) -> list[int]:
        """Every row some question's :meth:`fetch` of ``n`` returns (in row order): what a
        re-ranker over those candidates can ever be shown."""
        rows: set[int] = set()
        for question in self.dataset.questions:
            rows.update(
                self.fetch(
                    question.asked,
                    n,
                    now=question_time(question, self.dataset),
                    speaker=question.speaker,
                ).rows
            )
        return sorted(rows)

    def visible(self, row: int, now: datetime) -> bool:
        return self.stamps[row] <= to_instant(now, "now")

    def visible_count(self, now: datetime, *, speaker: str | None = None) -> int:
        moment = to_instant(now, "now")
        return sum(
            1
            for chunk, stamp in zip(self.chunks, self.stamps, strict=True)
            if stamp <= moment and (speaker is None or chunk.speaker == speaker)
        )

    def recent(self, n: int, *, now: datetime, speaker: str | None = None) -> list[int]:
        """The recency buffer: of the ``n`` chunks ingested last (of ``speaker``'s, with one),
        those visible at ``now``, most recent first (as TemporalMemory's buffer holds the last
        writes)."""
        if n <= 0:
            return []
        mine = [r for r in self.order if speaker is None or self.chunks[r].speaker == speaker]
        return [row for row in mine[-n:][::-1] if self.visible(row, now)]

    # ------------------------------------------------------------------ sharing
    def resource(self, key: str, build: Callable[[], T], close: Callable[[T], None]) -> T:
        """A value built once per store and shared by methods (e.g. one TemporalMemory)."""
        if key not in self._resources:
            value = build()
            self._resources[key] = value
            self._closers.append(lambda: close(value))
        found: T = self._resources[key]
        return found

    def close(self) -> None:
        """Close shared resources and drop every collection this store and its methods made."""
        for closer in reversed(self._closers):
            closer()
        self._closers.clear()
        self._resources.clear()
        for collection in self.client.list_collections():
            name = getattr(collection, "name", collection)
            if str(name).startswith(self.name):
                self.client.delete_collection(str(name))

    # ------------------------------------------------------------------ internals
    def remember_queries(self, texts: Sequence[str], *, description: str) -> float:
        """Embed extra query texts now (not during reads), in batches through
        ``embed_documents`` (right for symmetric models such as the bundled MiniLM, which has
        no query prompt); returns the seconds it took."""
        started = time.perf_counter()
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache.queries]
        vectors = _embed_batches(self._base, missing, self._progress, description)
        self._cache.queries.update(zip(missing, vectors, strict=True))
        return time.perf_counter() - started

    def _embed_missing(self, embedder: Embedder, progress: Progress) -> None:
        """Embed the chunk texts and questions no earlier store of the run embedded."""
        cache, name = self._cache, self.dataset.name
        texts = [t for t in dict.fromkeys(c.text for c in self.chunks) if t not in cache.documents]
        vectors = _embed_batches(embedder, texts, progress, f"{name}: embedding chunks")
        cache.documents.update(zip(texts, vectors, strict=True))
        asked = dict.fromkeys(q.asked for q in self.dataset.questions)
        questions = [t for t in asked if t not in cache.queries]
        vectors = embed_queries(
            embedder, questions, progress=progress, description=f"{name}: embedding questions"
        )
        cache.queries.update(zip(questions, vectors, strict=True))

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        documents = self._cache.documents
        missing = [t for t in dict.fromkeys(texts) if t not in documents]
        if missing:
            raise KeyError(f"text not embedded by the shared store: {missing[0][:60]!r}")
        return [documents[t] for t in texts]

    def _embed_query(self, text: str) -> list[float]:
        found = self._cache.queries.get(text)
        if found is None:
            raise KeyError(f"query not embedded by the shared store: {text[:60]!r}")
        return found

    def _chunk_metadata(self, row: int) -> dict[str, Any]:
        chunk = self.chunks[row]
        metadata: dict[str, Any] = {"ts": self.stamps[row], "order": chunk.recorded_order}
        if chunk.speaker is not None:
            metadata[SPEAKER_FIELD] = chunk.speaker
        return metadata

    def _build_collection(self, progress: Progress) -> Any:
        collection = self.client.create_collection(
            f"{self.name}_plain",
            configuration={"hnsw": {"space": "cosine", "ef_search": SEARCH_EF}},
            embedding_function=precomputed_embedding_function(),
        )
        batch = min(int(self.client.get_max_batch_size()), 5_000)
        advance = progress(f"{self.dataset.name}: indexing chunks", len(self.chunks))
        for start in range(0, len(self.chunks), batch):
            rows = range(start, min(start + batch, len(self.chunks)))
            collection.add(
                ids=[self.chunks[i].id for i in rows],
                embeddings=self.matrix[start : rows.stop],
                documents=[self.chunks[i].text for i in rows],
                metadatas=[self._chunk_metadata(i) for i in rows],
            )
            advance(len(rows))
        return collection


def embed_queries(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    progress: Progress = no_progress,
    description: str = "embedding queries",
) -> list[list[float]]:
    """``embed_query`` of each text: in batches when the embedder can (``embed_queries``,
    as the bundled MiniLM does), else one by one."""
    batched = getattr(embedder, "embed_queries", None)

    def one_by_one(batch: list[str]) -> list[list[float]]:
        return [list(embedder.embed_query(text)) for text in batch]

    return _in_batches(batched or one_by_one, texts, progress, description)


def _embed_batches(
    embedder: Embedder, texts: list[str], progress: Progress, description: str
) -> list[list[float]]:
    return _in_batches(embedder.embed_documents, texts, progress, description)


def _in_batches(
    embed: Callable[[list[str]], Sequence[Sequence[float]]],
    texts: Sequence[str],
    progress: Progress,
    description: str,
) -> list[list[float]]:
    """``embed`` over ``texts`` in batches of EMBED_BATCH, one vector per text, in order."""
    advance = progress(description, len(texts))
    out: list[list[float]] = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = list(texts[start : start + EMBED_BATCH])
        out.extend(list(vector) for vector in embed(batch))
        advance(len(batch))
    return out


def _unit_rows(np: Any, vectors: list[list[float]]) -> Any:
    if not vectors:
        return np.zeros((0, 1), dtype="float32")
    matrix = np.asarray(vectors, dtype="float32")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def chroma_client() -> Any:
    """An in-process Chroma client for one bench run (EphemeralClient: nothing on disk)."""
    return importlib.import_module("chromadb").EphemeralClient()
