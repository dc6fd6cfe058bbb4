"""What TemporalMemory offers callers that name what they store (replacing, merge_prose) or rank
hits by their vectors (search_by_vector, vectors): a vector store's ids and MMR."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import FactNotFoundError, InvalidInputError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)
MARIA = {"subject": "Maria", "relation": "lives in"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def memory(clock: ManualClock) -> TemporalMemory:
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
    )


def texts(memory: TemporalMemory, query: str = "plan", **options: object) -> list[str]:
    return [hit.fact.text for hit in memory.search(query, k=10, **options)]  # type: ignore[arg-type]


def test_search_by_vector_is_search_with_the_query_embedded(memory: TemporalMemory) -> None:
    memory.add_many(["Maria lives in Lisbon.", "The office opens at nine."])
    vector = memory.embedder.embed_query("Where does Maria live?")
    by_text = memory.search("Where does Maria live?", k=2)
    by_vector = memory.search_by_vector(vector, k=2)
    assert [(h.fact.id, h.score) for h in by_vector] == [(h.fact.id, h.score) for h in by_text]


def test_search_by_vector_sees_the_past_and_runs_phi_t(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Maria lives in Berlin.", **MARIA, object="Berlin", valid_from=START)
    clock.advance(timedelta(days=30))
    memory.add("Maria lives in Lisbon.", **MARIA, object="Lisbon")
    vector = memory.embedder.embed_query("Maria")
    then = memory.search_by_vector(vector, valid_at=START + timedelta(days=1))
    assert [h.fact.object for h in then] == ["Berlin"]
    judged = memory.search_by_vector(vector, include_history=True, detector=KeyConflictDetector())
    assert [h.fact.object for h in judged] == ["Lisbon"]
    assert [s.candidate.text for s in judged[0].shadows] == ["Maria lives in Berlin."]


def test_search_by_vector_refuses_a_wrong_dimension_and_expansion(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputError, match=r"^vector: .*dimension 3") as caught:
        memory.search_by_vector([1.0, 0.0, 0.0])
    assert "64 finite floats" in caught.value.fix
    with pytest.raises(InvalidInputError, match=r"^expand: needs the query text"):
        memory.search_by_vector([0.1] * 64, expand=2)


def test_vectors_are_the_stored_embeddings(memory: TemporalMemory) -> None:
    [added] = memory.add_many(["The office opens at nine."])
    [fact_id] = added.fact_ids
    found = memory.vectors([fact_id, "no-such-fact"])
    assert list(found) == [fact_id]
    assert found[fact_id] == pytest.approx(memory.embedder.embed_documents([added.text])[0])


def test_replacing_withdraws_in_the_same_write_and_the_index_follows(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    [old] = memory.add_many(["The plan is draft one."], metadatas=[{"doc": "a"}])
    before = clock.advance(timedelta(days=1))
    clock.advance(timedelta(days=1))
    memory.add_many(
        ["The plan is draft two."], metadatas=[{"doc": "a"}], replacing=list(old.fact_ids)
    )
    assert texts(memory) == ["The plan is draft two."]
    assert texts(memory, known_at=before) == ["The plan is draft one."]


def test_merge_prose_false_keeps_equal_texts_apart(memory: TemporalMemory) -> None:
    note = "The office opens at nine."
    merged = memory.add_many([note, note], metadatas=[{"doc": "a"}, {"doc": "b"}])
    assert merged[0].fact_ids == merged[1].fact_ids
    kept = memory.add_many([note, note], metadatas=[{"doc": "c"}, {"doc": "d"}], merge_prose=False)
    assert kept[0].fact_ids != kept[1].fact_ids
    assert sorted(h.fact.metadata["doc"] for h in memory.search(note, k=5)) == ["a", "c", "d"]


async def test_the_async_twins_agree(memory: TemporalMemory) -> None:
    [added] = await memory.aadd_many(["The office opens at nine."], merge_prose=False)
    vector = memory.embedder.embed_query("office")
    by_vector = await memory.asearch_by_vector(vector, k=1)
    assert by_vector == await asyncio.to_thread(memory.search_by_vector, vector, k=1)
    assert await memory.avectors(list(added.fact_ids)) == memory.vectors(list(added.fact_ids))


def test_restore_where_undoes_each_groups_latest_withdrawal_in_one_transaction(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add_many(
        ["draft one", "draft two", "kept"],
        metadatas=[{"doc": "a"}, {"doc": "b"}, {"doc": "c"}],
        merge_prose=False,
    )
    clock.advance(timedelta(days=1))
    memory.retire_where({"doc": "a"})
    clock.advance(timedelta(days=1))
    memory.retire_where({"doc": "b"})
    found = memory.withdrawals(None, per="doc")
    assert found.found == {"a", "b", "c"}
    assert found.current == {"c"}
    assert len(found.restorable) == 2
    results = memory.restore_where(None, per="doc")
    assert [r.decision.value for r in results] == ["restored", "restored"]
    assert sorted(texts(memory, "draft")) == ["draft one", "draft two", "kept"]
    assert memory.restore_where(None, per="doc") == [], "nothing is withdrawn any more"


def test_unretire_many_restores_all_or_none(memory: TemporalMemory) -> None:
    added = memory.add_many(["one note", "two notes"], merge_prose=False)
    ids = [fact_id for item in added for fact_id in item.fact_ids]
    memory.retire_where(None)
    revision = memory.ledger.revision()
    with pytest.raises(FactNotFoundError):
        memory.ledger.unretire_many([ids[0], "no-such-fact"])
    assert memory.ledger.revision() == revision
    assert texts(memory, "note") == []
    memory.ledger.unretire_many(ids)
    assert sorted(texts(memory, "note")) == ["one note", "two notes"]
