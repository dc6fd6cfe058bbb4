"""Who speaks (issue 31, defect 3: "I" was a shared subject, so Bo's "I live in Paris."
superseded Ana's "I live in Berlin."): first person is the write's speaker, and nothing closes
across speakers or namespaces, through TemporalMemory and every adapter's front door."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from langchain_temporal import TemporalStore
from langchain_temporal import TemporalVectorStore as LangChainStore
from llamaindex_temporal import TemporalVectorStore as LlamaIndexStore
from shared_core.clock import ManualClock
from shared_core.errors import InvalidInputError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging import Judge, ProseJudge
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.judges import EMBEDDER, KeyingJudge, home_claim_judge

ANA, BO = "I live in Berlin.", "I live in Paris."
ANA_MOVES = "I moved to Lisbon."
TEXTS = (ANA, BO, ANA_MOVES)
QUESTION = "Where do I live?"


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


JUDGES: dict[str, Callable[[], Judge]] = {
    "keying": KeyingJudge,
    "claims": lambda: home_claim_judge(TEXTS),
}


def memory_with(judge: Judge | None, **options: object) -> TemporalMemory:
    clock = ManualClock(at(2026))
    config = MemoryConfig(embedder=EMBEDDER, clock=clock, prose_judge=judge, **options)  # type: ignore[arg-type]
    return TemporalMemory(ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config)


@pytest.fixture(params=sorted(JUDGES))
def memory(request: pytest.FixtureRequest) -> Iterator[TemporalMemory]:
    with memory_with(JUDGES[request.param]()) as mem:
        yield mem


def current(mem: TemporalMemory, namespace: str = "default") -> set[str]:
    return {fact.text for fact in mem.as_of(namespace=namespace)}


def searched(mem: TemporalMemory, **options: object) -> list[str]:
    return [hit.fact.text for hit in mem.search(QUESTION, k=5, **options)]  # type: ignore[arg-type]


def test_one_speakers_i_does_not_supersede_another_speakers_i(memory: TemporalMemory) -> None:
    memory.add(ANA, speaker="ana", valid_from=at(2020))
    bo = memory.add(BO, speaker="bo", valid_from=at(2021))
    assert bo.closed == ()
    assert current(memory) == {ANA, BO}
    assert searched(memory, where={"user_id": "ana"}) == [ANA]
    moved = memory.add(ANA_MOVES, speaker="ana", valid_from=at(2022))  # the judge does work
    assert [fact.text for fact in moved.closed] == [ANA]
    assert current(memory) == {BO, ANA_MOVES}


def test_one_speakers_i_does_not_supersede_another_speakers_i_named_in_metadata(
    memory: TemporalMemory,
) -> None:
    memory.add(ANA, metadata={"user_id": "ana"}, valid_from=at(2020))
    memory.add(BO, metadata={"user_id": "bo"}, valid_from=at(2021))
    assert current(memory) == {ANA, BO}
    assert searched(memory, where={"user_id": "ana"}) == [ANA]


def test_one_speakers_i_does_not_supersede_another_speakers_i_in_one_batch(
    memory: TemporalMemory,
) -> None:
    added = memory.add_many(
        [ANA, BO], metadatas=[{"user_id": "ana"}, {"user_id": "bo"}], valid_from=at(2020)
    )
    assert [a.closed for a in added] == [(), ()]
    memory.add_many([BO], speaker="bo", valid_from=at(2021))
    assert current(memory) == {ANA, BO}


def test_one_speakers_i_does_not_supersede_their_own_i_in_another_namespace(
    memory: TemporalMemory,
) -> None:
    memory.add(ANA, speaker="ana", namespace="work", valid_from=at(2020))
    memory.add(ANA_MOVES, speaker="ana", namespace="home", valid_from=at(2021))
    assert current(memory, "work") == {ANA}
    assert current(memory, "home") == {ANA_MOVES}


def test_one_speakers_i_does_not_supersede_another_speakers_i_with_a_pairwise_judge() -> None:
    class Always:
        def contradiction_scores(self, pairs: list[tuple[str, str]]) -> list[float]:
            return [0.99] * len(pairs)

    judge = ProseJudge(scorer=Always(), threshold=0.5, name="always", min_cosine=-1.0)
    with memory_with(judge) as mem:
        mem.add_many(
            [ANA, BO], metadatas=[{"user_id": "ana"}, {"user_id": "bo"}], valid_from=at(2020)
        )
        assert mem.add(BO, speaker="bo", valid_from=at(2021)).closed == ()
        assert current(mem) == {ANA, BO}
        moved = mem.add(ANA_MOVES, speaker="ana", valid_from=at(2022))
        assert [fact.text for fact in moved.closed] == [ANA]


def test_the_speaker_is_written_under_the_speaker_field() -> None:
    with memory_with(None, speaker_field="author") as mem:
        (added,) = mem.add_many([ANA], speaker="ana")
        assert added.writes[0].fact is not None
        assert added.writes[0].fact.metadata["author"] == "ana"
        keyed = mem.add("Ana is 30.", subject="Ana", relation="age", object=30, speaker="ana")
        assert keyed.writes[0].fact is not None
        assert keyed.writes[0].fact.metadata["author"] == "ana"
    with memory_with(None, speaker_field=None) as mem:
        (added,) = mem.add_many([ANA], speaker="ana")
        assert added.writes[0].fact is not None
        assert "user_id" not in added.writes[0].fact.metadata


@pytest.mark.parametrize(
    ("options", "field", "fix"),
    [
        ({"speaker": "ana", "metadata": {"user_id": "bo"}}, "speaker", "speaker='bo'"),
        ({"speaker": ""}, "speaker", "non-empty str"),
        ({"speaker": 7}, "speaker", "non-empty str"),
        ({"metadata": {"user_id": ["ana"]}}, "metadatas[0]['user_id']", "speaker_field=None"),
    ],
)
def test_a_bad_speaker_is_refused_naming_the_field_and_nothing_is_stored(
    options: dict[str, object], field: str, fix: str
) -> None:
    with memory_with(KeyingJudge()) as mem:
        with pytest.raises(InvalidInputError) as error:
            mem.add(ANA, **options)  # type: ignore[arg-type]
        assert error.value.field == field
        assert fix in str(error.value)
        assert current(mem) == set()


def test_an_int_user_id_names_a_speaker() -> None:
    with memory_with(KeyingJudge()) as mem:
        mem.add(ANA, metadata={"user_id": 1}, valid_from=at(2020))
        mem.add(BO, metadata={"user_id": 2}, valid_from=at(2021))
        assert current(mem) == {ANA, BO}
        assert [f.subject for f in mem.as_of()] == ["1", "2"]


# ------------------------------------------------------------------ the adapters' front doors
def test_one_speakers_i_does_not_supersede_another_speakers_i_through_langchain(
    memory: TemporalMemory,
) -> None:
    store = LangChainStore(memory)
    store.add_texts([ANA], speaker="ana", valid_from=at(2020))
    store.add_texts([BO], metadatas=[{"user_id": "bo"}], valid_from=at(2021))
    assert current(memory) == {ANA, BO}
    found = store.similarity_search(QUESTION, k=5, where={"user_id": "ana"})
    assert [doc.page_content for doc in found] == [ANA]
    asyncio.run(store.aadd_texts([ANA_MOVES], speaker="ana", valid_from=at(2022)))
    assert current(memory) == {BO, ANA_MOVES}


def test_one_speakers_i_does_not_supersede_another_speakers_i_through_llamaindex(
    memory: TemporalMemory,
) -> None:
    store = LlamaIndexStore(memory)
    store.add([TextNode(id_="a", text=ANA, metadata={"user_id": "ana"})], valid_from=at(2020))
    store.add([TextNode(id_="b", text=BO)], speaker="bo", valid_from=at(2021))
    assert current(memory) == {ANA, BO}
    filters = MetadataFilters(
        filters=[MetadataFilter(key="user_id", value="ana", operator=FilterOperator.EQ)]
    )
    result = store.query(VectorStoreQuery(query_str=QUESTION, similarity_top_k=5, filters=filters))
    assert [node.get_content() for node in result.nodes or []] == [ANA]
    asyncio.run(
        store.async_add([TextNode(id_="c", text=ANA_MOVES)], speaker="ana", valid_from=at(2022))
    )
    assert current(memory) == {BO, ANA_MOVES}


def test_one_speakers_i_does_not_supersede_another_speakers_i_through_langgraph(
    memory: TemporalMemory,
) -> None:
    store = TemporalStore(memory, index={"fields": ["text"]})
    ana, bo = ("memories", "ana"), ("memories", "bo")
    store.put(ana, str(uuid.uuid4()), {"text": ANA})
    store.put(bo, str(uuid.uuid4()), {"text": BO})
    store.put(ana, "home", {"text": ANA})
    store.put(bo, "home", {"text": BO})  # the same key in another user's namespace
    assert [item.value["text"] for item in store.search(ana, query=QUESTION)] == [ANA, ANA]
    assert [item.value["text"] for item in store.search(bo, query=QUESTION)] == [BO, BO]
    speakers = {
        fact.metadata["user_id"]
        for namespace in memory.namespaces(prefix="langgraph")
        for fact in memory.as_of(namespace=namespace)
    }
    assert speakers == {"langgraph.memories.ana", "langgraph.memories.bo"}


# ---------------------------------------- issue 33, item 2: chat subjects, with a claim judge
CHAT = (
    "I live in Berlin.",
    "Just moved to Lisbon!",
    "My manager is Tom.",
    "Tom left, Priya is my manager now.",
)


def chat_claim_judge() -> Judge:
    """A claim judge whose frame head fake frames the chat's homes and managers and whose kappa
    fake ends a claim when the value differs."""
    from shared_core.detectors.frames import Frame, FrameProfile
    from shared_core.detectors.kappa import Verdict
    from shared_core.judging import ClaimJudge

    attribute = {text: "home_city" if i < 2 else "manager" for i, text in enumerate(CHAT)}
    vectors = {tuple(round(x, 6) for x in EMBEDDER.embed_documents([t])[0]): t for t in CHAT}

    class Frames:
        def profiles(self, rows: object) -> list[FrameProfile]:
            out = []
            for row in rows:  # type: ignore[attr-defined]
                text = vectors.get(tuple(round(x, 6) for x in row))
                label = attribute.get(text or "")
                homes = 1.0 if label == "home_city" else 0.0
                out.append(
                    FrameProfile(0.99, Frame(label, 0.99), (homes, 1.0 - homes))
                    if label
                    else FrameProfile(0.0, None, (0.5, 0.5))
                )
            return out

    class Ends:
        def verdict_scores(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
            return [Verdict(ends=0.98, restates=0.01, neither=0.01) for _ in pairs]

    return ClaimJudge(
        scorer=Ends(), frames=Frames(), name="chat", ends_threshold=0.9, restates_threshold=0.9
    )


def test_just_moved_to_lisbon_ends_its_speakers_home_not_lisbons_nor_another_speakers() -> None:
    with memory_with(chat_claim_judge()) as mem:
        mem.add(CHAT[0], speaker="ana", valid_from=at(2020))
        mem.add(CHAT[0], speaker="bo", valid_from=at(2020))
        moved = mem.add(CHAT[1], speaker="ana", valid_from=at(2021))
        claim = moved.writes[0].fact
        assert claim is not None
        assert claim.subject == "ana"  # broke (issue 33): read as about lisbon
        assert [f.metadata["user_id"] for f in moved.closed] == ["ana"]
        assert {(f.text, f.metadata["user_id"]) for f in mem.as_of()} == {
            (CHAT[1], "ana"),
            (CHAT[0], "bo"),
        }


def test_tom_left_priya_is_my_manager_now_ends_the_speakers_manager_not_toms() -> None:
    with memory_with(chat_claim_judge()) as mem:
        mem.add(CHAT[2], speaker="ana", valid_from=at(2020))
        mem.add(CHAT[2], speaker="bo", valid_from=at(2020))
        changed = mem.add(CHAT[3], speaker="ana", valid_from=at(2021))
        claim = changed.writes[0].fact
        assert claim is not None
        assert claim.subject == "ana"  # broke (issue 33): read as about tom
        assert [(f.text, f.metadata["user_id"]) for f in changed.closed] == [(CHAT[2], "ana")]


def test_a_chat_statement_naming_no_one_without_a_speaker_stays_prose() -> None:
    with memory_with(chat_claim_judge(), speaker_field=None) as mem:
        mem.add(CHAT[0], valid_from=at(2020))
        moved = mem.add(CHAT[1], valid_from=at(2021))
        assert moved.closed == ()
        assert moved.writes[0].fact is not None
        assert moved.writes[0].fact.key is None
        assert {f.text for f in mem.as_of()} == {CHAT[0], CHAT[1]}
