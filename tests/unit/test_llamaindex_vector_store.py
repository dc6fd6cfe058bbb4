"""TemporalVectorStore on the in-memory fakes: what it adds to the conformance suite (time,
retire-not-destroy, ids, errors, LlamaIndex wiring, native async)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import (
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from llamaindex_temporal import CoreEmbedding, TemporalVectorStore
from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import CallableEmbedder, HashingEmbedder
from shared_core.errors import InvalidInputError, NotPicklableError
from shared_core.extractors.base import VALID_FROM_SOURCE
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.keying_llm import ana_history, keyed_memory

START = datetime(2024, 1, 1, tzinfo=UTC)
QUESTION = "where does Maria live"


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
    ) as memory:  # fmt: skip
        yield memory


@pytest.fixture
def store(memory: TemporalMemory) -> TemporalVectorStore:
    return TemporalVectorStore(memory)


def node(node_id: str, text: str, doc: str | None = None, **metadata: Any) -> TextNode:
    relationships = {}
    if doc is not None:
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
    return TextNode(id_=node_id, text=text, metadata=metadata, relationships=relationships)


def lives(node_id: str, city: str, year: int, doc: str) -> TextNode:
    return node(
        node_id, f"Maria lives in {city}.", doc,
        subject="Maria", relation="lives in", object=city, valid_from=d(year).isoformat(),
    )  # fmt: skip


def timeline(store: TemporalVectorStore, clock: ManualClock) -> None:
    """Maria: Berlin (2019, doc-a) -> Lisbon (2022, doc-b) -> Porto (2024, doc-c), each
    recorded a day apart, and a fact that never changes."""
    for node_id, city, year, doc in (
        ("berlin", "Berlin", 2019, "doc-a"),
        ("lisbon", "Lisbon", 2022, "doc-b"),
        ("porto", "Porto", 2024, "doc-c"),
    ):
        clock.advance(timedelta(days=1))
        store.add([lives(node_id, city, year, doc)])
    clock.advance(timedelta(days=1))
    store.add([node("sardines", "Maria's favourite food is grilled sardines.", "doc-d")])


def ask(store: TemporalVectorStore, k: int = 5, **options: Any) -> list[str]:
    result = store.query(VectorStoreQuery(query_str=QUESTION, similarity_top_k=k), **options)
    return list(result.ids or [])


# ---------------------------------------------------------------- the extra and the import
def test_import_without_llama_index_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['llama_index'] = None\n"
        "try:\n    import llamaindex_temporal\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.startswith("MissingDependencyError")
    assert 'pip install "temporal-rag[llamaindex]"' in run.stdout


def test_importing_the_adapter_loads_no_heavy_backend() -> None:
    code = (
        "import sys, llamaindex_temporal\n"
        "heavy = ('chromadb', 'sentence_transformers', 'torch')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


# ---------------------------------------------------------------- time
def test_current_state_by_default(store: TemporalVectorStore, clock: ManualClock) -> None:
    timeline(store, clock)
    assert sorted(ask(store)) == ["porto", "sardines"]


@pytest.mark.parametrize(
    "valid_at", [d(2020), "2020-01-01T00:00:00Z", d(2020).timestamp(), "2020-01-01T01:00+01:00"]
)
def test_valid_at_in_any_supported_form_sees_the_past(
    store: TemporalVectorStore, clock: ManualClock, valid_at: object
) -> None:
    timeline(store, clock)
    assert "berlin" in ask(store, valid_at=valid_at)
    assert not {"lisbon", "porto"} & set(ask(store, valid_at=valid_at))


def test_known_at_sees_what_was_recorded_then(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    before_porto = START + timedelta(days=2, hours=12)  # Lisbon recorded, Porto not yet
    assert ask(store, known_at=before_porto) == ["lisbon"]


def test_include_history_with_a_detector_reports_shadows(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    result = store.query(
        VectorStoreQuery(query_str=QUESTION, similarity_top_k=5),
        include_history=True,
        detector=KeyConflictDetector(),
    )
    assert sorted(result.ids or []) == ["porto", "sardines"]
    porto = next(n for n in result.nodes or [] if n.node_id == "porto")
    shadows = porto.metadata["shadows"]
    assert sorted((s["id"], s["dominated_by"]) for s in shadows) == [
        ("berlin", "porto"),  # the key detector names the newest dominator
        ("lisbon", "porto"),
    ]
    shown = porto.get_content(metadata_mode=MetadataMode.LLM)
    assert "Berlin" not in shown
    assert "Lisbon" not in shown  # the stale texts never reach the LLM through metadata


def test_include_history_without_a_detector_returns_every_version(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    result = store.query(
        VectorStoreQuery(query_str=QUESTION, similarity_top_k=5), include_history=True
    )
    statuses = {n.node_id: n.metadata["status"] for n in result.nodes or []}
    assert statuses == {
        "berlin": "superseded",
        "lisbon": "superseded",
        "porto": "current",
        "sardines": "current",
    }


def test_namespaces_never_see_each_other(memory: TemporalMemory) -> None:
    alice, bob = TemporalVectorStore(memory, namespace="alice"), TemporalVectorStore(memory)
    alice.add([lives("a", "Berlin", 2019, "doc")])
    bob.add([lives("b", "Lisbon", 2019, "doc")], namespace="bob")
    assert ask(alice) == ["a"]
    assert ask(bob, namespace="bob") == ["b"]
    assert ask(bob) == []
    alice.clear()
    assert ask(bob, namespace="bob") == ["b"]


# ---------------------------------------------------------------- returned nodes and ids
def test_nodes_carry_the_fact_and_hide_bookkeeping_from_the_llm(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    result = store.query(VectorStoreQuery(query_str=QUESTION, similarity_top_k=1))
    (porto,) = result.nodes or []
    assert porto.node_id == "porto"
    assert porto.source_node is not None
    assert porto.source_node.node_id == "doc-c"
    assert porto.metadata["object"] == "Porto"
    assert porto.metadata["valid_from"] == "2024-01-01T00:00:00+00:00"
    assert porto.metadata["valid_to"] is None
    assert porto.metadata["status"] == "current"
    assert porto.metadata["recorded_at"] == (START + timedelta(days=3)).isoformat()
    fact = store.memory.ledger.get(porto.metadata["fact_id"])
    assert fact.object == "Porto"
    shown = porto.get_content(metadata_mode=MetadataMode.LLM)
    assert shown == "valid_from: 2024-01-01T00:00:00+00:00\n\nMaria lives in Porto."


def test_facts_written_without_the_store_answer_by_fact_id(store: TemporalVectorStore) -> None:
    added = store.memory.add("Maria lives in Porto.", subject="Maria", relation="lives in",
                             object="Porto")  # fmt: skip
    fact_id = added.fact_ids[0]
    assert ask(store) == [fact_id]
    assert [n.node_id for n in store.get_nodes([fact_id])] == [fact_id]
    store.delete_nodes([fact_id])
    assert ask(store) == []


def test_a_node_without_a_source_is_its_own_document(store: TemporalVectorStore) -> None:
    store.add([node("solo", "Maria keeps a cat.")])
    (got,) = store.get_nodes(["solo"])
    assert got.source_node is None
    store.delete("solo")
    assert ask(store) == []


FOOTER = "Shared footer text."


def footers(store: TemporalVectorStore) -> None:
    """A chunk repeated in two documents: before, the core merged it into the first one."""
    assert store.add([node("one", FOOTER, "doc-1")]) == ["one"]
    assert store.add([node("two", FOOTER, "doc-2")]) == ["two"]


def found(store: TemporalVectorStore, **query: Any) -> list[tuple[str, str | None]]:
    asked = VectorStoreQuery(query_str=FOOTER, similarity_top_k=5, **query)
    return sorted((n.node_id, n.ref_doc_id) for n in store.query(asked).nodes or [])


def test_get_nodes_finds_both_nodes_of_identical_text(store: TemporalVectorStore) -> None:
    footers(store)
    assert sorted(n.node_id for n in store.get_nodes()) == ["one", "two"]
    assert [n.node_id for n in store.get_nodes(["two"])] == ["two"]
    assert [n.ref_doc_id for n in store.get_nodes(["two"])] == ["doc-2"]


def test_a_chunk_repeated_in_a_second_document_is_found_by_doc_ids(
    store: TemporalVectorStore,
) -> None:
    footers(store)
    assert found(store, doc_ids=["doc-2"]) == [("two", "doc-2")]
    assert found(store, doc_ids=["doc-1"]) == [("one", "doc-1")]
    assert found(store) == [("one", "doc-1"), ("two", "doc-2")]


def test_deleting_the_second_document_removes_only_its_repeated_chunk(
    store: TemporalVectorStore,
) -> None:
    footers(store)
    store.delete("doc-2")
    assert found(store) == [("one", "doc-1")]


def test_deleting_the_first_document_leaves_the_seconds_repeated_chunk(
    store: TemporalVectorStore,
) -> None:
    footers(store)
    store.delete("doc-1")
    assert found(store) == [("two", "doc-2")]
    assert [n.node_id for n in store.get_nodes()] == ["two"]


def test_a_node_added_again_is_replaced_or_left_as_it_is(
    store: TemporalVectorStore, memory: TemporalMemory
) -> None:
    """Each node is a statement of its own now, so a node id written again must not add one."""
    footers(store)
    revision = memory.ledger.revision()
    assert store.add([node("one", FOOTER, "doc-1")]) == ["one"]
    assert memory.ledger.revision() == revision, "unchanged: nothing written"
    assert store.add([node("one", "A new footer.", "doc-1")]) == ["one"]
    assert sorted((n.node_id, n.text) for n in store.get_nodes()) == [
        ("one", "A new footer."),
        ("two", FOOTER),
    ]


async def test_identical_nodes_async_and_sync_agree(clock: ManualClock) -> None:
    def fresh() -> TemporalVectorStore:
        return TemporalVectorStore(
            TemporalMemory(
                ledger=InMemoryLedger(clock=clock),
                index=NumpyIndex(),
                config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
            )
        )

    plain, native = fresh(), fresh()
    nodes = [node("one", FOOTER, "doc-1"), node("two", FOOTER, "doc-2")]
    keyed = [lives("a", "Porto", 2024, "doc-1"), lives("b", "Porto", 2024, "doc-2")]
    assert plain.add(nodes) == await native.async_add(nodes) == ["one", "two"]
    assert plain.add(keyed) == await native.async_add(keyed) == ["a", "a"]
    assert plain.add(nodes) == await native.async_add(nodes) == ["one", "two"]
    assert found(plain, doc_ids=["doc-2"]) == found(native, doc_ids=["doc-2"])


def test_a_keyed_node_restating_another_nodes_value_is_that_nodes_statement(
    store: TemporalVectorStore,
) -> None:
    """The ledger keeps one statement of an exact restatement: add names the node holding it."""
    assert store.add([lives("a", "Porto", 2024, "doc-1")]) == ["a"]
    assert store.add([lives("b", "Porto", 2024, "doc-2")]) == ["a"]
    assert [n.node_id for n in store.get_nodes()] == ["a"]


async def test_async_methods_run_the_memory_off_the_event_loop(
    store: TemporalVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    calls: list[tuple[str, int]] = []
    for name in ("add_many", "select", "retire_where"):
        monkeypatch.setattr(
            store.memory, name, _recording(getattr(store.memory, name), name, calls)
        )
    index = store.memory.index  # a search reads the index (and the ledger) in a worker thread
    monkeypatch.setattr(index, "search", _recording(index.search, "search", calls))
    assert await store.async_add([lives("porto", "Porto", 2024, "doc-c")]) == ["porto"]
    result = await store.aquery(VectorStoreQuery(query_str=QUESTION, similarity_top_k=2))
    assert result.ids == ["porto"]
    assert [n.node_id for n in await store.aget_nodes(["porto"])] == ["porto"]
    await store.adelete("doc-c")
    await store.adelete_nodes(["porto"])
    await store.aclear()
    assert {name for name, _ in calls} == {"add_many", "search", "select", "retire_where"}
    assert all(thread != loop_thread for _, thread in calls)


def _recording(method: Any, name: str, calls: list[tuple[str, int]]) -> Any:
    def record(*args: Any, **kwargs: Any) -> Any:
        calls.append((name, threading.get_ident()))
        return method(*args, **kwargs)

    return record


# ---------------------------------------------------------------- deletes retire
def test_deleted_documents_stay_queryable_as_known_before_the_delete(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    before = clock.advance(timedelta(days=1))
    clock.advance(timedelta(days=1))
    store.delete("doc-d")
    assert ask(store) == ["porto"]
    assert sorted(ask(store, known_at=before)) == ["porto", "sardines"]
    assert store.get_nodes(["sardines"]) == []
    assert [n.node_id for n in store.get_nodes(["sardines"], known_at=before)] == ["sardines"]


def test_deleting_the_superseding_document_makes_the_older_value_current(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    clock.advance(timedelta(days=1))
    store.delete("doc-c")  # Porto withdrawn: it was never said
    assert sorted(ask(store)) == ["lisbon", "sardines"]


def test_delete_retires_history_too(store: TemporalVectorStore, clock: ManualClock) -> None:
    timeline(store, clock)
    clock.advance(timedelta(days=1))
    store.delete("doc-a")  # Berlin (superseded history) withdrawn
    assert "berlin" not in ask(store, valid_at=d(2020))
    assert "berlin" not in ask(store, include_history=True)


def test_clear_retires_everything_but_the_past_remains(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    before = clock.advance(timedelta(days=1))
    clock.advance(timedelta(days=1))
    store.clear()
    assert ask(store) == []
    assert sorted(ask(store, known_at=before)) == ["porto", "sardines"]
    assert store.memory.explain(store.get_nodes(["porto"], known_at=before)[0].metadata["fact_id"])


def test_delete_withdraws_a_statement_that_only_extended_another_version(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    store.add([lives("late", "Berlin", 2019, "doc-a")])
    clock.advance(timedelta(days=1))
    store.add([lives("early", "Berlin", 2017, "doc-b")])  # extends Berlin back to 2017
    clock.advance(timedelta(days=1))
    store.delete("doc-b")
    assert ask(store, valid_at=d(2018)) == []
    assert ask(store, valid_at=d(2020)) != [], "doc-a's own statement stays"


def test_delete_is_one_transaction(store: TemporalVectorStore, clock: ManualClock) -> None:
    store.add([lives("a1", "Berlin", 2019, "doc-a"), lives("a2", "Lisbon", 2021, "doc-a")])
    clock.advance(timedelta(days=1))
    before = len(store.memory.ledger.export()[0])
    store.delete("doc-a")
    statements, _ = store.memory.ledger.export()
    assert len(statements) == before, "withdrawals mark rows; they add none"
    assert len({s.retired_at for s in statements if s.retired_at is not None}) == 1


# ---------------------------------------------------------------- errors say what to do
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.query(VectorStoreQuery(query_str=QUESTION), k=3), "k is not supported"),
        (
            lambda s: s.query(
                VectorStoreQuery(query_str=QUESTION), valid_at=d(2020).replace(tzinfo=None)
            ),
            "naive",
        ),
        (
            lambda s: s.query(VectorStoreQuery(query_str=QUESTION), valid_at="2020-01-01"),
            "no UTC offset",
        ),
        (lambda s: s.query(VectorStoreQuery(query_embedding=[0.0] * 64)), "query_str"),
        (
            lambda s: s.query(VectorStoreQuery(query_str=QUESTION, mode=VectorStoreQueryMode.MMR)),
            "'mmr' is not supported",
        ),
        (
            lambda s: s.query(VectorStoreQuery(query_str=QUESTION), include_history="yes"),
            "include_history",
        ),
        (lambda s: s.query(VectorStoreQuery(query_str=QUESTION), detector="key"), "detector"),
        (
            lambda s: s.query(VectorStoreQuery(query_str=QUESTION, doc_ids=[]), vaild_at=d(2020)),
            "vaild_at is not supported",
        ),
        (lambda s: s.delete_nodes(["n"], cascade=True), "cascade is not supported"),
        (lambda s: s.delete("doc", cascade=True), "cascade is not supported"),
        (lambda s: s.delete(""), "ref_doc_id"),
        (lambda s: s.delete_nodes(), "clear()"),
        (lambda s: s.query(VectorStoreQuery(query_str=QUESTION), namespace=""), "namespace"),
    ],
)
def test_bad_calls_are_clear_errors(store: TemporalVectorStore, call: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        call(store)


def test_an_unsupported_condition_is_named(store: TemporalVectorStore) -> None:
    not_work = MetadataFilters(
        filters=[MetadataFilter(key="topic", value="work")], condition=FilterCondition.NOT
    )
    with pytest.raises(InvalidInputError, match=r"condition NOT \('not'\).*AND or OR"):
        store.query(VectorStoreQuery(query_str=QUESTION, filters=not_work))


def test_string_order_comparisons_are_refused(store: TemporalVectorStore) -> None:
    later = MetadataFilters(filters=[MetadataFilter(key="date", value="2024-01-01", operator=">")])
    with pytest.raises(InvalidInputError, match="compares numbers only"):
        store.query(VectorStoreQuery(query_str=QUESTION, filters=later))


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (node("x", "Maria", "doc", subject="Maria", relation="lives in"), r"nodes\[1\] \(id 'x'\)"),
        (node("x", "text", "doc", when=d(2020)), r"nodes\[1\] \(id 'x'\)\.metadata\.when"),
        (node("x", "   ", "doc"), r"nodes\[1\] \(id 'x'\): has no text"),
        (node("x", "Maria", "doc", valid_from="2020-01-01"), r"nodes\[1\] \(id 'x'\)"),
    ],
)
def test_a_bad_node_is_named_and_nothing_is_written(
    store: TemporalVectorStore, bad: TextNode, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        store.add([node("ok", "Fine text.", "doc"), bad])
    assert store.get_nodes() == []


def test_a_non_memory_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="TemporalMemory"):
        TemporalVectorStore("memory")  # type: ignore[arg-type]


# ---------------------------------------------------------------- through LlamaIndex
def test_retrievers_reach_the_query_options(store: TemporalVectorStore, clock: ManualClock) -> None:
    timeline(store, clock)
    index = VectorStoreIndex.from_vector_store(
        store, embed_model=CoreEmbedding(store.memory.embedder)
    )
    now = index.as_retriever(similarity_top_k=2).retrieve(QUESTION)
    assert sorted(n.node_id for n in now) == ["porto", "sardines"]
    then = index.as_retriever(
        similarity_top_k=1, vector_store_kwargs={"valid_at": "2020-06-01T00:00:00Z"}
    ).retrieve(QUESTION)
    assert [n.node_id for n in then] == ["berlin"]
    assert then[0].score == pytest.approx(ask_score(store, "berlin", valid_at=d(2020, 6)))


def ask_score(store: TemporalVectorStore, node_id: str, **options: Any) -> float:
    result = store.query(VectorStoreQuery(query_str=QUESTION, similarity_top_k=5), **options)
    return dict(zip(result.ids or [], result.similarities or [], strict=True))[node_id]


def test_inserting_documents_through_the_index(store: TemporalVectorStore) -> None:
    from llama_index.core import Document

    index = VectorStoreIndex.from_vector_store(
        store, embed_model=CoreEmbedding(store.memory.embedder)
    )
    document = Document(
        text="Maria lives in Porto.", id_="doc-porto",
        metadata={"subject": "Maria", "relation": "lives in", "object": "Porto"},
    )  # fmt: skip
    index.insert(document)
    (got,) = index.as_retriever().retrieve(QUESTION)
    assert got.node.ref_doc_id == "doc-porto"
    assert got.node.metadata["object"] == "Porto"
    index.delete_ref_doc("doc-porto")
    assert index.as_retriever().retrieve(QUESTION) == []


# ---------------------------------------------------------------- what broke for new users
def test_a_retriever_with_empty_doc_ids_returns_no_nodes(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    """An empty allow-list of documents allows none (it used to raise)."""
    timeline(store, clock)
    index = VectorStoreIndex.from_vector_store(
        store, embed_model=CoreEmbedding(store.memory.embedder)
    )
    assert index.as_retriever(doc_ids=[]).retrieve(QUESTION) == []
    only_d = index.as_retriever(doc_ids=["doc-d"]).retrieve(QUESTION)
    assert [n.node_id for n in only_d] == ["sardines"]
    empty = VectorStoreQuery(query_str=QUESTION, similarity_top_k=5, doc_ids=[])
    assert store.query(empty, include_history=True).ids == []


async def test_an_async_retriever_with_empty_doc_ids_returns_no_nodes(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    timeline(store, clock)
    index = VectorStoreIndex.from_vector_store(
        store, embed_model=CoreEmbedding(store.memory.embedder)
    )
    assert await index.as_retriever(doc_ids=[]).aretrieve(QUESTION) == []
    result = await store.aquery(VectorStoreQuery(query_str=QUESTION, doc_ids=[]))
    assert (result.ids, result.nodes, result.similarities) == ([], [], [])


def test_pickling_a_store_over_a_memory_built_by_hand_is_refused_by_name(
    store: TemporalVectorStore,
) -> None:
    """It used to pickle without a word and fail on first use (AttributeError: _memory)."""
    with pytest.raises(NotPicklableError, match=r"TemporalVectorStore\.open\(path") as refused:
        pickle.dumps(store)
    assert isinstance(refused.value, TypeError)
    index = VectorStoreIndex.from_vector_store(
        store, embed_model=CoreEmbedding(store.memory.embedder)
    )
    with pytest.raises(NotPicklableError):
        pickle.dumps(index)


def test_core_embedding_pickles_with_its_embedder_or_says_why_not() -> None:
    copy = pickle.loads(pickle.dumps(CoreEmbedding(HashingEmbedder(16), embed_batch_size=4)))
    assert copy.embed_batch_size == 4
    assert copy.get_query_embedding("Maria") == HashingEmbedder(16).embed_query("Maria")
    local = CoreEmbedding(CallableEmbedder(lambda texts: [[1.0, 0.0] for _ in texts],
                                           name="local", dimension=2))  # fmt: skip
    with pytest.raises(NotPicklableError, match=r"CoreEmbedding.*embedder"):
        pickle.dumps(local)


# ---------------------------------------------------------------- an LLM extractor's valid time
async def test_a_nodes_valid_from_metadata_dates_its_llm_extracted_facts(
    clock: ManualClock,
) -> None:
    """A node's valid_from metadata (an ISO string) is the caller's valid time of what an
    LLMExtractor keys in it: not the write time, not the date the fake copies from a prompt."""
    with keyed_memory(clock) as memory:
        store = TemporalVectorStore(memory)
        store.add([node("berlin", "Ana lives in Berlin.", valid_from="2021-01-01T00:00:00Z")])
        lisbon = node("lisbon", "Just moved to Lisbon!", valid_from="2023-01-01T02:00:00+02:00")
        await store.async_add([lisbon])  # node metadata is JSON: times are ISO strings
        assert ana_history(memory) == [("Berlin", d(2021), d(2023)), ("Lisbon", d(2023), None)]
        (berlin,) = store.get_nodes(["berlin"], valid_at=d(2022))
        assert berlin.metadata["valid_from"] == "2021-01-01T00:00:00+00:00"
        assert berlin.metadata[VALID_FROM_SOURCE] == "caller"
