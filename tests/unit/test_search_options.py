"""The search contract (SearchOptions, one value for search / asearch / context and the
adapters), the typed async twins of the whole TemporalMemory surface, and prose valid time."""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import Iterator
from dataclasses import FrozenInstanceError, fields
from datetime import UTC, datetime
from typing import Any

import pytest

from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.filters import Op, all_of, where
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, SearchChanges, SearchOptions, TemporalMemory
from shared_core.memory.options import OPTION_NAMES

START = datetime(2024, 6, 1, tzinfo=UTC)


def d(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


@pytest.fixture
def memory() -> Iterator[TemporalMemory]:
    clock = ManualClock(START)
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
    ) as memory:  # fmt: skip
        for city, year in (("Berlin", 2019), ("Lisbon", 2022), ("Porto", 2024)):
            memory.add(
                f"Maria lives in {city}.", subject="Maria", relation="lives in", object=city,
                valid_from=d(year),
            )  # fmt: skip
        memory.add_many(["Maria likes green tea.", "The office opens at nine."])
        yield memory


# ---------------------------------------------------------------- one contract
def test_the_keyword_form_names_exactly_the_options() -> None:
    """An option is added in one place: SearchChanges must follow SearchOptions."""
    assert tuple(SearchChanges.__annotations__) == OPTION_NAMES
    assert tuple(f.name for f in fields(SearchOptions)) == OPTION_NAMES


def test_search_context_and_asearch_take_the_same_options() -> None:
    for method in (TemporalMemory.search, TemporalMemory.context, TemporalMemory.asearch):
        parameters = inspect.signature(method).parameters
        assert parameters["options"].default is None
        hints = typing.get_type_hints(method, include_extras=True)
        assert "changes" in parameters, method.__name__
        assert "SearchChanges" in str(hints["changes"]), method.__name__


def test_options_are_frozen_and_checked_when_built() -> None:
    options = SearchOptions(k=3, where={"source": "wiki"})
    with pytest.raises(FrozenInstanceError):
        options.k = 4  # type: ignore[misc]
    assert options.where == all_of(where("source", Op.EQ, "wiki"))
    bad: list[tuple[dict[str, Any], str]] = [
        ({"k": 0}, "k"),
        ({"k": True}, "k"),
        ({"expand": -1}, "expand"),
        ({"namespace": ""}, "namespace"),
        ({"valid_at": datetime(2024, 1, 1)}, "valid_at"),  # noqa: DTZ001 - naive on purpose
        ({"known_at": "2024-01-01"}, "known_at"),
        ({"include_history": "yes"}, "include_history"),
        ({"detector": "key"}, "detector"),
        ({"where": ["source"]}, "where"),
    ]
    for given, field in bad:
        with pytest.raises(InvalidInputError) as caught:
            SearchOptions(**given)
        assert caught.value.field == field


def test_merged_keeps_what_none_leaves_and_an_empty_filter_removes_the_filter() -> None:
    base = SearchOptions(k=3, valid_at=d(2020), where={"source": "wiki"})
    assert base.merged() is base
    assert base.merged(k=None, valid_at=None) == base
    assert base.merged(k=7).k == 7
    assert base.merged(where={}).where is None
    with pytest.raises(TypeError, match="top_k"):
        base.merged(top_k=3)  # type: ignore[call-arg]


def test_an_options_value_and_keywords_give_the_same_hits(memory: TemporalMemory) -> None:
    options = SearchOptions(k=2, valid_at=d(2020), include_history=False)
    assert memory.search("Where does Maria live?", options) == memory.search(
        "Where does Maria live?", k=2, valid_at=d(2020)
    )
    as_of_2020 = memory.search("Where does Maria live?", options, k=1)
    assert [hit.fact.object for hit in as_of_2020] == ["Berlin"]


def test_context_retrieves_twenty_unless_told_otherwise(memory: TemporalMemory) -> None:
    asked: list[SearchOptions] = []
    real = memory.search

    def spy(query: str, options: SearchOptions | None = None, /, **changes: Any) -> Any:
        asked.append(options if options is not None else SearchOptions())
        return real(query, options, **changes)

    memory.search = spy  # type: ignore[method-assign]
    memory.context("Maria")
    memory.context("Maria", k=2)
    memory.context("Maria", SearchOptions(k=3))
    assert [options.k for options in asked] == [20, 2, 3]


# ---------------------------------------------------------------- async twins
SURFACE = [
    "add", "add_many", "retract", "correct", "retire", "retire_where", "unretire", "declare",
    "search", "context", "history", "as_of", "select", "explain", "reconcile", "close",
]  # fmt: skip


@pytest.mark.parametrize("name", SURFACE)
def test_every_method_has_a_typed_async_twin(name: str) -> None:
    sync = getattr(TemporalMemory, name)
    twin = getattr(TemporalMemory, f"a{name}")
    assert inspect.iscoroutinefunction(twin)
    assert inspect.signature(twin) == inspect.signature(sync)
    assert twin.__name__ == f"a{name}"


def test_sync_and_async_agree_on_every_read(memory: TemporalMemory) -> None:
    fact_id = memory.search("Where does Maria live?", k=1)[0].fact.id
    reads: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("search", ("Where does Maria live?",), {"k": 5}),
        ("search", ("Where does Maria live?", SearchOptions(include_history=True)), {}),
        ("search", ("Maria",), {"detector": KeyConflictDetector(), "include_history": True}),
        ("context", ("Maria",), {"token_budget": 40}),
        ("history", ("Maria", "lives in"), {}),
        ("as_of", (), {"valid_at": d(2020)}),
        ("select", ({"subject": "Maria"},), {"include_history": True}),
        ("explain", (fact_id,), {}),
    ]

    async def run_all() -> list[Any]:
        return [await getattr(memory, f"a{name}")(*args, **kw) for name, args, kw in reads]

    assert asyncio.run(run_all()) == [
        getattr(memory, name)(*args, **kw) for name, args, kw in reads
    ]


def test_sync_and_async_writes_leave_the_same_ledger() -> None:
    def script(memory: TemporalMemory) -> None:
        memory.declare("speaks", "many")
        memory.add("Ana speaks Spanish.", subject="Ana", relation="speaks", object="Spanish",
                   valid_from=d(2023))  # fmt: skip
        added = memory.add_many(["Ana likes tea.", "Ana works at Acme."])
        memory.retract("Ana", "speaks", "Spanish", at=d(2024, 3))
        memory.retire(added[0].fact_ids[0])
        memory.unretire(added[0].fact_ids[0])
        memory.correct(added[1].fact_ids[0], text="Ana works at Globex.")
        memory.retire_where({"subject": "Ana"})
        memory.reconcile()

    async def ascript(memory: TemporalMemory) -> None:
        await memory.adeclare("speaks", "many")
        await memory.aadd("Ana speaks Spanish.", subject="Ana", relation="speaks",
                          object="Spanish", valid_from=d(2023))  # fmt: skip
        added = await memory.aadd_many(["Ana likes tea.", "Ana works at Acme."])
        await memory.aretract("Ana", "speaks", "Spanish", at=d(2024, 3))
        await memory.aretire(added[0].fact_ids[0])
        await memory.aunretire(added[0].fact_ids[0])
        await memory.acorrect(added[1].fact_ids[0], text="Ana works at Globex.")
        await memory.aretire_where({"subject": "Ana"})
        await memory.areconcile()

    def fresh() -> TemporalMemory:
        clock = ManualClock(START)
        return TemporalMemory(
            ledger=InMemoryLedger(clock=clock),
            index=NumpyIndex(),
            config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
        )  # fmt: skip

    sync_memory, async_memory = fresh(), fresh()
    script(sync_memory)
    asyncio.run(ascript(async_memory))
    assert _shape(sync_memory) == _shape(async_memory)


def _shape(memory: TemporalMemory) -> list[tuple[Any, ...]]:
    """The ledger's rows without their random ids."""
    statements, versions = memory.ledger.export()
    rows = sorted(
        (row.text, row.kind, row.valid_from, row.recorded_at, row.retired_at) for row in statements
    )
    return [*rows, (len(versions),)]


def test_async_with_closes_the_memory() -> None:
    clock = ManualClock(START)
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
    )  # fmt: skip

    async def use() -> None:
        async with memory as opened:
            await opened.aadd("Maria likes tea.")

    asyncio.run(use())
    with pytest.raises(Exception, match="closed"):
        memory.add("Maria likes coffee.")


# ---------------------------------------------------------------- prose valid time
def test_add_with_valid_to_on_prose_keeps_valid_to(memory: TemporalMemory) -> None:
    """The bug: add(text, valid_to=...) without a key went through add_many, which dropped it."""
    added = memory.add("The office is closed for repairs.", valid_from=d(2024, 2),
                       valid_to=d(2024, 4))  # fmt: skip
    fact = added.writes[0].fact
    assert fact is not None
    assert (fact.valid_from, fact.valid_to) == (d(2024, 2), d(2024, 4))
    during = memory.search("office closed", valid_at=d(2024, 3), k=5)
    after = memory.search("office closed", valid_at=d(2024, 5), k=5)
    assert fact.id in [hit.fact.id for hit in during]
    assert fact.id not in [hit.fact.id for hit in after]


def test_add_many_gives_its_valid_time_to_statements_without_their_own(
    memory: TemporalMemory,
) -> None:
    added = memory.add_many(
        ["Sale on all chairs.", "Sale on all desks."],
        metadatas=[{}, {"valid_to": "2024-03-15T00:00:00Z"}],
        valid_from=d(2024, 2),
        valid_to=d(2024, 4),
    )
    ends = [item.writes[0].fact.valid_to for item in added]  # type: ignore[union-attr]
    assert ends == [d(2024, 4), datetime(2024, 3, 15, tzinfo=UTC)]
