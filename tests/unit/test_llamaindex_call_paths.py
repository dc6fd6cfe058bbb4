"""Every way LlamaIndex 0.14.25 (llama-index-core) calls a vector store, driven through its own
classes over TemporalVectorStore on the in-memory fakes, with the keywords each call passes.

The audit behind it (grep of llama_index/core for the store's methods):

- ``add`` / ``async_add``: ``VectorStoreIndex`` (build, ``insert``, ``insert_nodes``,
  ``ainsert*``, ``update_ref_doc``, ``refresh_ref_docs``) passes every keyword it was given and
  does not take itself; ``IngestionPipeline``, ``VectorMemoryBlock``, ``PropertyGraphIndex``
  and ``DocumentSummaryIndex`` pass none. The store uses ``namespace`` and ``valid_from`` and
  ignores the rest (``async_concurrency`` among them).
- ``delete`` / ``adelete``, ``delete_nodes`` / ``adelete_nodes``: only the caller's own
  ``delete_kwargs`` (``VectorStoreIndex`` keeps ``delete_from_docstore``); the pipeline's
  upserts pass none. The store takes ``namespace`` and refuses the rest by name.
- ``query`` / ``aquery``: only the caller's ``vector_store_kwargs``; the store takes the search
  options and refuses the rest by name. Of ``VectorStoreQuery``'s fields it reads
  ``query_str``, ``similarity_top_k``, ``filters``, ``doc_ids``, ``node_ids`` and ``mode``.
- ``clear`` (``VectorMemory.reset``), ``persist`` (``StorageContext.persist``; inherited, a
  no-op: the memory is already durable).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import Memory, VectorMemoryBlock
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from llamaindex_temporal import CoreEmbedding, TemporalVectorStore
from shared_core.embedders.base import HashingEmbedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

QUESTION = "Where does Maria live?"
DEFAULT_QUERY = VectorStoreQuery()
Call = tuple[str, tuple[str, ...]]


class RecordingStore(TemporalVectorStore):
    """TemporalVectorStore that records each call: (method, the keywords it was given), and
    for queries the ``VectorStoreQuery`` fields that were set."""

    _calls: list[Call] = PrivateAttr(default_factory=list)
    _inner: int = PrivateAttr(default=0)  # > 0 while an async method runs its sync twin

    def calls(self) -> set[Call]:
        found = set(self._calls)
        self._calls.clear()
        return found

    def _saw(self, method: str, kwargs: dict[str, Any]) -> None:
        if not self._inner:
            self._calls.append((method, tuple(sorted(kwargs))))

    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        self._saw("add", kwargs)
        return super().add(nodes, **kwargs)

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        self._saw("async_add", kwargs)
        return await super().async_add(nodes, **kwargs)

    def delete(self, ref_doc_id: str, **kwargs: Any) -> None:
        self._saw("delete", kwargs)
        super().delete(ref_doc_id, **kwargs)

    async def adelete(self, ref_doc_id: str, **kwargs: Any) -> None:
        self._saw("adelete", kwargs)
        self._inner += 1
        try:
            await super().adelete(ref_doc_id, **kwargs)
        finally:
            self._inner -= 1

    def delete_nodes(self, node_ids: Any = None, filters: Any = None, **kwargs: Any) -> None:
        self._saw("delete_nodes", kwargs)
        super().delete_nodes(node_ids, filters, **kwargs)

    async def adelete_nodes(self, node_ids: Any = None, filters: Any = None, **kwargs: Any) -> None:
        self._saw("adelete_nodes", kwargs)
        self._inner += 1
        try:
            await super().adelete_nodes(node_ids, filters, **kwargs)
        finally:
            self._inner -= 1

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        self._saw("query", kwargs)
        self._calls.append(("query fields", _set_fields(query)))
        return super().query(query, **kwargs)

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        self._saw("aquery", kwargs)
        self._calls.append(("query fields", _set_fields(query)))
        return await super().aquery(query, **kwargs)


def _set_fields(query: VectorStoreQuery) -> tuple[str, ...]:
    return tuple(
        sorted(
            field.name
            for field in fields(query)
            if getattr(query, field.name) != getattr(DEFAULT_QUERY, field.name)
        )
    )


@pytest.fixture
def store() -> Iterator[RecordingStore]:
    memory = TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=HashingEmbedder())
    )
    with memory:
        yield RecordingStore(memory)


def home(city: str, year: int, doc: str) -> Document:
    return Document(
        text=f"Maria lives in {city}.", id_=doc,
        metadata={"subject": "Maria", "relation": "lives in", "object": city,
                  "valid_from": f"{year}-01-01T00:00:00+00:00"},
    )  # fmt: skip


def storage(store: TemporalVectorStore) -> StorageContext:
    return StorageContext.from_defaults(vector_store=store)


def texts(store: TemporalVectorStore, **options: Any) -> list[str]:
    """What a query sees now (not recorded)."""
    query = VectorStoreQuery(query_str=QUESTION, similarity_top_k=5)
    found = TemporalVectorStore.query(store, query, **options).nodes or []
    return sorted(node.get_content() for node in found)


# ---------------------------------------------------------------- writes
def test_index_builds_pass_their_leftover_keywords_and_add_ignores_them(
    store: RecordingStore,
) -> None:
    VectorStoreIndex.from_documents(
        [home("Berlin", 2019, "a"), home("Lisbon", 2022, "b"), home("Porto", 2024, "c")],
        storage_context=storage(store),
        embed_model=MockEmbedding(embed_dim=8),
        insert_batch_size=2,
        async_concurrency=2,
    )
    assert store.calls() == {("add", ("async_concurrency",))}
    assert texts(store) == ["Maria lives in Porto."]


async def test_the_async_build_passes_them_to_async_add(store: RecordingStore) -> None:
    """(A test on a running loop: LlamaIndex then builds on a loop of its own, and closes it.)"""
    VectorStoreIndex.from_documents(
        [home("Berlin", 2019, "a"), home("Lisbon", 2022, "b"), home("Porto", 2024, "c")],
        storage_context=storage(store),
        embed_model=MockEmbedding(embed_dim=8),
        use_async=True,
        insert_batch_size=2,
        async_concurrency=2,
        show_progress=False,
    )
    assert store.calls() == {("async_add", ("async_concurrency",))}
    assert texts(store) == ["Maria lives in Porto."]


async def test_inserts_reach_the_store_with_the_keywords_it_uses(store: RecordingStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    index.insert(home("Berlin", 2019, "a"), namespace="maria")  # also seen by the splitter
    index.insert_nodes([TextNode(text="Maria keeps a cat.")], namespace="maria")
    await index.ainsert(home("Lisbon", 2022, "b"), namespace="maria")
    node = TextNode(text="Maria keeps a dog.")
    await index.ainsert_nodes([node], valid_from="2023-01-01T00:00:00Z", namespace="maria")
    assert store.calls() == {
        ("add", ("namespace",)),
        ("async_add", ("namespace",)),
        ("async_add", ("namespace", "valid_from")),
    }
    assert texts(store) == []
    assert texts(store, namespace="maria") == [
        "Maria keeps a cat.",
        "Maria keeps a dog.",
        "Maria lives in Lisbon.",
    ]


def test_an_ingestion_pipeline_upserting_deletes_then_adds(store: RecordingStore) -> None:
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(), CoreEmbedding(store.memory.embedder)],
        vector_store=store,
        docstore=SimpleDocumentStore(),
        docstore_strategy=DocstoreStrategy.UPSERTS,
    )
    pipeline.run(documents=[home("Berlin", 2019, "home")])
    pipeline.run(documents=[home("Lisbon", 2022, "home")])  # the same document, changed
    assert store.calls() == {("add", ()), ("delete", ())}
    assert texts(store) == ["Maria lives in Lisbon."]


async def test_an_async_ingestion_pipeline_upserting_deletes_then_adds(
    store: RecordingStore,
) -> None:
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(), CoreEmbedding(store.memory.embedder)],
        vector_store=store,
        docstore=SimpleDocumentStore(),
        docstore_strategy=DocstoreStrategy.UPSERTS_AND_DELETE,
    )
    await pipeline.arun(documents=[home("Berlin", 2019, "home"), home("Paris", 2019, "work")])
    await pipeline.arun(documents=[home("Lisbon", 2022, "home")])  # "work" is gone
    assert store.calls() == {("async_add", ()), ("adelete", ())}
    assert texts(store) == ["Maria lives in Lisbon."]


# ---------------------------------------------------------------- deletes
async def test_index_deletes_pass_only_the_callers_keywords(store: RecordingStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    for document in (home("Berlin", 2019, "a"), home("Lisbon", 2022, "b")):
        index.insert(document)
    index.insert_nodes([TextNode(text="Maria keeps a cat.", id_="cat")])
    index.insert_nodes([TextNode(text="Maria keeps a dog.", id_="dog")])
    store.calls()
    index.delete_ref_doc("b", delete_from_docstore=True, namespace="default")
    assert texts(store) == ["Maria keeps a cat.", "Maria keeps a dog.", "Maria lives in Berlin."]
    await index.adelete_ref_doc("a", delete_from_docstore=True)
    index.delete_nodes(["cat"], delete_from_docstore=True)
    await index.adelete_nodes(["dog"], namespace="default")
    assert store.calls() == {
        ("delete", ("namespace",)),
        ("adelete", ()),
        ("delete_nodes", ()),
        ("adelete_nodes", ("namespace",)),
    }
    assert texts(store) == []


def test_updating_and_refreshing_documents_delete_then_insert(store: RecordingStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    index.insert(home("Berlin", 2019, "home"))
    index.update_ref_doc(home("Lisbon", 2022, "home"), insert_kwargs={"namespace": "default"})
    cat = Document(text="Maria keeps a cat.", id_="pet")
    assert index.refresh_ref_docs([home("Porto", 2024, "home"), cat]) == [True, True]
    assert store.calls() == {("add", ()), ("add", ("namespace",)), ("delete", ())}
    assert texts(store) == ["Maria keeps a cat.", "Maria lives in Porto."]


# ---------------------------------------------------------------- reads
async def test_retrievers_and_query_engines_pass_their_query_fields(
    store: RecordingStore,
) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    for document in (home("Berlin", 2019, "a"), home("Lisbon", 2022, "b")):
        index.insert(document)
    store.calls()
    past = {"valid_at": "2020-01-01T00:00:00Z"}
    hybrid_only = {"alpha": 0.5, "sparse_top_k": 3, "hybrid_top_k": 3}  # not read
    retriever = index.as_retriever(similarity_top_k=3, vector_store_kwargs=past, **hybrid_only)
    assert [n.get_content() for n in retriever.retrieve(QUESTION)] == ["Maria lives in Berlin."]
    assert [n.get_content() for n in await retriever.aretrieve(QUESTION)] == [
        "Maria lives in Berlin."
    ]
    maria = MetadataFilters(filters=[MetadataFilter(key="object", value="Lisbon")])
    engine = index.as_query_engine(llm=MockLLM(), filters=maria, doc_ids=["b"])
    assert [n.get_content() for n in engine.query(QUESTION).source_nodes] == [
        "Maria lives in Lisbon."
    ]
    assert store.calls() == {
        ("query", ("valid_at",)),
        ("aquery", ("valid_at",)),
        ("query", ()),
        # node_ids=[] from as_retriever; query_embedding stays None (is_embedding_query=False)
        ("query fields", ("alpha", "hybrid_top_k", "node_ids", "query_str",
                          "similarity_top_k", "sparse_top_k")),
        ("query fields", ("doc_ids", "filters", "node_ids", "query_str", "similarity_top_k")),
    }  # fmt: skip


def test_persisting_the_storage_context_leaves_the_memory_as_it_is(
    store: RecordingStore, tmp_path: Path
) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=8))
    index.insert(home("Berlin", 2019, "a"))
    index.storage_context.persist(persist_dir=str(tmp_path))
    assert texts(store) == ["Maria lives in Berlin."]
    store.clear()
    assert texts(store) == []


# ---------------------------------------------------------------- memory blocks
@pytest.fixture
async def chat_engine() -> AsyncIterator[AsyncEngine]:
    """The chat store's database, disposed of after the test (else aiosqlite warns)."""
    engine = create_async_engine("sqlite+aiosqlite:///:memory:")
    yield engine
    await engine.dispose()


def chat_memory(store: TemporalVectorStore, engine: AsyncEngine, session: str) -> Memory:
    block = VectorMemoryBlock(
        vector_store=store, embed_model=MockEmbedding(embed_dim=8), similarity_top_k=3
    )
    return Memory.from_defaults(
        session_id=session,
        token_limit=400,
        chat_history_token_ratio=0.05,  # older turns leave the chat history at once
        token_flush_size=10,
        memory_blocks=[block],
        async_engine=engine,
    )


async def chat(memory: Memory, *said: str) -> None:
    """The user says each of ``said``; the assistant notes it."""
    for text in said:
        await memory.aput(ChatMessage(role="user", content=text))
        await memory.aput(ChatMessage(role="assistant", content="Noted."))


async def test_a_vector_memory_block_remembers_flushed_turns_per_session(
    store: RecordingStore, chat_engine: AsyncEngine
) -> None:
    maria = chat_memory(store, chat_engine, "maria")
    await chat(maria, "I live in Berlin.", "My favourite food is sardines.", "Any news?")
    assert store.calls() <= {("async_add", ())}
    flushed = store.get_nodes()
    assert flushed
    assert {node.metadata["session_id"] for node in flushed} == {"maria"}

    recalled = await maria.aget(input="Where do I live?")
    system = recalled[0]
    assert system.role == "system"
    assert "I live in Berlin." in (system.content or "")
    assert ("aquery", ()) in store.calls()

    bob = chat_memory(store, chat_engine, "bob")  # the block filters by session_id
    await chat(bob, "Hello.", "Where do I live?")
    assert all("Berlin" not in (m.content or "") for m in await bob.aget())


async def test_a_chat_engine_sees_only_the_current_keyed_fact(
    store: RecordingStore, chat_engine: AsyncEngine
) -> None:
    """Facts the application writes into the same store supersede at write time, so the
    memory block recalls the current one only."""
    maria = chat_memory(store, chat_engine, "maria")
    for city, year in (("Berlin", 2019), ("Lisbon", 2022)):
        fact = home(city, year, f"profile-{year}")
        fact.metadata["session_id"] = "maria"
        store.add([fact])
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=maria)
    reply = await engine.achat("Where do I live?")
    prompt = str(reply)  # MockLLM answers with the prompt it was given
    assert "Maria lives in Lisbon." in prompt
    assert "Berlin" not in prompt
