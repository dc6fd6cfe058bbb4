"""``add_many(..., defer_index=True)`` and ``retract(..., defer_index=True)``: the ledger commits,
the index catches up at the next search, write or close, in one batch (issue 32: a LangGraph
put or delete waited for four Chroma writes it never reads)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory, index_mirror

START = datetime(2030, 1, 1, tzinfo=UTC)


class CountingIndex(NumpyIndex):
    """A NumpyIndex that counts the batches applied to it and the rows in them."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def apply(self, records: Sequence[Any], vectors: Any, cursor: Any) -> None:
        if records:
            self.batches.append(len(records))
        super().apply(records, vectors, cursor)


def memory_with(index: CountingIndex, embedder: HashingEmbedder) -> TemporalMemory:
    clock = ManualClock(START)
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=index,
        config=MemoryConfig(embedder=embedder, clock=clock),
    )


def lives(who: str, city: str) -> Fact:
    return Fact(text=f"{who} lives in {city}", subject=who, relation="lives_in", object=city)


def test_deferred_writes_reach_the_index_at_the_next_search_in_one_batch() -> None:
    index, embedder = CountingIndex(), HashingEmbedder()
    memory = memory_with(index, embedder)
    memory.add_many([lives("ana", "Berlin")], defer_index=True)
    memory.add_many([lives("bo", "Oslo")], defer_index=True)
    memory.add_many([lives("ana", "Lisbon")], defer_index=True)
    memory.retract("bo", "lives_in", defer_index=True)
    assert index.batches == []  # the ledger holds all four writes, the index none yet
    assert [f.object for f in memory.as_of(subject="ana")] == ["Lisbon"]
    embedded = embedder.calls
    hits = memory.search("Where does Ana live?", k=5)
    assert [h.fact.object for h in hits] == ["Lisbon"]
    assert len(index.batches) == 1  # one catch-up for every deferred write
    assert embedder.calls == embedded + 1  # the query; the texts' vectors were kept
    memory.add_many([lives("cy", "Rome")])  # a write without defer_index catches up at once
    assert len(index.batches) == 2


def test_close_applies_deferred_writes() -> None:
    index, embedder = CountingIndex(), HashingEmbedder()
    memory = memory_with(index, embedder)
    memory.add_many([lives("ana", "Berlin")], defer_index=True)
    embedded = embedder.calls
    memory.close()
    memory.close()  # idempotent
    assert index.batches == [1]
    assert embedder.calls == embedded


def test_deferred_writes_catch_up_once_enough_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mirror, "DEFERRED_WRITES", 3)
    index = CountingIndex()
    memory = memory_with(index, HashingEmbedder())
    for i in range(7):
        memory.add_many([lives(f"p{i}", "Porto")], defer_index=True)
    assert index.batches == [3, 3]  # the 3rd and the 6th deferred write; the 7th waits


def test_deferred_writes_sync_and_async_agree() -> None:
    def run(asynchronous: bool) -> tuple[list[int], list[str]]:
        index = CountingIndex()
        memory = memory_with(index, HashingEmbedder())
        clock = memory.clock
        assert isinstance(clock, ManualClock)
        if asynchronous:

            async def writes() -> None:
                await memory.aadd_many([lives("ana", "Berlin")], defer_index=True)
                clock.advance(timedelta(seconds=1))
                await memory.aretract("ana", "lives_in", defer_index=True)
                await memory.aadd_many([lives("bo", "Oslo")], defer_index=True)

            asyncio.run(writes())
        else:
            memory.add_many([lives("ana", "Berlin")], defer_index=True)
            clock.advance(timedelta(seconds=1))
            memory.retract("ana", "lives_in", defer_index=True)
            memory.add_many([lives("bo", "Oslo")], defer_index=True)
        before = list(index.batches)
        found = [h.fact.text for h in memory.search("lives", k=5)]
        return before + index.batches, found

    assert run(False) == run(True) == ([3], ["bo lives in Oslo"])


def test_equal_texts_of_two_deferred_writes_keep_their_own_vectors() -> None:
    """Deferred vectors were kept by text: a later write of the same text with another vector
    (a LangGraph item put with index=False beside an indexed one) replaced the first's."""
    memory = memory_with(CountingIndex(), HashingEmbedder())
    one, two = [1.0] + [0.0] * 63, [0.0, 1.0] + [0.0] * 62
    first = Fact(text="same words", subject="a", relation="says", object="x")
    second = Fact(text="same words", subject="b", relation="says", object="x")
    a = memory.add_many([first], vectors={"same words": one}, defer_index=True)[0]
    b = memory.add_many([second], vectors={"same words": two}, defer_index=True)[0]
    memory.reconcile()
    ids = [a.fact_ids[0], b.fact_ids[0]]
    assert memory.vectors(ids) == {ids[0]: one, ids[1]: two}
