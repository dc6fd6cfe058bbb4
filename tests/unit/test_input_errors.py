"""The errors a new user met first (issue 32, item 4): each names the field and the fix, a wrong
type is also a TypeError, and times read the same in the core as in every adapter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from llama_index.core.vector_stores.types import VectorStoreQuery

from langchain_temporal import TemporalRetriever, TemporalStore, TemporalVectorStore
from llamaindex_temporal import TemporalVectorStore as LlamaTemporalVectorStore
from shared_core.clock import ManualClock, to_datetime
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError, InvalidInputTypeError
from shared_core.facts import MAX_METADATA_BYTES, MAX_METADATA_FIELDS, Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, SearchOptions, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)
MAY = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    config = MemoryConfig(embedder=HashingEmbedder(64), clock=clock)
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config
    ) as memory:
        yield memory


# ---------------------------------------------------------------- prose_judge
def test_a_misspelt_prose_judge_lists_the_accepted_values() -> None:
    with pytest.raises(InvalidInputError) as caught:
        MemoryConfig(prose_judge="kapa")  # type: ignore[arg-type]
    error = caught.value
    assert error.field == "prose_judge"
    assert error.problem == "is 'kapa', not an accepted value (did you mean \"kappa\"?)"
    for accepted in ('"kappa"', "claim_judge()", "kappa_judge()", "Judge", "None"):
        assert accepted in error.fix
    assert not isinstance(error, TypeError)


def test_a_prose_judge_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"prose_judge\[1\]: is of type int, not a judge"):
        MemoryConfig(prose_judge=("kappa", 3))  # type: ignore[arg-type]


# ---------------------------------------------------------------- texts and metadata
def test_an_empty_text_and_a_text_that_is_no_string_get_different_messages(
    memory: TemporalMemory,
) -> None:
    with pytest.raises(InvalidInputError) as empty:
        memory.add("")
    with pytest.raises(InvalidInputTypeError) as number:
        memory.add(123)  # type: ignore[arg-type]
    assert str(empty.value) == (
        "text: is empty; fix: pass the text to remember (a non-empty string); "
        "to store nothing, skip the call"
    )
    assert not isinstance(empty.value, TypeError)
    assert str(number.value) == (
        "text: is of type int, not a string; fix: pass the text to remember as a str "
        "(str(value) for a number), or a Fact"
    )
    assert isinstance(number.value, TypeError)
    assert memory.as_of() == []


@pytest.mark.parametrize("keyed", [False, True])
def test_add_names_the_text_the_same_way_keyed_or_not(memory: TemporalMemory, keyed: bool) -> None:
    key = {"subject": "Ana", "relation": "lives in", "object": "Porto"} if keyed else {}
    with pytest.raises(InvalidInputError, match=r"^text: is only whitespace; "):
        memory.add("   ", **key)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^text: is of type bytes, not a string; "):
        memory.add(b"Ana", **key)  # type: ignore[arg-type]


def test_add_many_names_the_item_that_is_no_string(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputTypeError, match=r"^items\[1\]: is of type int, not a "):
        memory.add_many(["Ana lives in Porto", 7])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match=r"^items\[0\]: is empty; "):
        asyncio.run(memory.aadd_many([""]))
    assert memory.as_of() == []


@pytest.mark.parametrize("keyed", [False, True])
def test_metadata_that_is_a_list_names_the_field_and_asks_for_a_mapping(
    memory: TemporalMemory, keyed: bool
) -> None:
    key = {"subject": "Ana", "relation": "lives in", "object": "Porto"} if keyed else {}
    with pytest.raises(InvalidInputTypeError) as caught:
        memory.add("Ana lives in Porto", metadata=["a"], **key)  # type: ignore[arg-type]
    assert caught.value.field == "metadata"
    assert caught.value.problem == "is of type list, not a mapping"
    assert "dict" in caught.value.fix
    with pytest.raises(InvalidInputTypeError, match=r"^metadatas\[0\]: is of type list"):
        memory.add_many(["Ana lives in Porto"], metadatas=[["a"]])  # type: ignore[list-item]
    assert memory.as_of() == []


# ---------------------------------------------------------------- k
def test_k_given_as_a_string_is_a_type_error_not_out_of_range(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputTypeError) as caught:
        memory.search("where does Ana live", k="3")  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError)
    assert str(caught.value) == "k: is '3' of type str, not an int; fix: pass an int >= 1"
    with pytest.raises(InvalidInputError, match=r"^k: 0 is out of range") as below:
        memory.search("where does Ana live", k=0)
    assert not isinstance(below.value, TypeError)
    with pytest.raises(TypeError, match=r"^expand: is 1.0 of type float"):
        SearchOptions(expand=1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------- times
ISO_MAY = "2024-05-01T00:00:00Z"


def test_iso_strings_for_valid_from_and_valid_at_work_in_the_core(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    prose = memory.add("Ana moved to Porto", valid_from=ISO_MAY)  # type: ignore[arg-type]
    keyed = memory.add(
        "Ana lives in Porto", subject="Ana", relation="lives in", object="Porto",
        valid_from="2024-05-01T02:00:00+02:00",  # type: ignore[arg-type]
    )  # fmt: skip
    assert prose.writes[0].fact.valid_from == MAY
    assert keyed.writes[0].fact.valid_from == MAY
    clock.advance(timedelta(days=200))
    before = "2024-04-30T00:00:00Z"
    assert memory.search("Ana", k=5, valid_at=before) == []  # type: ignore[arg-type]
    assert len(memory.search("Ana", k=5, valid_at=ISO_MAY, known_at=ISO_MAY)) == 2  # type: ignore[arg-type]
    assert memory.as_of(valid_at=before) == []  # type: ignore[arg-type]
    assert memory.namespaces(valid_at=ISO_MAY) == ["default"]  # type: ignore[arg-type]
    assert memory.select(valid_at=before) == []  # type: ignore[arg-type]
    assert memory.history("Ana", "lives in", known_at="2023-01-01T00:00Z") == []  # type: ignore[arg-type]
    memory.retract("Ana", "lives in", at="2024-06-01T00:00:00Z")  # type: ignore[arg-type]
    assert memory.as_of(subject="Ana", relation="lives in") == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2024-05-01", r"^valid_from: '2024-05-01' has no UTC offset; fix: append Z"),
        ("May 1st", r"^valid_from: 'May 1st' is not an ISO-8601 datetime; fix: use e.g."),
        (datetime(2024, 5, 1), r"^valid_from: naive datetime 2024-05-01T00:00:00; fix: pass"),  # noqa: DTZ001
    ],
)
def test_a_time_without_an_offset_gets_the_message_the_adapters_give(
    memory: TemporalMemory, value: object, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        memory.add("Ana moved", valid_from=value)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=message):
        to_datetime(value, "valid_from")
    with pytest.raises(InvalidInputError, match=message.replace("valid_from", "valid_at")):
        memory.search("Ana", valid_at=value)  # type: ignore[arg-type]
    assert memory.as_of() == []


def test_a_time_of_the_wrong_type_is_a_type_error(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputTypeError, match=r"^known_at: type list is not a time"):
        memory.search("Ana", known_at=[2024])  # type: ignore[arg-type]


def test_the_core_and_every_adapter_read_an_iso_valid_at_alike(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add(
        "Ana lives in Porto", subject="Ana", relation="lives in", object="Porto", valid_from=MAY
    )
    clock.advance(timedelta(days=200))
    store = TemporalStore(memory)
    store.put(("users", "ana"), "city", {"text": "Porto"})
    before, after = "2024-04-01T00:00:00Z", "2024-06-01T00:00:00+00:00"
    for when, expected in ((before, 0), (after, 1)):
        core = memory.search("Ana", k=5, valid_at=when)  # type: ignore[arg-type]
        chain = TemporalRetriever(memory=memory).invoke("Ana", k=5, valid_at=when)
        vectors = TemporalVectorStore(memory).similarity_search("Ana", k=5, valid_at=when)
        llama = LlamaTemporalVectorStore(memory).query(
            VectorStoreQuery(query_str="Ana", query_embedding=[0.0] * 64, similarity_top_k=5),
            valid_at=when,
        )
        assert [len(core), len(chain), len(vectors), len(llama.nodes or [])] == [expected] * 4
    assert store.get_as_of(("users", "ana"), "city", valid_at=before) is None
    assert store.get_as_of(("users", "ana"), "city", valid_at="2025-01-01T00:00Z") is not None  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^valid_at: '2024' is not an ISO-8601 "):
        store.get_as_of(("users", "ana"), "city", valid_at="2024")  # type: ignore[arg-type]


async def test_add_takes_a_fact_again_after_the_text_checks_refused_it(
    memory: TemporalMemory,
) -> None:
    # the first cut of the text checks refused memory.add(Fact(...)), which add_many and the
    # PostgreSQL integration test rely on
    berlin = Fact(
        text="Ana lives in Berlin.",
        subject="ana",
        relation="lives in",
        object="Berlin",
        valid_from=datetime(2020, 1, 1, tzinfo=UTC),
    )
    assert memory.add(berlin).writes[0].fact.object == "Berlin"  # type: ignore[union-attr]
    lisbon = Fact(
        text="Ana lives in Lisbon.",
        subject="ana",
        relation="lives in",
        object="Lisbon",
        valid_from=datetime(2023, 1, 1, tzinfo=UTC),
    )
    added = await memory.aadd(lisbon)
    assert [f.object for f in added.closed] == ["Berlin"]
    with pytest.raises(InvalidInputError, match="subject") as raised:
        memory.add(berlin, subject="bo")
    assert raised.value.field == "subject"


# ---------------------------------------------------------------- metadata size limits
HUGE = {
    "1 MB string": {"blob": "x" * 1_000_000},
    "10,000 keys": {f"k{i}": i for i in range(10_000)},
}


@pytest.mark.parametrize("metadata", list(HUGE.values()), ids=list(HUGE))
def test_huge_metadata_is_refused_by_name_and_nothing_is_stored(
    memory: TemporalMemory, metadata: dict[str, object]
) -> None:
    """Before: a 1 MB value was stored, and 10,000 keys committed to the ledger and then broke
    the Chroma index (IndexSyncError) for every later write."""
    revision = memory.ledger.revision()
    with pytest.raises(InvalidInputError, match="more than the limit") as added:
        memory.add("a note", metadata=metadata)
    assert added.value.field == "metadata"
    with pytest.raises(InvalidInputError, match="more than the limit") as keyed:
        memory.add("Maria lives in Porto.", subject="Maria", relation="lives in", object="Porto",
                   metadata=metadata)  # fmt: skip
    assert keyed.value.field == "metadata"
    with pytest.raises(InvalidInputError) as many:
        memory.add_many(["fine", "too much"], metadatas=[{}, metadata])
    assert many.value.field == "metadatas[1]"
    with pytest.raises(InvalidInputError) as fact:
        Fact(text="a note", metadata=metadata)
    assert fact.value.field == "metadata"
    assert "a store of your own" in fact.value.fix
    assert memory.ledger.revision() == revision
    assert memory.as_of() == []


def test_metadata_at_the_limits_is_stored(memory: TemporalMemory) -> None:
    at_limit = {f"k{i}": i for i in range(MAX_METADATA_FIELDS)}
    memory.add("many fields", metadata=at_limit)
    blob = {"blob": "x" * (MAX_METADATA_BYTES - len('{"blob": ""}'))}
    memory.add("a big field", metadata=blob)
    with pytest.raises(InvalidInputError, match="1,000,001 bytes"):
        memory.add("one byte more", metadata={"blob": blob["blob"] + "x"})
    with pytest.raises(InvalidInputError, match="1,001 fields"):
        memory.add("one field more", metadata={**at_limit, "one more": 1})
    assert sorted(f.text for f in memory.as_of()) == ["a big field", "many fields"]


async def test_huge_metadata_is_refused_by_both_vector_stores_naming_the_item(
    memory: TemporalMemory,
) -> None:
    from langchain_core.documents import Document
    from llama_index.core.schema import TextNode

    revision = memory.ledger.revision()
    huge = HUGE["10,000 keys"]
    langchain = TemporalVectorStore(memory)
    documents = [Document("fine"), Document("too much", id="big", metadata=huge)]
    with pytest.raises(InvalidInputError, match="fields") as caught:
        langchain.add_documents(documents)
    assert caught.value.field == "documents[1] (big).metadata"
    with pytest.raises(InvalidInputError, match="fields") as acaught:
        await langchain.aadd_documents(documents)
    assert acaught.value.field == "documents[1] (big).metadata"
    llama = LlamaTemporalVectorStore(memory)
    nodes = [TextNode(id_="ok", text="fine"), TextNode(id_="big", text="too", metadata=huge)]
    with pytest.raises(InvalidInputError, match="fields") as node:
        llama.add(nodes)
    assert node.value.field == "nodes[1] (id 'big').metadata"
    with pytest.raises(InvalidInputError, match="fields") as anode:
        await llama.async_add(nodes)
    assert anode.value.field == "nodes[1] (id 'big').metadata"
    assert memory.ledger.revision() == revision
