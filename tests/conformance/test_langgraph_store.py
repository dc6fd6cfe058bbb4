"""LangGraph's store tests (tests/conformance/langgraph_store_suite.py and
langgraph_vector_suite.py), run on TemporalStore over
the in-memory fakes and over SQLite + Chroma, and on LangGraph's own InMemoryStore, which proves
the suite's expectations right.

TemporalStore's memory embeds with the index config's ``embed`` (LangGraph's
``CharacterEmbeddings`` in the vector tests, through ``LangChainEmbedder``), and with the
hashing fake when there is no index. The one difference by design, one vector per item, is the
suite's ``max_pooled_vectors`` flag.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_temporal import LangChainEmbedder, TemporalStore
from shared_core.embedders.base import Embedder, HashingEmbedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.conformance.langgraph_vector_suite import VectorSearchConformance


def embedder_for(index: dict[str, Any] | None) -> Embedder:
    """The memory's embedder: the index config's model, else the hashing fake."""
    if index is None or index.get("embed") is None:
        return HashingEmbedder()
    return LangChainEmbedder(index["embed"], name="character-embeddings", dimension=index["dims"])


class TestInMemoryStore(VectorSearchConformance):
    """LangGraph's reference store."""

    @contextmanager
    def open_store(self, index: dict[str, Any] | None) -> Iterator[BaseStore]:
        yield InMemoryStore(index=index)  # type: ignore[arg-type]


class TestTemporalStoreOnFakes(VectorSearchConformance):
    """InMemoryLedger + NumpyIndex; the clock is the system's (LangGraph's tests compare
    ``updated_at`` of successive puts)."""

    max_pooled_vectors = False

    @contextmanager
    def open_store(self, index: dict[str, Any] | None) -> Iterator[BaseStore]:
        memory = TemporalMemory(
            ledger=InMemoryLedger(),
            index=NumpyIndex(),
            config=MemoryConfig(embedder=embedder_for(index)),
        )
        with memory:
            yield TemporalStore(memory, index=index)  # type: ignore[arg-type]


class TestTemporalStoreEmbedded(VectorSearchConformance):
    """The embedded default stack (``TemporalStore.open``: SQLite ledger, Chroma index) in a
    temporary folder."""

    max_pooled_vectors = False

    @contextmanager
    def open_store(self, index: dict[str, Any] | None) -> Iterator[BaseStore]:
        with (
            tempfile.TemporaryDirectory() as folder,
            TemporalStore.open(
                folder,
                index=index,  # type: ignore[arg-type]
                config=MemoryConfig(embedder=embedder_for(index), durability="normal"),
            ) as store,
        ):
            yield store
