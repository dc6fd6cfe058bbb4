"""LangChain's standard vector-store tests, run whole, sync and async (nothing overridden),
against TemporalVectorStore on the embedded stack of ``TemporalMemory.open``: an SQLite ledger
and a Chroma index in one folder, embedded by the suite's own embeddings, and by the packaged
MiniLM (the default embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_temporal import CoreEmbeddings, LangChainEmbedder, TemporalVectorStore
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.memory import MemoryConfig, TemporalMemory


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()  # loaded once for the module


class TestEmbeddedStackStandard(VectorStoreIntegrationTests):
    """SQLite + Chroma, embedded by the suite's deterministic fake embeddings."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:
        embedder = LangChainEmbedder(self.get_embeddings(), name="langchain-tests-fake-6")
        with TemporalMemory.open(
            tmp_path / "memory", config=MemoryConfig(embedder=embedder)
        ) as memory:
            yield TemporalVectorStore(memory)


class TestDefaultStackStandard(VectorStoreIntegrationTests):
    """The default of ``TemporalMemory.open``: SQLite + Chroma + the packaged MiniLM."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[VectorStore]:
        with TemporalMemory.open(
            tmp_path / "memory", config=MemoryConfig(embedder=minilm)
        ) as memory:
            yield TemporalVectorStore(memory)


def test_from_texts_in_a_folder_reopens_as_the_default_memory(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """A store built from a folder with the MiniLM (as CoreEmbeddings) is the folder of
    ``TemporalMemory.open``: reopened by default, the same Documents, ids and history."""
    folder = tmp_path / "notes"
    store = TemporalVectorStore.from_texts(
        ["Deploys happen on Tuesdays.", "On-call rotates weekly."],
        CoreEmbeddings(minilm),
        ids=["deploys", "on-call"],
        path=folder,
    )
    between = datetime.now(UTC)
    store.add_texts(["Deploys happen on Wednesdays."], ids=["deploys"])
    store.close()
    with TemporalMemory.open(folder, config=MemoryConfig(embedder=minilm)) as memory:
        reopened = TemporalVectorStore(memory)
        assert [d.page_content for d in reopened.get_by_ids(["deploys", "on-call"])] == [
            "Deploys happen on Wednesdays.",
            "On-call rotates weekly.",
        ]
        then = reopened.similarity_search("When are deploys?", k=1, known_at=between)
        tuesdays = ("deploys", "Deploys happen on Tuesdays.")
        assert [(d.id, d.page_content) for d in then] == [tuesdays]
