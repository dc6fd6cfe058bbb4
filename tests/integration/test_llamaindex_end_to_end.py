"""LlamaIndex end to end on the embedded stack: TemporalVectorStore over SQLite + Chroma + the
real MiniLM, VectorStoreIndex / retrievers / query engines with MockLLM, an IngestionPipeline,
the async build path, pickling, and the contrast with LlamaIndex's FixedRecencyPostprocessor.

The network is refused throughout: LlamaIndex's tokenizer (tiktoken's cl100k_base) and NLTK
data ship inside llama-index-core (``llama_index/core/_static``), so nothing is downloaded.
"""

from __future__ import annotations

import pickle
import socket
import sys
import types
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.postprocessor import FixedRecencyPostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from llamaindex_temporal import CoreEmbedding, TemporalNodePostprocessor, TemporalVectorStore
from shared_core.clock import ManualClock
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.memory import MemoryConfig

START = datetime(2024, 6, 1, tzinfo=UTC)
QUESTION = "Where does Maria live?"
HOME = ("Berlin", "Lisbon", "Porto")


def d(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def documents() -> list[Document]:
    """Maria's home changes (Berlin 2019 -> Lisbon 2022 -> Porto 2024); her job and favourite
    food never change; a report deadline is unrelated."""

    def home(city: str, year: int, verb: str) -> Document:
        return Document(
            id_=f"home-{year}", text=f"Maria {verb} {city}.",
            metadata={"subject": "Maria", "relation": "lives in", "object": city,
                      "valid_from": d(year).isoformat()},
        )  # fmt: skip

    return [
        Document(
            id_="job",
            text="Maria works as a nurse at the city hospital.",
            metadata={
                "subject": "Maria",
                "relation": "works as",
                "object": "nurse",
                "valid_from": d(2018).isoformat(),
            },
        ),
        Document(
            id_="food",
            text="Maria's favourite food is grilled sardines.",
            metadata={"valid_from": d(2017).isoformat()},
        ),
        home("Berlin", 2019, "lives in"),
        home("Lisbon", 2022, "moved to"),
        home("Porto", 2024, "moved to"),
        Document(
            id_="report",
            text="The quarterly report is due at the end of March.",
            metadata={"valid_from": d(2023).isoformat()},
        ),
    ]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


class World:
    """A store over the embedded stack, an index over it, and when each document was recorded."""

    def __init__(self, folder: Path, minilm: MiniLMEmbedder) -> None:
        self.clock = ManualClock(START)
        self.store = TemporalVectorStore.open(
            folder, config=MemoryConfig(embedder=minilm, clock=self.clock)
        )
        self.index = VectorStoreIndex.from_vector_store(
            self.store, embed_model=CoreEmbedding(minilm)
        )
        self.recorded: dict[str, datetime] = {}

    def insert_all(self) -> None:
        for document in documents():
            self.recorded[document.doc_id] = self.clock.advance(timedelta(days=1))
            self.index.insert(document)
        self.clock.advance(timedelta(days=1))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Iterator[World]:
    world = World(tmp_path_factory.mktemp("llamaindex") / "memory", minilm)
    world.insert_all()
    yield world
    world.store.close()


def texts(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.get_content() for n in nodes]


def cities(nodes: list[NodeWithScore]) -> set[str]:
    return {city for city in HOME for text in texts(nodes) if city in text}


# ---------------------------------------------------------------- only current facts
def test_only_current_facts_reach_the_synthesiser(world: World) -> None:
    engine = world.index.as_query_engine(
        llm=MockLLM(), similarity_top_k=4, node_postprocessors=[TemporalNodePostprocessor()]
    )
    response = engine.query(QUESTION)
    assert cities(response.source_nodes) == {"Porto"}
    assert "Maria works as a nurse at the city hospital." in texts(response.source_nodes)
    prompt = str(response)  # MockLLM answers with the prompt it was given
    assert "Maria moved to Porto." in prompt
    assert not {"Berlin", "Lisbon"} & {city for city in HOME if city in prompt}


async def test_with_history_retrieved_the_postprocessor_drops_the_stale_versions(
    world: World,
) -> None:
    raw = world.index.as_retriever(
        similarity_top_k=6, vector_store_kwargs={"include_history": True}
    ).retrieve(QUESTION)
    assert cities(raw) == set(HOME)  # the append-only view: every version

    engine = world.index.as_query_engine(
        llm=MockLLM(),
        similarity_top_k=6,
        vector_store_kwargs={"include_history": True},
        node_postprocessors=[TemporalNodePostprocessor()],
    )
    response = await engine.aquery(QUESTION)
    assert cities(response.source_nodes) == {"Porto"}
    porto = next(n for n in response.source_nodes if "Porto" in n.node.get_content())
    shadows = {s["text"] for s in porto.node.metadata["shadows"]}
    assert shadows == {"Maria lives in Berlin.", "Maria moved to Lisbon."}
    prompt = str(response)
    assert "Berlin" not in prompt
    assert "Lisbon" not in prompt


# ---------------------------------------------------------------- the past
@pytest.mark.parametrize(
    ("options", "city"),
    [
        ({"valid_at": "2020-06-01T00:00:00Z"}, "Berlin"),
        ({"valid_at": d(2023)}, "Lisbon"),
        ({}, "Porto"),
    ],
)
def test_an_as_of_retriever_sees_the_past(
    world: World, options: dict[str, object], city: str
) -> None:
    retriever = world.index.as_retriever(similarity_top_k=3, vector_store_kwargs=options)
    assert cities(retriever.retrieve(QUESTION)) == {city}


async def test_a_known_at_retriever_sees_what_was_recorded_then(world: World) -> None:
    before_porto = world.recorded["home-2024"] - timedelta(hours=1)
    retriever = world.index.as_retriever(
        similarity_top_k=3, vector_store_kwargs={"known_at": before_porto.isoformat()}
    )
    assert cities(await retriever.aretrieve(QUESTION)) == {"Lisbon"}


# ---------------------------------------------------------------- contrast
def test_fixed_recency_drops_facts_that_never_changed_ours_keeps_them(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    provide_pandas_to_datetime(monkeypatch)
    retrieved = world.index.as_retriever(
        similarity_top_k=6, vector_store_kwargs={"include_history": True}
    ).retrieve("What do we know about Maria?")
    assert len(retrieved) == 6
    bundle = QueryBundle("What do we know about Maria?")
    recency = FixedRecencyPostprocessor(top_k=2, date_key="valid_from")
    theirs = texts(recency.postprocess_nodes(retrieved, bundle))
    ours = texts(TemporalNodePostprocessor().postprocess_nodes(retrieved, bundle))
    never_changed = {
        "Maria works as a nurse at the city hospital.",
        "Maria's favourite food is grilled sardines.",
    }
    assert not never_changed & set(theirs)  # newest-first keeps only the two newest
    assert never_changed <= set(ours)
    assert "Maria moved to Porto." in ours
    assert not {"Maria lives in Berlin.", "Maria moved to Lisbon."} & set(ours)


def provide_pandas_to_datetime(monkeypatch: pytest.MonkeyPatch) -> None:
    """FixedRecencyPostprocessor imports pandas for ``pd.to_datetime(values).argsort()`` only.
    pandas is not among this project's dependencies; without it, a stand-in provides exactly
    that call for ISO-8601 strings with an offset (the sorting logic stays LlamaIndex's)."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("pandas")
        stand_in.to_datetime = lambda values: np.array(  # type: ignore[attr-defined]
            [datetime.fromisoformat(value).timestamp() for value in values]
        )
        monkeypatch.setitem(sys.modules, "pandas", stand_in)


# ---------------------------------------------------------------- writing paths
def test_an_ingestion_pipeline_writes_into_the_store(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    clock = ManualClock(START)
    store = TemporalVectorStore.open(
        tmp_path / "memory", config=MemoryConfig(embedder=minilm, clock=clock)
    )
    try:
        pipeline = IngestionPipeline(
            transformations=[SentenceSplitter(chunk_size=256), CoreEmbedding(minilm)],
            vector_store=store,
        )
        nodes = pipeline.run(documents=documents())
        assert len(nodes) == len(documents())
        index = VectorStoreIndex.from_vector_store(store, embed_model=CoreEmbedding(minilm))
        assert cities(index.as_retriever(similarity_top_k=3).retrieve(QUESTION)) == {"Porto"}
        current = index.as_retriever(similarity_top_k=6).retrieve("Maria")
        assert {n.node.ref_doc_id for n in current} == {"job", "food", "home-2024", "report"}
    finally:
        store.close()


def test_deleting_a_document_retires_it_and_keeps_its_past(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    world = World(tmp_path / "memory", minilm)
    try:
        world.insert_all()
        before = world.clock.advance(timedelta(days=1))
        world.clock.advance(timedelta(days=1))
        world.index.delete_ref_doc("home-2024")  # Porto withdrawn: Lisbon is current again
        now = world.index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
        assert cities(now) == {"Lisbon"}
        then = world.index.as_retriever(
            similarity_top_k=3, vector_store_kwargs={"known_at": before}
        ).retrieve(QUESTION)
        assert cities(then) == {"Porto"}
    finally:
        world.store.close()


# ---------------------------------------------------------------- what broke for new users
async def test_async_concurrency_from_vector_store_index_is_accepted(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """VectorStoreIndex passes the keywords it does not take (here ``async_concurrency``) on to
    the store's ``async_add``; the store ignores them, as LlamaIndex's own stores do. (On a
    running loop LlamaIndex builds on a loop of its own and closes it; called from sync code it
    would leave the loop it creates open.)"""
    store = TemporalVectorStore.open(tmp_path / "memory", config=MemoryConfig(embedder=minilm))
    try:
        index = VectorStoreIndex.from_documents(
            documents(),
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=CoreEmbedding(minilm),
            use_async=True,
            insert_batch_size=2,
            async_concurrency=2,
        )
        assert cities(index.as_retriever(similarity_top_k=3).retrieve(QUESTION)) == {"Porto"}
        assert len(store.get_nodes(include_history=True)) == len(documents())
    finally:
        store.close()


def test_an_index_over_an_opened_store_survives_pickling(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """The store is pickled as its folder and options, and reopened from them."""
    store = TemporalVectorStore.open(
        tmp_path / "memory", namespace="maria", config=MemoryConfig(embedder=minilm)
    )
    index = VectorStoreIndex.from_vector_store(store, embed_model=CoreEmbedding(minilm))
    for document in documents():
        index.insert(document)
    blob = pickle.dumps(index)
    store.close()  # an embedded folder is for one process at a time: reopened after closing

    copy = pickle.loads(blob)
    try:
        assert copy.vector_store is copy.storage_context.vector_store
        assert copy.vector_store.namespace == "maria"
        assert cities(copy.as_retriever(similarity_top_k=3).retrieve(QUESTION)) == {"Porto"}
        faro = Document(
            text="Maria moved to Faro.", id_="home-2025",
            metadata={"subject": "Maria", "relation": "lives in", "object": "Faro",
                      "valid_from": d(2025).isoformat()},
        )  # fmt: skip
        copy.insert(faro)  # the copy writes through its own reopened memory
        (now,) = copy.as_retriever(similarity_top_k=1).retrieve(QUESTION)
        assert now.node.get_content() == "Maria moved to Faro."
    finally:
        copy.vector_store.close()


def test_an_option_that_does_not_pickle_fails_when_pickled_not_when_loaded(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = TemporalVectorStore.open(
        tmp_path / "memory", config=MemoryConfig(embedder=minilm, clock=ManualClock(START))
    )
    try:
        with pytest.raises(TypeError, match="pickle"):
            pickle.dumps(store)  # the ManualClock holds a lock
    finally:
        store.close()
