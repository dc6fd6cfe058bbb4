"""``TemporalMemory.add_many(..., vectors=...)``: texts the caller has vectors for are not
embedded again (what lets a LangGraph store without ``index`` embed nothing, issue 32)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

START = datetime(2030, 1, 1, tzinfo=UTC)


def memory_with(embedder: HashingEmbedder) -> TemporalMemory:
    clock = ManualClock(START)
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=embedder, clock=clock),
    )


def facts() -> list[Fact]:
    return [
        Fact(text="Ana lives in Berlin", subject="ana", relation="lives_in", object="Berlin"),
        Fact(text="Bo drinks tea", subject="bo", relation="drinks", object="tea"),
    ]


def test_given_vectors_are_kept_and_not_embedded_sync_and_async_alike() -> None:
    given = [0.0] * 63 + [1.0]
    results = []
    for run in ("sync", "async"):
        embedder = HashingEmbedder()
        memory = memory_with(embedder)
        before = embedder.calls
        if run == "sync":
            memory.add_many(facts(), vectors={"Bo drinks tea": given})
        else:
            asyncio.run(memory.aadd_many(facts(), vectors={"Bo drinks tea": given}))
        assert embedder.calls == before + 1  # only the text without a given vector
        bo = memory.as_of(subject="bo", relation="drinks")[0]
        assert memory.vectors([bo.id]) == {bo.id: given}
        results.append(sorted(f.text for f in memory.as_of()))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    ("vectors", "field"),
    [
        ({"Bo drinks tea": [1.0, 2.0]}, "vectors['Bo drinks tea']"),
        ({"Bo drinks tea": [float("nan")] * 64}, "vectors['Bo drinks tea']"),
        ({"Bo drinks tea": [0.0] * 64}, "vectors['Bo drinks tea']"),
        ({"Bo drinks tea": "not a vector"}, "vectors['Bo drinks tea']"),
        ([[1.0] * 64], "vectors"),
    ],
)
def test_a_bad_given_vector_is_refused_and_nothing_written(vectors: object, field: str) -> None:
    memory = memory_with(HashingEmbedder())
    with pytest.raises(InvalidInputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        memory.add_many(facts(), vectors=vectors)  # type: ignore[arg-type]
    assert memory.as_of() == []
