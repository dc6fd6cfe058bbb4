"""LangChain's standard vector-store tests, run whole, sync and async (nothing overridden),
against TemporalVectorStore on the embedded stack of ``TemporalMemory.open``: an SQLite ledger
and a Chroma index in one folder, embedded by the suite's own embeddings, and by the packaged
MiniLM (the default embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_temporal import LangChainEmbedder, TemporalVectorStore
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.memory import TemporalMemory


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()  # loaded once for the module


class TestEmbeddedStackStandard(VectorStoreIntegrationTests):
    """SQLite + Chroma, embedded by the suite's deterministic fake embeddings."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:
        embedder = LangChainEmbedder(self.get_embeddings(), name="langchain-tests-fake-6")
        with TemporalMemory.open(tmp_path / "memory", embedder=embedder) as memory:
            yield TemporalVectorStore(memory)


class TestDefaultStackStandard(VectorStoreIntegrationTests):
    """The default of ``TemporalMemory.open``: SQLite + Chroma + the packaged MiniLM."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[VectorStore]:
        with TemporalMemory.open(tmp_path / "memory", embedder=minilm) as memory:
            yield TemporalVectorStore(memory)
