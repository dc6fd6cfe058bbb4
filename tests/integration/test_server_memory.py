"""TemporalMemory.connect on real servers (PostgreSQL + a Chroma server), through both adapters
unchanged: two memories in one process stand for two workers sharing the servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.documents import Document
from llama_index.core import Document as LlamaDocument
from llama_index.core import VectorStoreIndex

from langchain_temporal import TemporalRetriever
from llamaindex_temporal import CoreEmbedding, TemporalVectorStore
from shared_core import ChromaIndex, HashingEmbedder, MemoryConfig, PostgresLedger, TemporalMemory
from shared_core.errors import InvalidInputError
from tests.servers import drop_schema

QUESTION = "Where does Maria live?"


@pytest.fixture
def servers(postgres_url: str, chroma_url: str) -> Iterator[dict[str, str]]:
    """Connection options for one memory of this test: its own schema and collections."""
    name = f"s{uuid.uuid4().hex[:12]}"
    yield {"ledger": postgres_url, "index": chroma_url, "schema": name, "prefix": name}
    ChromaIndex.connect(chroma_url, prefix=name).drop()
    drop_schema(postgres_url, name)


def connect(servers: dict[str, str]) -> TemporalMemory:
    return TemporalMemory.connect(
        **servers, config=MemoryConfig(embedder=HashingEmbedder(dimension=64))
    )


def test_a_worker_sees_what_another_wrote_through_langchain(servers: dict[str, str]) -> None:
    maria = {"subject": "Maria", "relation": "lives in"}
    with connect(servers) as one, connect(servers) as two:
        assert isinstance(one.ledger, PostgresLedger)
        writer = TemporalRetriever(memory=one, k=3)
        reader = TemporalRetriever(memory=two, k=3)
        berlin = {**maria, "object": "Berlin", "valid_from": "2019-01-01T00:00Z"}
        lisbon = {**maria, "object": "Lisbon", "valid_from": "2022-05-01T00:00Z"}
        writer.add_documents([Document("Maria lives in Berlin.", metadata=berlin)])
        writer.add_documents([Document("Maria moved to Lisbon.", metadata=lisbon)])
        assert [d.page_content for d in reader.invoke(QUESTION)] == ["Maria moved to Lisbon."]
        then = reader.invoke(QUESTION, valid_at=datetime(2020, 1, 1, tzinfo=UTC))
        assert [d.metadata["object"] for d in then] == ["Berlin"]


def test_a_worker_sees_what_another_wrote_through_llamaindex(servers: dict[str, str]) -> None:
    with connect(servers) as one, connect(servers) as two:
        writer = VectorStoreIndex.from_vector_store(
            TemporalVectorStore(one), embed_model=CoreEmbedding(one.embedder)
        )
        for city, year in (("Berlin", 2019), ("Lisbon", 2022)):
            meta = {"subject": "Maria", "relation": "lives in", "object": city}
            meta["valid_from"] = f"{year}-01-01T00:00:00Z"
            writer.insert(LlamaDocument(text=f"Maria lives in {city}.", metadata=meta))
        reader = VectorStoreIndex.from_vector_store(
            TemporalVectorStore(two), embed_model=CoreEmbedding(two.embedder)
        )
        found = reader.as_retriever().retrieve(QUESTION)
        assert [n.text for n in found] == ["Maria lives in Lisbon."]


@pytest.mark.parametrize(
    ("ledger", "index", "field"),
    [("mysql://db/x", "index", "ledger"), ("ledger.sqlite", "ftp://x", "index")],
)
def test_locations_of_another_kind_name_the_field(
    ledger: str, index: str, field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match=field):
        TemporalMemory.connect(
            ledger=ledger, index=index, config=MemoryConfig(embedder=HashingEmbedder(dimension=8))
        )
