"""TemporalRetriever over the in-memory fakes: Documents, per-call overrides, writes, async."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError

from langchain_temporal import TemporalRetriever
from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.filters import where
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

QUERY = "Where does Maria live?"


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(d(2024, 6, 1))


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(256), clock=clock),
    ) as memory:
        yield memory


def lives(memory: TemporalMemory, clock: ManualClock, city: str, year: int, **extra: Any) -> str:
    clock.advance(timedelta(days=1))
    added = memory.add(
        f"Maria lives in {city}.", subject="Maria", relation="lives in", object=city,
        valid_from=d(year), **extra,
    )  # fmt: skip
    return added.fact_ids[0]


@pytest.fixture
def moves(memory: TemporalMemory, clock: ManualClock) -> dict[str, str]:
    """Maria: Berlin (2019) -> Lisbon (2022) -> Porto (2024, recorded 2024-06-04)."""
    ids = {city: lives(memory, clock, city, year) for city, year in MOVES}
    memory.add("Maria's favourite food is grilled sardines.")
    return ids


MOVES = (("Berlin", 2019), ("Lisbon", 2022), ("Porto", 2024))


def texts(documents: list[Document]) -> list[str]:
    return [document.page_content for document in documents]


def objects(documents: list[Document]) -> set[object]:
    return {document.metadata["object"] for document in documents} - {None}


# ---------------------------------------------------------------- documents
def test_a_document_carries_the_fact_and_its_times(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    fact_id = lives(memory, clock, "Porto", 2024, metadata={"source": "chat", "score": "mine"})
    (document,) = TemporalRetriever(memory=memory, k=1).invoke(QUERY)
    assert document.id == fact_id
    assert document.page_content == "Maria lives in Porto."
    metadata = dict(document.metadata)
    assert isinstance(metadata.pop("score"), float)  # ours wins over the fact's own "score"
    assert isinstance(metadata.pop("recorded_at"), str)
    assert metadata == {
        "source": "chat",
        "fact_id": fact_id,
        "subject": "Maria",
        "relation": "lives in",
        "object": "Porto",
        "valid_from": "2024-01-01T00:00:00+00:00",
        "valid_to": None,
        "status": "current",
        "namespace": "default",
        "from_buffer": False,
        "shadows": [],
    }


def test_prose_has_no_key_and_an_empty_memory_returns_nothing(memory: TemporalMemory) -> None:
    retriever = TemporalRetriever(memory=memory)
    assert retriever.invoke(QUERY) == []
    memory.add("Maria's favourite food is grilled sardines.")
    (document,) = retriever.invoke(QUERY)
    assert (document.metadata["subject"], document.metadata["object"]) == (None, None)


# ---------------------------------------------------------------- what is visible
def test_the_current_state_by_default_and_the_past_on_request(
    memory: TemporalMemory, moves: dict[str, str]
) -> None:
    memory_retriever = TemporalRetriever(memory=memory, k=5)
    assert objects(memory_retriever.invoke(QUERY)) == {"Porto"}
    assert objects(memory_retriever.invoke(QUERY, valid_at=d(2020))) == {"Berlin"}
    # as known before Porto was recorded, Lisbon was believed current
    assert objects(memory_retriever.invoke(QUERY, known_at=d(2024, 6, 3))) == {"Lisbon"}
    history = memory_retriever.invoke(QUERY, include_history=True)
    statuses = {d.metadata["object"]: d.metadata["status"] for d in history}
    assert statuses == {
        "Berlin": "superseded",
        "Lisbon": "superseded",
        "Porto": "current",
        None: "current",  # the prose
    }


def test_fields_are_the_defaults_and_a_call_overrides_them(
    memory: TemporalMemory, moves: dict[str, str]
) -> None:
    past = TemporalRetriever(memory=memory, valid_at=d(2020), k=1)
    assert objects(past.invoke(QUERY)) == {"Berlin"}
    assert objects(past.invoke(QUERY, valid_at=d(2023))) == {"Lisbon"}
    assert len(past.invoke(QUERY, k=2, valid_at=d(2024, 7))) == 2  # Porto and the prose
    assert len(past.invoke(QUERY)) == 1  # a call changes nothing for the next one


def test_namespaces_never_see_each_other(memory: TemporalMemory) -> None:
    retriever = TemporalRetriever(memory=memory, namespace="alice")
    retriever.add_documents([Document("Alice's password hint is 'blue'.")])
    assert texts(retriever.invoke("password hint")) == ["Alice's password hint is 'blue'."]
    assert retriever.invoke("password hint", namespace="bob") == []
    assert TemporalRetriever(memory=memory).invoke("password hint") == []


def test_phi_t_reports_what_it_removed_on_the_survivor(
    memory: TemporalMemory, moves: dict[str, str]
) -> None:
    retriever = TemporalRetriever(
        memory=memory, k=5, include_history=True, detector=KeyConflictDetector()
    )
    documents = retriever.invoke(QUERY)
    assert objects(documents) == {"Porto"}
    (porto,) = [doc for doc in documents if doc.metadata["object"] == "Porto"]
    shadows = porto.metadata["shadows"]
    assert sorted(s["text"] for s in shadows) == [
        "Maria lives in Berlin.",
        "Maria lives in Lisbon.",
    ]
    berlin = next(s for s in shadows if s["id"] == moves["Berlin"])
    assert berlin == {
        "id": moves["Berlin"],
        "fact_id": moves["Berlin"],
        "position": None,
        "text": "Maria lives in Berlin.",
        "timestamp": "2019-01-01T00:00:00+00:00",
        "namespace": "default",
        "dominated_by": moves["Porto"],  # the key detector names the newest other object
        "detector": "key",
        "score": 1.0,
    }
    assert retriever.invoke(QUERY, detector=None)[0].metadata["shadows"] == shadows  # None: field


def test_the_recency_buffer_adds_recent_facts_beyond_k(
    memory: TemporalMemory, moves: dict[str, str]
) -> None:
    retriever = TemporalRetriever(memory=memory, k=1)
    documents = retriever.invoke("sardines", use_recency_buffer=True)
    assert len(documents) > 1
    assert any(doc.metadata["from_buffer"] for doc in documents)


def test_a_metadata_filter_is_a_field_or_a_call_option(memory: TemporalMemory) -> None:
    retriever = TemporalRetriever(memory=memory, where={"source": "wiki"}, k=5)
    retriever.add_documents(
        [
            Document("The office opens at nine.", metadata={"source": "wiki", "year": 2021}),
            Document("The office opens at ten.", metadata={"source": "chat", "year": 2024}),
        ]
    )
    assert texts(retriever.invoke("office")) == ["The office opens at nine."]
    assert texts(retriever.invoke("office", where=where("year", ">", 2022))) == [
        "The office opens at ten."
    ]
    assert len(retriever.invoke("office", where={})) == 2  # an empty filter drops the field's
    with pytest.raises(ValidationError, match="where: list is not a filter"):
        TemporalRetriever(memory=memory, where=["source"])  # type: ignore[arg-type]


# ---------------------------------------------------------------- writes
def test_add_documents_maps_metadata_to_keyed_facts(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    retriever = TemporalRetriever(memory=memory, k=5)
    keyed = {"subject": "Maria", "relation": "lives in"}
    ids = retriever.add_documents(
        [
            Document("Maria lives in Berlin.", metadata={**keyed, "object": "Berlin", "valid_from": "2019-01-01T00:00Z"}),  # noqa: E501
            Document("Maria moved to Lisbon.", metadata={**keyed, "object": "Lisbon", "valid_from": d(2022)}),  # noqa: E501
            Document("The office opens at nine.", metadata={"source": "wiki"}),
        ]
    )  # fmt: skip
    assert len(ids) == 3
    documents = retriever.invoke(QUERY)
    assert texts(documents) == ["Maria moved to Lisbon.", "The office opens at nine."]
    assert [doc.id for doc in documents] == [ids[1], ids[2]]
    assert documents[1].metadata["source"] == "wiki"
    assert memory.explain(ids[0]).reason.by == ids[1]  # type: ignore[union-attr]


async def test_aadd_documents_writes_the_same_way(memory: TemporalMemory) -> None:
    retriever = TemporalRetriever(memory=memory)
    ids = await retriever.aadd_documents(
        [Document("Ana works at Acme.", metadata={"subject": "Ana", "relation": "works at", "object": "Acme"})],  # noqa: E501
        namespace="team",
    )  # fmt: skip
    documents = await retriever.ainvoke("Where does Ana work?", namespace="team")
    assert [doc.id for doc in documents] == ids


def test_add_documents_rejects_what_is_not_a_document(memory: TemporalMemory) -> None:
    retriever = TemporalRetriever(memory=memory)
    with pytest.raises(InvalidInputError, match=r"documents\[1\]: is a str"):
        retriever.add_documents([Document("fine"), "not a document"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match=r"items\[0\]\.metadata\['object'\]"):
        retriever.add_documents([Document("half a key", metadata={"subject": "Maria", "relation": "r"})])  # noqa: E501  # fmt: skip
    assert retriever.invoke("fine") == []  # all or nothing


# ---------------------------------------------------------------- async parity
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"k": 1},
        {"valid_at": d(2020)},
        {"known_at": d(2024, 6, 3)},
        {"include_history": True, "detector": KeyConflictDetector()},
        {"use_recency_buffer": True, "k": 1},
        {"where": {"subject": "Maria"}},
    ],
)
async def test_ainvoke_returns_what_invoke_returns(
    memory: TemporalMemory, moves: dict[str, str], options: dict[str, Any]
) -> None:
    retriever = TemporalRetriever(memory=memory, k=5)
    assert await retriever.ainvoke(QUERY, **options) == retriever.invoke(QUERY, **options)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("k", [0, -1, True, "3"])
def test_k_must_be_a_positive_int(memory: TemporalMemory, k: object) -> None:
    with pytest.raises(ValidationError, match="k"):
        TemporalRetriever(memory=memory, k=k)


@pytest.mark.parametrize("k", [0, -3])
async def test_a_call_with_k_below_one_is_refused_by_the_core(
    memory: TemporalMemory, k: int
) -> None:
    retriever = TemporalRetriever(memory=memory)
    with pytest.raises(InvalidInputError, match=r"k: .* out of range"):
        retriever.invoke(QUERY, k=k)
    with pytest.raises(InvalidInputError, match=r"k: .* out of range"):
        await retriever.ainvoke(QUERY, k=k)


async def test_a_call_may_give_its_times_as_iso_strings_or_epoch_seconds(
    memory: TemporalMemory, moves: dict[str, str]
) -> None:
    """The bug: the constructor read ISO strings, a call (invoke(q, valid_at="...")) did not."""
    retriever = TemporalRetriever(memory=memory, k=5)
    in_2020 = retriever.invoke(QUERY, valid_at=d(2020))
    assert retriever.invoke(QUERY, valid_at="2020-01-01T00:00:00Z") == in_2020  # type: ignore[arg-type]
    epoch = d(2020).timestamp()
    assert await retriever.ainvoke(QUERY, valid_at=epoch) == in_2020
    assert TemporalRetriever(memory=memory, k=5, valid_at="2020-01-01T00:00:00Z").invoke(QUERY) == (
        in_2020
    )


def test_naive_datetimes_are_refused(memory: TemporalMemory) -> None:
    naive = datetime(2020, 1, 1)  # noqa: DTZ001 - the point of the test
    with pytest.raises(ValidationError, match="timezone"):
        TemporalRetriever(memory=memory, valid_at=naive)
    with pytest.raises(InvalidInputError, match="known_at: naive datetime"):
        TemporalRetriever(memory=memory).invoke(QUERY, known_at=naive)


def test_an_unknown_option_is_an_error_not_ignored(memory: TemporalMemory) -> None:
    with pytest.raises(TypeError, match="top_k"):
        TemporalRetriever(memory=memory).invoke(QUERY, top_k=3)
    with pytest.raises(ValidationError, match="top_k"):
        TemporalRetriever(memory=memory, top_k=3)  # type: ignore[call-arg]
