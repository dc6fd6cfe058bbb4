"""TemporalVectorStore over the in-memory fakes: what LangChain's standard suite does not cover
(as-of searches through as_retriever, deletes that keep history, metadata keys, ids of equal
texts, MMR, bad search options, sync/async parity)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.indexing import InMemoryRecordManager, index

from langchain_temporal import (
    CoreEmbeddings,
    LangChainEmbedder,
    TemporalRetriever,
    TemporalVectorStore,
)
from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import VALID_FROM_SOURCE
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, SearchOptions, TemporalMemory
from tests.keying_llm import ana_history, keyed_memory

QUESTION = "Where does Maria live?"
MARIA = {"subject": "Maria", "relation": "lives in"}


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(d(2024, 6, 1))


def new_memory(clock: ManualClock) -> TemporalMemory:
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(256), clock=clock),
    )


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    with new_memory(clock) as memory:
        yield memory


@pytest.fixture
def store(memory: TemporalMemory) -> TemporalVectorStore:
    return TemporalVectorStore(memory)


def home(city: str, year: int, **extra: Any) -> Document:
    metadata = {**MARIA, "object": city, "valid_from": f"{year}-01-01T00:00:00Z", **extra}
    return Document(f"Maria lives in {city}.", metadata=metadata)


def texts(documents: list[Document]) -> list[str]:
    return [document.page_content for document in documents]


# ---------------------------------------------------------------- time: as_retriever, keys
def test_as_retriever_sees_the_current_value_and_the_old_one_as_of_then(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    store.add_documents([home("Berlin", 2019)], ids=["berlin"])
    clock.advance(timedelta(days=1))
    recorded = clock.now()
    clock.advance(timedelta(days=1))
    store.add_documents([home("Lisbon", 2022)], ids=["lisbon"])  # supersedes by key
    now = store.as_retriever(search_kwargs={"k": 1}).invoke(QUESTION)
    assert [(d.id, d.page_content) for d in now] == [("lisbon", "Maria lives in Lisbon.")]
    valid_then = store.as_retriever(search_kwargs={"k": 1, "valid_at": "2020-06-01T00:00:00Z"})
    assert [d.id for d in valid_then.invoke(QUESTION)] == ["berlin"]
    known_then = store.as_retriever(search_kwargs={"k": 1, "known_at": recorded})
    assert [d.id for d in known_then.invoke(QUESTION)] == ["berlin"]


def test_metadata_keys_supersede_and_come_back_with_the_valid_time(
    store: TemporalVectorStore,
) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022, source="letter")])
    assert texts(store.similarity_search(QUESTION, k=5)) == ["Maria lives in Lisbon."]
    every = store.similarity_search(QUESTION, k=5, include_history=True)
    old, new = sorted(every, key=lambda document: document.metadata["valid_from"])
    assert old.metadata == {
        **MARIA,
        "object": "Berlin",
        "valid_from": "2019-01-01T00:00:00+00:00",
        "valid_to": "2022-01-01T00:00:00+00:00",
    }
    assert new.metadata == {
        **MARIA,
        "object": "Lisbon",
        "valid_from": "2022-01-01T00:00:00+00:00",
        "source": "letter",
    }


def test_an_id_written_again_with_a_new_value_keeps_the_old_one_as_history(
    store: TemporalVectorStore,
) -> None:
    store.add_documents([home("Berlin", 2019)], ids=["maria-home"])
    store.add_documents([home("Lisbon", 2022)], ids=["maria-home"])
    assert [(d.id, d.metadata["object"]) for d in store.get_by_ids(["maria-home"])] == [
        ("maria-home", "Lisbon")
    ]
    then = store.similarity_search(QUESTION, k=5, valid_at=d(2020))
    assert [(d.id, d.metadata["object"]) for d in then] == [("maria-home", "Berlin")]


def test_a_search_takes_one_search_options_value(store: TemporalVectorStore) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)])
    past = SearchOptions(valid_at=d(2020))
    assert texts(store.similarity_search(QUESTION, search_options=past)) == [
        "Maria lives in Berlin."
    ]
    retriever = store.as_retriever(search_kwargs={"search_options": past, "k": 1})
    assert texts(retriever.invoke(QUESTION)) == ["Maria lives in Berlin."]


def test_namespaces_never_see_each_other(memory: TemporalMemory) -> None:
    work = TemporalVectorStore(memory, namespace="work")
    home_store = TemporalVectorStore(memory, namespace="home")
    work.add_documents([Document("The office opens at nine.")], ids=["office"])
    assert home_store.similarity_search("office") == []
    assert home_store.get_by_ids(["office"]) == []
    assert texts(home_store.similarity_search("office", namespace="work")) == [
        "The office opens at nine."
    ]


# ---------------------------------------------------------------- deletes and ids
def test_delete_withdraws_and_keeps_history(store: TemporalVectorStore, clock: ManualClock) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)], ids=["old", "new"])
    clock.advance(timedelta(days=1))
    before = clock.now()
    clock.advance(timedelta(days=1))
    assert store.delete(["new", "never-written"]) is True
    assert store.get_by_ids(["new"]) == []
    now = store.similarity_search(QUESTION, k=5)
    assert [d.id for d in now] == ["old"], "the value it had superseded is current again"
    then = store.similarity_search(QUESTION, k=5, known_at=before)
    assert [d.id for d in then] == ["new"]


def test_a_deleted_document_can_be_restored_without_a_known_at_search(
    store: TemporalVectorStore, memory: TemporalMemory, clock: ManualClock
) -> None:
    """Undoing delete(ids) had no direct way: only a known_at search showed the text."""
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)], ids=["old", "new"])
    store.add_texts(["The office opens at nine."], ids=["office"])
    clock.advance(timedelta(days=1))
    store.delete(["new", "office"])
    clock.advance(timedelta(days=1))
    deleted = clock.now()
    clock.advance(timedelta(days=1))
    assert store.restore(["new", "office"]) is True
    assert [d.id for d in store.get_by_ids(["new", "office"])] == ["new", "office"]
    now = store.similarity_search(QUESTION, k=5, where=MARIA)
    assert [d.id for d in now] == ["new"], "the key rule supersedes Berlin again"
    then = store.similarity_search(QUESTION, k=5, where=MARIA, known_at=deleted)
    assert [d.id for d in then] == ["old"], "history keeps the delete"
    statements, _ = memory.ledger.export()
    withdrawn = [row for row in statements if not row.believed]
    assert len(withdrawn) == 2, "the withdrawn records stay, the restored ones are new"
    assert store.restore(["new"]) is False, "a current Document is left as it is"


def test_restore_brings_back_what_the_last_delete_withdrew_not_what_a_rewrite_replaced(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    store.add_documents([Document("first draft", metadata={"n": 1})], ids=["doc"])
    clock.advance(timedelta(days=1))
    store.add_documents([Document("final text", metadata={"n": 2})], ids=["doc"])
    clock.advance(timedelta(days=1))
    store.delete(["doc"])
    clock.advance(timedelta(days=1))
    assert store.restore(["doc"]) is True
    assert store.get_by_ids(["doc"]) == [Document("final text", id="doc", metadata={"n": 2})]
    store.delete(["doc"])
    store.add_documents([Document("written again")], ids=["doc"])
    assert store.restore(["doc"]) is False, "written again since the delete: it is current"
    assert texts(store.get_by_ids(["doc"])) == ["written again"]


def test_restoring_an_unknown_id_is_refused_by_name_and_restores_nothing(
    memory: TemporalMemory,
) -> None:
    store = TemporalVectorStore(memory, namespace="notes")
    store.add_texts(["a note"], ids=["note"])
    store.delete(["note"])
    revision = memory.ledger.revision()
    with pytest.raises(InvalidInputError, match="names no Document") as unknown:
        store.restore(["note", "never-written"])
    assert unknown.value.field == "ids[1]"
    with pytest.raises(InvalidInputError) as elsewhere:
        store.restore(["note"], namespace="default")
    assert elsewhere.value.field == "ids[0]"
    with pytest.raises(InvalidInputError, match="name the Documents"):
        store.restore(None)  # type: ignore[arg-type]
    assert memory.ledger.revision() == revision
    assert store.get_by_ids(["note"]) == []
    assert store.restore([]) is False
    assert store.restore(["note"]) is True
    assert texts(store.get_by_ids(["note"])) == ["a note"]


def test_delete_without_ids_withdraws_the_namespace(memory: TemporalMemory) -> None:
    store = TemporalVectorStore(memory, namespace="scratch")
    kept = TemporalVectorStore(memory)
    store.add_texts(["one note", "another note"])
    kept.add_texts(["a note elsewhere"])
    store.delete()
    assert store.similarity_search("note") == []
    assert texts(kept.similarity_search("note")) == ["a note elsewhere"]


def test_equal_texts_under_two_ids_are_two_documents(store: TemporalVectorStore) -> None:
    ids = store.add_texts(["Introduction", "Introduction"], ids=["a#1", "b#1"])
    assert ids == ["a#1", "b#1"]
    assert [d.id for d in store.get_by_ids(["b#1", "a#1"])] == ["b#1", "a#1"]
    store.delete(["a#1"])
    assert [d.id for d in store.similarity_search("Introduction")] == ["b#1"]


def test_an_unchanged_document_written_again_changes_nothing(
    store: TemporalVectorStore, memory: TemporalMemory
) -> None:
    documents = [Document("foo", metadata={"n": 1}), home("Berlin", 2019)]
    assert store.add_documents(documents, ids=["1", "2"]) == ["1", "2"]
    revision = memory.ledger.revision()
    assert store.add_documents(documents, ids=["1", "2"]) == ["1", "2"]
    assert memory.ledger.revision() == revision


def test_new_metadata_under_the_same_id_replaces_the_document(
    store: TemporalVectorStore,
) -> None:
    store.add_documents([Document("foo", id="1", metadata={"n": 1}), home("Berlin", 2019, n=1)])
    store.add_documents([Document("foo", id="1", metadata={"n": 2})])
    assert store.get_by_ids(["1"]) == [Document("foo", id="1", metadata={"n": 2})]
    [berlin] = store.similarity_search(QUESTION, k=1)
    store.add_documents([home("Berlin", 2019, n=2)], ids=[str(berlin.id)])
    assert [d.metadata["n"] for d in store.get_by_ids([str(berlin.id)])] == [2]
    maria = store.similarity_search(QUESTION, k=5, where={"subject": "Maria"})
    assert [d.metadata["n"] for d in maria] == [2]


def test_a_keyed_document_restating_a_value_is_that_documents(store: TemporalVectorStore) -> None:
    first = store.add_documents([home("Berlin", 2019)], ids=["letter"])
    again = store.add_documents([home("Berlin", 2019, note="again")], ids=["email"])
    assert (first, again) == (["letter"], ["letter"])


def test_langchains_indexing_api_writes_skips_and_cleans_up(
    store: TemporalVectorStore, clock: ManualClock
) -> None:
    """``index()`` passes ``batch_size`` to add_documents (it was refused) and deletes what a
    source no longer holds; the store withdraws it, so an earlier known_at still sees it."""
    records = InMemoryRecordManager(namespace="notes")
    records.create_schema()
    first = [Document("Deploys on Tuesdays.", metadata={"source": "wiki"})]
    assert index(first, records, store, cleanup="full", key_encoder="sha256")["num_added"] == 1
    assert index(first, records, store, cleanup="full", key_encoder="sha256")["num_skipped"] == 1
    before = clock.now()
    clock.advance(timedelta(days=1))
    second = [Document("Deploys on Wednesdays.", metadata={"source": "wiki"})]
    result = index(second, records, store, cleanup="full", key_encoder="sha256")
    assert (result["num_added"], result["num_deleted"]) == (1, 1)
    assert texts(store.similarity_search("deploys", k=5)) == ["Deploys on Wednesdays."]
    then = store.similarity_search("deploys", k=5, known_at=before)
    assert texts(then) == ["Deploys on Tuesdays."]


def test_the_retriever_names_documents_by_their_ids(
    store: TemporalVectorStore, memory: TemporalMemory
) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)], ids=["old", "new"])
    retriever = TemporalRetriever(memory=memory, include_history=True, detector=None)
    assert sorted(d.id for d in retriever.invoke(QUESTION)) == ["new", "old"]


def test_bad_documents_and_ids_are_refused_by_name(store: TemporalVectorStore) -> None:
    bookkeeping = Document("foo", metadata={"langchain_id": "x"})
    with pytest.raises(InvalidInputError, match=r"documents\[0\]\.metadata\['langchain_id'\]"):
        store.add_documents([bookkeeping])
    partial = Document("Maria lives in Lisbon.", id="m", metadata=MARIA)
    with pytest.raises(InvalidInputError, match=r"documents\[1\] \(m\)\.metadata\['object'\]"):
        store.add_documents([Document("fine"), partial])
    with pytest.raises(InvalidInputError, match=r"^ids\[1\]: repeats 'x'"):
        store.add_texts(["one", "two"], ids=["x", "x"])
    with pytest.raises(InvalidInputError, match=r"^ids: has 1 ids for 2 documents"):
        store.add_texts(["one", "two"], ids=["x"])
    with pytest.raises(InvalidInputError, match=r"^add_documents\(\*\*kwargs\): upsert"):
        store.add_texts(["one"], upsert=True)
    with pytest.raises(InvalidInputError, match=r"^batch_size: is 0"):
        store.add_texts(["one"], batch_size=0)
    assert store.similarity_search("one fine foo") == [], "nothing was written"


# ---------------------------------------------------------------- search options, scores
@pytest.mark.parametrize(
    ("search_kwargs", "field"),
    [
        ({"valid_at": "yesterday"}, "search_kwargs['valid_at']"),
        ({"known_at": datetime(2024, 1, 1)}, "search_kwargs['known_at']"),  # noqa: DTZ001
        ({"filter": lambda document: True}, "search_kwargs['filter']"),
        ({"fliter": {"source": "x"}}, "search_kwargs['fliter']"),
        ({"k": 0}, "search_kwargs['k']"),
        ({"include_history": "yes"}, "search_kwargs['include_history']"),
        ({"namespace": ""}, "search_kwargs['namespace']"),
        ({"search_options": {"k": 2}}, "search_kwargs['search_options']"),
    ],
)
def test_bad_search_kwargs_are_refused_when_the_retriever_is_made(
    store: TemporalVectorStore, search_kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        store.as_retriever(search_kwargs=search_kwargs)
    assert caught.value.field == field


def test_a_bad_search_keyword_names_itself(store: TemporalVectorStore) -> None:
    with pytest.raises(InvalidInputError, match=r"^fliter: is not a search option") as caught:
        store.similarity_search("foo", fliter={"a": 1})
    assert "where" in caught.value.fix
    with pytest.raises(InvalidInputError, match=r"^valid_at: "):
        store.similarity_search("foo", valid_at="not a time")


def notes(store: TemporalVectorStore) -> None:
    store.add_texts(
        ["Maria lives in Lisbon.", "Maria lives in Porto.", "Maria works in Porto."],
        [{"source": "chat"}, {"source": "mail"}, {"source": "chat"}],
        ids=["lisbon", "porto", "work"],
    )


async def test_langchains_filter_keyword_filters_as_where_does(store: TemporalVectorStore) -> None:
    """Chroma, PGVector and generic callers pass ``filter=``; it was refused as unknown."""
    notes(store)
    chat = {"source": "chat"}
    expected = ["lisbon", "work"]
    vector = store.embeddings.embed_query(QUESTION)

    def ids(documents: list[Document]) -> list[str]:
        return sorted(str(document.id) for document in documents)

    assert ids(store.similarity_search(QUESTION, k=3, where=chat)) == expected
    assert ids(store.similarity_search(QUESTION, k=3, filter=chat)) == expected
    scored = store.similarity_search_with_score(QUESTION, k=3, filter=chat)
    assert ids([document for document, _ in scored]) == expected
    assert ids(store.max_marginal_relevance_search(QUESTION, k=3, filter=chat)) == expected
    assert ids(store.similarity_search_by_vector(vector, k=3, filter=chat)) == expected
    assert ids(await store.asimilarity_search(QUESTION, k=3, filter=chat)) == expected
    ascored = await store.asimilarity_search_with_score(QUESTION, k=3, filter=chat)
    assert ids([document for document, _ in ascored]) == expected
    assert ids(await store.amax_marginal_relevance_search(QUESTION, k=3, filter=chat)) == expected
    retriever = store.as_retriever(search_kwargs={"k": 3, "filter": chat})
    assert ids(retriever.invoke(QUESTION)) == expected
    assert ids(await retriever.ainvoke(QUESTION)) == expected
    assert ids(store.similarity_search(QUESTION, k=3, filter=chat, where=chat)) == expected
    assert ids(store.similarity_search(QUESTION, k=3, filter=None)) == ["lisbon", "porto", "work"]


@pytest.mark.parametrize(
    ("chroma_style", "expected"),
    [
        ({"source": {"$eq": "chat"}}, ["lisbon", "work"]),
        ({"source": {"$ne": "chat"}}, ["porto"]),
        ({"source": {"$in": ["mail"]}}, ["porto"]),
        ({"source": {"$nin": ["mail"]}}, ["lisbon", "work"]),
        ({"rank": {"$gt": 1, "$lte": 3}}, ["porto", "work"]),
        ({"rank": {"$gte": 3}, "source": "chat"}, ["work"]),
        ({"rank": {"$lt": 2}}, ["lisbon"]),
        ({"$and": [{"source": "chat"}, {"rank": {"$gte": 2}}]}, ["work"]),
        ({"$or": [{"source": "mail"}, {"rank": 1}]}, ["lisbon", "porto"]),
    ],
)
def test_chroma_and_pgvector_style_filter_operators_are_read(
    store: TemporalVectorStore, chroma_style: dict[str, Any], expected: list[str]
) -> None:
    """Generic callers written for Chroma or PGVector pass these operators in ``filter``."""
    store.add_texts(
        ["Maria lives in Lisbon.", "Maria lives in Porto.", "Maria works in Porto."],
        [
            {"source": "chat", "rank": 1},
            {"source": "mail", "rank": 2},
            {"source": "chat", "rank": 3},
        ],
        ids=["lisbon", "porto", "work"],
    )
    found = store.similarity_search(QUESTION, k=5, filter=chroma_style)
    assert sorted(str(document.id) for document in found) == expected


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ({"source": {"$like": "c%"}}, "filter['source']", "'$like' is not supported"),
        ({"$not": {"source": "chat"}}, "filter['$not']", "not a supported operator"),
        ({"$and": []}, "filter['$and']", "non-empty list"),
        ({"$or": [{"source": "chat"}, {}]}, "filter['$or'][1]", "is empty"),
        ({"source": {}}, "filter['source']", "empty dict"),
        ({"rank": {"$gt": "two"}}, "filter['rank']", "compares numbers only"),
    ],
)
def test_unsupported_filter_operators_are_refused_by_name(
    store: TemporalVectorStore, bad: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(words)) as caught:
        store.similarity_search(QUESTION, filter=bad)
    assert caught.value.field == field


def test_filter_and_where_that_differ_or_a_callable_filter_are_refused_by_name(
    store: TemporalVectorStore,
) -> None:
    notes(store)
    with pytest.raises(InvalidInputError, match="differ") as both:
        store.similarity_search(QUESTION, filter={"source": "chat"}, where={"source": "mail"})
    assert both.value.field == "filter, where"
    with pytest.raises(InvalidInputError, match="callable") as predicate:
        store.similarity_search(QUESTION, filter=lambda document: True)
    assert predicate.value.field == "filter"
    with pytest.raises(InvalidInputError) as retriever:
        store.as_retriever(search_kwargs={"filter": lambda document: True})
    assert retriever.value.field == "search_kwargs['filter']"
    with pytest.raises(InvalidInputError) as listed:
        store.similarity_search(QUESTION, filter=["chat"])
    assert listed.value.field == "filter"


def test_the_retriever_keeps_langchains_own_keywords(store: TemporalVectorStore) -> None:
    store.add_texts(["Maria lives in Lisbon.", "The office opens at nine."])
    question = "Maria lives in which city?"
    mmr = store.as_retriever(search_type="mmr", search_kwargs={"k": 1, "fetch_k": 5})
    assert texts(mmr.invoke(question)) == ["Maria lives in Lisbon."]
    threshold = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.3}
    )
    assert texts(threshold.invoke(question)) == ["Maria lives in Lisbon."]


def test_scores_are_cosine_similarities_and_relevance_stays_in_range(
    store: TemporalVectorStore,
) -> None:
    store.add_texts(["Maria lives in Lisbon.", "unrelated words entirely"])
    [(best, score), _] = store.similarity_search_with_score("Maria lives in Lisbon.", k=2)
    assert best.page_content == "Maria lives in Lisbon."
    assert score == pytest.approx(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # LangChain warns about relevance outside [0, 1]
        relevance = store.similarity_search_with_relevance_scores("Maria", k=2)
    assert all(0.0 <= value <= 1.0 for _, value in relevance)


def test_search_by_vector_is_search_by_text(store: TemporalVectorStore) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)])
    vector = store.embeddings.embed_query(QUESTION)
    by_vector = store.similarity_search_by_vector(vector, k=2, include_history=True)
    assert by_vector == store.similarity_search(QUESTION, k=2, include_history=True)


def test_mmr_picks_diverse_documents_among_the_visible_ones(
    store: TemporalVectorStore,
) -> None:
    store.add_documents([home("Berlin", 2019), home("Lisbon", 2022)], ids=["old", "home"])
    store.add_texts(["Maria lives in Lisbon now.", "Maria works in Porto."], ids=["now", "work"])
    query = "Maria lives in Lisbon"
    plain = store.similarity_search(query, k=2)
    diverse = store.max_marginal_relevance_search(query, k=2, fetch_k=4, lambda_mult=0.1)
    assert [d.id for d in plain] == ["home", "now"]
    assert [d.id for d in diverse] == ["home", "work"], "Berlin is not visible: superseded"
    then = store.max_marginal_relevance_search(query, k=1, valid_at=d(2020))
    assert [d.id for d in then] == ["old"]
    with pytest.raises(InvalidInputError, match=r"^lambda_mult"):
        store.max_marginal_relevance_search(query, lambda_mult=2)


# ---------------------------------------------------------------- construction
def test_embeddings_are_the_memorys_embedder(clock: ManualClock) -> None:
    fake = DeterministicFakeEmbedding(size=6)
    memory = TemporalMemory(
        ledger=InMemoryLedger(),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=LangChainEmbedder(fake, name="fake-6")),
    )
    assert TemporalVectorStore(memory).embeddings is fake
    core = TemporalVectorStore(new_memory(clock)).embeddings
    assert isinstance(core, CoreEmbeddings)
    assert core.embedder.name == "hashing-256"


def test_from_texts_builds_an_in_memory_store_or_uses_a_memory(memory: TemporalMemory) -> None:
    fake = DeterministicFakeEmbedding(size=6)
    store = TemporalVectorStore.from_texts(["foo", "bar"], fake, ids=["1", "2"])
    assert store.embeddings is fake
    assert [d.id for d in store.similarity_search("bar", k=1)] == ["2"]
    same = TemporalVectorStore.from_documents(
        [Document("foo", id="x")], CoreEmbeddings(memory.embedder), memory=memory
    )
    assert same.memory is memory
    assert [d.id for d in same.get_by_ids(["x"])] == ["x"]
    with pytest.raises(InvalidInputError, match=r"^embedding: is not the memory's embedder"):
        TemporalVectorStore.from_texts(["foo"], fake, memory=memory)


# ---------------------------------------------------------------- async
async def test_async_and_sync_agree(clock: ManualClock) -> None:
    """The same writes, searches and deletes, once on each path, leave the same answers."""
    plain, native = TemporalVectorStore(new_memory(clock)), TemporalVectorStore(new_memory(clock))
    documents = [home("Berlin", 2019), home("Lisbon", 2022), Document("The office opens at nine.")]
    ids = ["old", "new", "office"]
    assert plain.add_documents(documents, ids=ids) == await native.aadd_documents(
        documents, ids=ids
    )
    assert plain.add_texts(["a note"], ids=["n"]) == await native.aadd_texts(["a note"], ids=["n"])
    for options in ({}, {"valid_at": d(2020)}, {"include_history": True}):
        expected = plain.similarity_search_with_score(QUESTION, k=3, **options)
        assert await native.asimilarity_search_with_score(QUESTION, k=3, **options) == expected
    vector = plain.embeddings.embed_query(QUESTION)
    assert await native.asimilarity_search_by_vector(vector, k=2) == (
        plain.similarity_search_by_vector(vector, k=2)
    )
    assert await native.amax_marginal_relevance_search(QUESTION, k=2) == (
        plain.max_marginal_relevance_search(QUESTION, k=2)
    )
    assert await native.aget_by_ids([*ids, "n"]) == plain.get_by_ids([*ids, "n"])
    assert await native.adelete(["new"]) is plain.delete(["new"]) is True
    assert await native.asimilarity_search(QUESTION, k=3) == plain.similarity_search(QUESTION, k=3)
    assert await native.arestore(["new"]) is plain.restore(["new"]) is True
    assert await native.asimilarity_search(QUESTION, k=3) == plain.similarity_search(QUESTION, k=3)
    assert await native.arestore(["new"]) is plain.restore(["new"]) is False
    assert await native.adelete(["new"]) is plain.delete(["new"]) is True
    retriever = native.as_retriever(search_kwargs={"valid_at": "2020-06-01T00:00:00Z"})
    assert [d.id for d in await retriever.ainvoke(QUESTION)] == ["old"]


# ---------------------------------------------------------------- an LLM extractor's valid time
async def test_a_documents_valid_from_metadata_dates_its_llm_extracted_facts(
    clock: ManualClock,
) -> None:
    """Issue 31, item 4: the metadata is the caller's valid time of the statements an
    LLMExtractor keys, never dropped for the write time or overridden by a date the model
    copied from its prompt (then the old version would be withdrawn as a correction)."""
    with keyed_memory(clock) as memory:
        store = TemporalVectorStore(memory)
        store.add_documents(
            [Document("Ana lives in Berlin.", metadata={"valid_from": "2021-01-01T00:00:00Z"})]
        )
        store.add_texts(["Just moved to Lisbon!"], metadatas=[{"valid_from": d(2023).isoformat()}])
        await store.aadd_documents([Document("Porto now.", metadata={"valid_from": d(2025)})])
        assert ana_history(memory) == [
            ("Berlin", d(2021), d(2023)),
            ("Lisbon", d(2023), d(2025)),
            ("Porto", d(2025), None),
        ]
        (then,) = store.similarity_search("Where does Ana live?", k=1, valid_at=d(2022))
        assert then.page_content == "Ana lives in Berlin."
        assert then.metadata["valid_from"] == "2021-01-01T00:00:00+00:00"
        assert then.metadata[VALID_FROM_SOURCE] == "caller"
