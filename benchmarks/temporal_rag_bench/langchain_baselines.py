"""LangChain's own time-decay retriever as a ``temporal-rag bench`` method.

:class:`TimeWeightedBaseline` runs ``langchain_classic``'s real
``TimeWeightedVectorStoreRetriever`` over :class:`SharedVectorStore`, a LangChain
``VectorStore`` reading the benchmark's shared Chroma collection (the same candidates and
vectors as every other method). Found by the bench through the ``temporal_rag.bench_methods``
entry point (:func:`bench_methods`); the core never imports this module.

Two things are pinned so that questions are independent and asked at their own time:

- the retriever's clock (it calls ``datetime.now()``) reads the question's ``now`` during the
  call (as-of questions: the time asked about);
- what it does after answering, stamping ``last_accessed_at`` on the documents it returned
  (its access refresh), is undone before the next question.
"""

from __future__ import annotations

import bisect
import datetime as _datetime
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, ClassVar, Self

from langchain_classic.retrievers import time_weighted_retriever
from langchain_classic.retrievers.time_weighted_retriever import TimeWeightedVectorStoreRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from langchain_temporal.bridges import CoreEmbeddings
from shared_core.clock import to_instant
from temporal_rag_bench.methods import FETCH_FACTOR, decay_rate_for
from temporal_rag_bench.model import Dataset, Question, Retrieved
from temporal_rag_bench.shared_collection import SharedStore

_CHUNK = "bench_chunk"
_STAMP = "bench_ts"


class SharedVectorStore(VectorStore):
    """A read-only LangChain view of a :class:`SharedStore`: search returns the shared Chroma
    collection's nearest chunks visible at :attr:`now`, with cosine distances (relevance is
    ``1 - distance``, clipped at 0 as LangChain wants relevance in [0, 1])."""

    def __init__(self, shared: SharedStore) -> None:
        self.shared = shared
        self.now = shared.dataset.now
        self._embeddings = CoreEmbeddings(shared.embedder)
        self._metadata: dict[str, dict[str, Any]] = {}

    @property
    def embeddings(self) -> Embeddings:
        return self._embeddings

    def add_texts(
        self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> list[str]:
        """Remember each chunk's metadata (its vector is in the shared collection already)."""
        ids = []
        for metadata in metadatas or []:
            self._metadata[str(metadata[_CHUNK])] = metadata
            ids.append(str(metadata[_CHUNK]))
        return ids

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        fetched = self.shared.fetch(query, k, now=self.now)
        out = []
        for row, score in zip(fetched.rows, fetched.scores, strict=True):
            chunk = self.shared.chunks[row]
            document = Document(page_content=chunk.text, metadata=self._metadata[chunk.id])
            out.append((document, min(1.0 - score, 1.0)))
        return out

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def _select_relevance_score_fn(self) -> Any:
        return self._cosine_relevance_score_fn

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> SharedVectorStore:
        raise NotImplementedError("build it from a SharedStore: SharedVectorStore(shared)")


class TimeWeightedBaseline:
    """``time-decay`` as LangChain runs it: the real ``TimeWeightedVectorStoreRetriever``
    (similarity + ``(1 - decay_rate) ** hours_passed`` over ``search_kwargs["k"]`` fetched
    documents and its own last-k memory stream). ``decay_rate`` is set per dataset to the
    half-life the core's time-decay uses (see ``temporal_rag_bench.methods.decay_rate_for``)."""

    family = "lc-time-weighted"
    name = "lc-time-weighted"
    real_class = "langchain_classic.retrievers.TimeWeightedVectorStoreRetriever"
    description = "LangChain TimeWeightedVectorStoreRetriever (real class) over the shared store"

    def __init__(self) -> None:
        self._retriever: TimeWeightedVectorStoreRetriever | None = None
        self._store: SharedVectorStore | None = None
        self._stream: list[Document] = []
        self._stamps: list[int] = []

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        store = SharedVectorStore(shared)
        retriever = TimeWeightedVectorStoreRetriever(
            vectorstore=store, decay_rate=decay_rate_for(dataset)
        )
        chunks = sorted(shared.chunks, key=lambda c: c.timestamp)  # visible = a prefix
        documents = [
            Document(
                page_content=c.text,
                metadata={_CHUNK: c.id, _STAMP: to_instant(c.timestamp), **_dates(c.timestamp)},
            )
            for c in chunks
        ]
        retriever.add_documents(documents)
        self._retriever, self._store = retriever, store
        self._stream = list(retriever.memory_stream)
        self._stamps = [int(d.metadata[_STAMP]) for d in self._stream]

    def retrieve(self, question: Question, k: int, *, now: _datetime.datetime) -> Retrieved:
        retriever, store = self._require()
        visible = bisect.bisect_right(self._stamps, to_instant(now, "now"))
        retriever.memory_stream = self._stream[:visible]
        retriever.k = k
        retriever.search_kwargs = {"k": FETCH_FACTOR * k}
        store.now = now
        with pinned_clock(now):
            documents = retriever.invoke(question.text)
        _restore_access_times(documents)
        rows = [store.shared.row[str(d.metadata[_CHUNK])] for d in documents]
        return Retrieved(tuple(store.shared.chunks[r] for r in rows))

    def _require(self) -> tuple[TimeWeightedVectorStoreRetriever, SharedVectorStore]:
        if self._retriever is None or self._store is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._retriever, self._store


def _dates(moment: _datetime.datetime) -> dict[str, _datetime.datetime]:
    """LangChain's naive datetimes (its clock is naive): UTC without the offset."""
    naive = moment.astimezone(_datetime.UTC).replace(tzinfo=None)
    return {"created_at": naive, "last_accessed_at": naive, "bench_accessed": naive}


def _restore_access_times(documents: Sequence[Document]) -> None:
    for document in documents:
        document.metadata["last_accessed_at"] = document.metadata["bench_accessed"]


class _PinnedDatetime(_datetime.datetime):
    moment: ClassVar[_datetime.datetime] = _datetime.datetime.fromtimestamp(0, _datetime.UTC)

    @classmethod
    def now(cls, tz: _datetime.tzinfo | None = None) -> Self:
        m = cls.moment
        return cls(m.year, m.month, m.day, m.hour, m.minute, m.second, m.microsecond, tz)


@contextmanager
def pinned_clock(now: _datetime.datetime) -> Iterator[None]:
    """The retriever module's ``datetime.datetime.now()`` returns ``now`` (naive UTC)."""
    _PinnedDatetime.moment = now.astimezone(_datetime.UTC).replace(tzinfo=None)
    module: Any = time_weighted_retriever
    original = module.datetime
    module.datetime = SimpleNamespace(datetime=_PinnedDatetime)
    try:
        yield
    finally:
        module.datetime = original


def bench_methods() -> list[Any]:
    """The entry point of group ``temporal_rag.bench_methods``."""
    return [TimeWeightedBaseline()]
