"""LlamaIndex's own recency postprocessors as ``temporal-rag bench`` methods.

- :class:`FixedRecencyBaseline`: the real ``FixedRecencyPostprocessor`` (newest first, top k)
  over the shared collection's ``4 k`` nearest chunks.
- :class:`EmbeddingRecencyBaseline`: the real ``EmbeddingRecencyPostprocessor`` (newest first,
  older nodes too similar to a newer one dropped, ``similarity_cutoff`` 0.7, its default), then
  the first k. Its embedding model serves the shared vectors; the templated "query" text it
  embeds for a candidate node is embedded at ingest for every node some question's candidates
  hold (counted in the ingest time), so reads never run the model.

Both get the same candidates as every other method (the shared Chroma collection, visible at
``now``). Found by the bench through the ``temporal_rag.bench_methods`` entry point
(:func:`bench_methods`); the core never imports this module. The classes need pandas (the
``bench`` extra installs it).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from llama_index.core.postprocessor.node_recency import (
    DEFAULT_QUERY_EMBEDDING_TMPL,
    EmbeddingRecencyPostprocessor,
    FixedRecencyPostprocessor,
)
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from llamaindex_temporal.bridges import CoreEmbedding
from temporal_rag_bench.methods import EMB_RECENCY_CUTOFF, FETCH_FACTOR
from temporal_rag_bench.model import Chunk, Dataset, Question, Retrieved
from temporal_rag_bench.shared_collection import SharedStore

_DATE = "date"


def node_of(chunk: Chunk) -> TextNode:
    """A chunk as a LlamaIndex node: its text, its date in metadata (kept out of what is
    embedded, so the node embeds exactly as the shared vector)."""
    return TextNode(
        id_=chunk.id,
        text=chunk.text,
        metadata={_DATE: chunk.timestamp.isoformat()},
        excluded_embed_metadata_keys=[_DATE],
        excluded_llm_metadata_keys=[_DATE],
    )


class _Postprocessed:
    """Fetch the ``4 k`` nearest visible chunks, run a real LlamaIndex postprocessor, keep k."""

    family = ""
    name = ""
    real_class: str | None = None
    description = ""
    newest_first_input = False

    def __init__(self) -> None:
        self._shared: SharedStore | None = None
        self._nodes: list[TextNode] = []
        self.ingest_seconds: float | None = None

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        started = time.perf_counter()
        self._shared = shared
        self._nodes = [node_of(c) for c in shared.chunks]
        self.prepare(shared)
        self.ingest_seconds = time.perf_counter() - started

    def prepare(self, shared: SharedStore) -> None:
        """Anything to do once per dataset (embedding, say)."""

    def postprocessor(self, k: int) -> BaseNodePostprocessor:
        raise NotImplementedError

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        shared = self._require()
        fetched = shared.fetch(question.text, FETCH_FACTOR * k, now=now)
        nodes = [
            NodeWithScore(node=self._nodes[row], score=score)
            for row, score in zip(fetched.rows, fetched.scores, strict=True)
        ]
        if self.newest_first_input:
            nodes.sort(key=lambda n: -shared.stamps[shared.row[n.node.node_id]])
        kept = self.postprocessor(k).postprocess_nodes(nodes, query_str=question.text)
        rows = [shared.row[n.node.node_id] for n in kept[:k]]
        return Retrieved(tuple(shared.chunks[r] for r in rows))

    def _require(self) -> SharedStore:
        if self._shared is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._shared


class FixedRecencyBaseline(_Postprocessed):
    family = name = "li-fixed-recency"
    real_class = "llama_index.core.postprocessor.FixedRecencyPostprocessor"
    description = "LlamaIndex FixedRecencyPostprocessor (real class) over the 4k nearest"

    def postprocessor(self, k: int) -> BaseNodePostprocessor:
        return FixedRecencyPostprocessor(top_k=k, date_key=_DATE)


class EmbeddingRecencyBaseline(_Postprocessed):
    """The nodes are passed newest first: the class compares its date-sorted nodes with
    embeddings listed in input order (``text_embeddings[idx2]``), which agree only then."""

    family = name = "li-embedding-recency"
    real_class = "llama_index.core.postprocessor.EmbeddingRecencyPostprocessor"
    description = "LlamaIndex EmbeddingRecencyPostprocessor (real class, cutoff 0.7), first k"
    newest_first_input = True

    def __init__(self) -> None:
        super().__init__()
        self._processor: EmbeddingRecencyPostprocessor | None = None

    def prepare(self, shared: SharedStore) -> None:
        # only nodes some question's candidates hold are ever embedded as queries by the class
        templated = [
            DEFAULT_QUERY_EMBEDDING_TMPL.format(
                context_str=self._nodes[row].get_content(metadata_mode=MetadataMode.EMBED)
            )
            for row in shared.candidate_rows(FETCH_FACTOR * shared.k)
        ]
        shared.remember_queries(templated, description=f"{self.name}: templated node queries")
        self._processor = EmbeddingRecencyPostprocessor(
            embed_model=CoreEmbedding(shared.embedder),
            date_key=_DATE,
            similarity_cutoff=EMB_RECENCY_CUTOFF,
        )

    def postprocessor(self, k: int) -> BaseNodePostprocessor:
        if self._processor is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._processor


def bench_methods() -> list[Any]:
    """The entry point of group ``temporal_rag.bench_methods``."""
    return [FixedRecencyBaseline(), EmbeddingRecencyBaseline()]
