"""LangChain's standard vector-store tests, run whole, sync and async (nothing overridden),
against TemporalVectorStore on the in-memory stack with the suite's own embeddings.

The same suite runs on the embedded stack (SQLite + Chroma) in
tests/integration/test_langchain_vector_store_embedded.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_temporal import LangChainEmbedder, TemporalVectorStore
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

EMBEDDINGS = "langchain-tests-deterministic-fake-6"


class TestTemporalVectorStoreStandard(VectorStoreIntegrationTests):
    """Every standard test as LangChain wrote it: has_sync and has_async are both True."""

    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:
        embedder = LangChainEmbedder(self.get_embeddings(), name=EMBEDDINGS)
        memory = TemporalMemory(
            ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
        )
        with memory:
            yield TemporalVectorStore(memory)


def test_the_suite_runs_sync_and_async_on_get_by_ids() -> None:
    """The standard suite is not narrowed: both paths and get_by_ids are on."""
    suite = TestTemporalVectorStoreStandard()
    assert (suite.has_sync, suite.has_async, suite.has_get_by_ids) == (True, True, True)


def test_the_standard_view_is_the_current_state_and_history_is_kept() -> None:
    """What the suite checks (a replaced or deleted Document is gone) is the current state; the
    ledger still holds what was replaced and deleted, for as-of searches."""
    embedder = LangChainEmbedder(VectorStoreIntegrationTests.get_embeddings(), name=EMBEDDINGS)
    memory = TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
    )
    store = TemporalVectorStore(memory)
    store.add_documents([Document("foo"), Document("bar")], ids=["1", "2"])
    before = memory.clock.now()
    store.add_documents([Document("new foo")], ids=["1"])
    store.delete(["2"])
    assert [d.page_content for d in store.similarity_search("foo", k=5)] == ["new foo"]
    then = store.similarity_search("foo", k=5, known_at=before)
    assert sorted((d.id, d.page_content) for d in then) == [("1", "foo"), ("2", "bar")]
