"""Async LLM callables (issue 18, part 4): the LLM judge, the LLM extractor and the query
expander take ``str -> str``, ``async str -> str`` or both (a TextLLMPair). Per entry point,
the sync and async paths give the same results with the same fake LLM; async paths await an
async LLM on the loop's thread and run a sync one in a worker thread; a sync path runs an
async-only LLM to completion outside a running loop and refuses it, by name, inside one."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import NeedsAsyncError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.llm_calls import TextLLMPair, is_async_only, is_native_async
from shared_core.memory import MemoryConfig, TemporalMemory
from shared_core.memory.expansion import aexpand_query, expand_query
from shared_core.phi_t import (
    AnyConflict,
    Candidate,
    atemporal_dominance,
    temporal_dominance,
)
from tests.keying_llm import BatchLLM

KINDS = ["sync", "async", "pair"]


def d(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


class Fake:
    """A scripted LLM, answering by rule (so that call order does not matter), that records
    each call: which form was called and on which thread."""

    def __init__(self, rule: Callable[[str], str]) -> None:
        self.rule = rule
        self.calls: list[tuple[str, int]] = []

    def sync(self, prompt: str) -> str:
        self.calls.append(("sync", threading.get_ident()))
        return self.rule(prompt)

    async def asynchronous(self, prompt: str) -> str:
        await asyncio.sleep(0)  # a real client would wait here
        self.calls.append(("async", threading.get_ident()))
        return self.rule(prompt)

    def llm(self, kind: str) -> Any:
        if kind == "sync":
            return self.sync
        if kind == "async":
            return self.asynchronous
        return TextLLMPair(self.sync, self.asynchronous, name="fake")


def judge_rule(prompt: str) -> str:
    """Whoever moved away from Berlin outdates the Berlin statement (set mode), or yes/no."""
    if "Older statement" in prompt:
        older = prompt.split("Older statement", 1)[1].split("\n", 1)[0]
        newer = prompt.split("Newer statement", 1)[1].split("\n", 1)[0]
        return "yes" if "Berlin" in older and "moved" in newer else "no"
    lines = [line for line in prompt.splitlines() if line[:1].isdigit()]
    berlin = [int(line.split(".")[0]) for line in lines if "Berlin" in line]
    moved = [int(line.split(".")[0]) for line in lines if "moved" in line]
    return json.dumps({"conflicts": [[b, m] for b in berlin for m in moved]})


def extractor_facts(text: str, known: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """Where Maria lives, dated as the statement states it; for anything else an invented
    object (a count the statement does not write), which the judge drops as a problem."""
    if "Lisbon" in text:
        return [{"subject": "Maria", "relation": "lives in", "object": "Lisbon",
                 "card": "one", "valid_from": "2022-05-01T00:00:00Z"}]  # fmt: skip
    if "Berlin" in text:
        return [{"subject": "Maria", "relation": "lives in", "object": "Berlin",
                 "card": "one", "valid_from": "2019-01-01T00:00:00Z"}]  # fmt: skip
    return [{"subject": "Maria", "relation": "has pets", "object": "1", "card": "many"}]


def extractor_rule(prompt: str) -> str:
    """The judge's batch format (one LLM call keys every statement of a batch)."""
    return BatchLLM(extractor_facts)(prompt)


def expander_rule(prompt: str) -> str:
    return "Maria's home city\nWhere is Maria based"


POOL = [
    Candidate(id="b", text="Maria lives in Berlin.", timestamp=d(2019)),
    Candidate(id="l", text="Maria moved to Lisbon.", timestamp=d(2022)),
    Candidate(id="c", text="Maria keeps a cat.", timestamp=d(2020)),
]


# ---------------------------------------------------------------- the parts
def test_async_forms_are_recognised() -> None:
    fake = Fake(judge_rule)
    assert (is_async_only(fake.sync), is_native_async(fake.sync)) == (False, False)
    assert (is_async_only(fake.asynchronous), is_native_async(fake.asynchronous)) == (True, True)
    assert (is_async_only(fake.llm("pair")), is_native_async(fake.llm("pair"))) == (False, True)

    class AsyncCall:
        async def __call__(self, prompt: str) -> str:
            return prompt

    assert is_async_only(AsyncCall())


@pytest.mark.parametrize("mode", ["set", "pairwise"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_llm_judge_gives_the_same_verdicts_sync_and_async(kind: str, mode: str) -> None:
    sync_fake, async_fake = Fake(judge_rule), Fake(judge_rule)
    sync_judge = LLMConflictDetector(sync_fake.llm(kind), mode=mode)  # type: ignore[arg-type]
    async_judge = LLMConflictDetector(async_fake.llm(kind), mode=mode)  # type: ignore[arg-type]
    found = sync_judge.find_conflicts(POOL, query="Where does Maria live?")
    assert [(c.older, c.newer) for c in found] == [(0, 1)]
    assert asyncio.run(async_judge.afind_conflicts(POOL, query="Where does Maria live?")) == found
    assert sync_judge.stats == async_judge.stats
    sync_kept = temporal_dominance(POOL, sync_judge).kept
    assert asyncio.run(atemporal_dominance(POOL, async_judge)).kept == sync_kept


@pytest.mark.parametrize("kind", KINDS)
def test_the_llm_extractor_gives_the_same_facts_sync_and_async(kind: str) -> None:
    extractor = LLMExtractor(Fake(extractor_rule).llm(kind))
    for text in ("Maria moved to Lisbon in 2022.", "Maria keeps a cat.", "  "):
        sync = extractor.extract(text, {"source": "chat"})
        assert asyncio.run(extractor.aextract(text, {"source": "chat"})) == sync
    (fact,) = extractor.extract("Maria moved to Lisbon in 2022.", {}).facts
    assert (fact.object, fact.valid_from) == ("Lisbon", datetime(2022, 5, 1, tzinfo=UTC))


@pytest.mark.parametrize("kind", KINDS)
def test_the_query_expander_gives_the_same_rewrites_sync_and_async(kind: str) -> None:
    llm = Fake(expander_rule).llm(kind)
    rewrites = expand_query(llm, "Where does Maria live?", 2)
    assert rewrites == ["Maria's home city", "Where is Maria based"]
    assert asyncio.run(aexpand_query(llm, "Where does Maria live?", 2)) == rewrites


# ---------------------------------------------------------------- which thread
async def test_async_paths_await_an_async_llm_on_the_loop() -> None:
    for kind in ("async", "pair"):
        fake = Fake(judge_rule)
        await LLMConflictDetector(fake.llm(kind)).afind_conflicts(POOL)
        assert fake.calls == [("async", threading.get_ident())]


async def test_async_paths_run_a_sync_llm_in_a_worker_thread() -> None:
    fake = Fake(judge_rule)
    either = AnyConflict(KeyConflictDetector(), LLMConflictDetector(fake.sync))
    result = await atemporal_dominance(POOL, either)
    assert [c.id for c in result.kept] == ["l", "c"]
    ((form, thread),) = fake.calls
    assert form == "sync"
    assert thread != threading.get_ident()


def test_a_sync_path_runs_an_async_only_llm_to_completion_outside_a_loop() -> None:
    fake = Fake(judge_rule)
    (conflict,) = LLMConflictDetector(fake.asynchronous).find_conflicts(POOL)
    assert (conflict.older, conflict.newer) == (0, 1)
    assert [form for form, _ in fake.calls] == ["async"]


async def test_a_sync_path_inside_a_running_loop_refuses_an_async_only_llm_by_name() -> None:
    fake = Fake(judge_rule)
    skipping = LLMConflictDetector(fake.asynchronous, on_error="skip")
    with pytest.raises(NeedsAsyncError, match="await afind_conflicts") as refused:
        skipping.find_conflicts(POOL)  # a misuse, not a failed call: never skipped
    assert isinstance(refused.value, RuntimeError)
    prose = LLMExtractor(Fake(extractor_rule).asynchronous, on_error="prose")
    with pytest.raises(NeedsAsyncError, match="await aextract"):
        prose.extract("Maria moved to Lisbon.", {})
    with pytest.raises(NeedsAsyncError, match="await asearch"):
        expand_query(Fake(expander_rule).asynchronous, "Where does Maria live?", 2)
    assert fake.calls == []  # nothing ran (and no coroutine was left un-awaited)
    paired = LLMConflictDetector(fake.llm("pair"))  # with a sync form, sync paths just work
    assert len(paired.find_conflicts(POOL)) == 1


# ---------------------------------------------------------------- through the memory
@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2024, 6, 1, tzinfo=UTC))


def memory_with(kind: str, clock: ManualClock) -> TemporalMemory:
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(
            embedder=HashingEmbedder(128),
            prose_judge=LLMExtractor(Fake(extractor_rule).llm(kind)),
            expander=Fake(expander_rule).llm(kind),
            clock=clock,
        ),
    )


TEXTS = [
    "Maria lives in Berlin since 2019.",
    "Maria moved to Lisbon in 2022.",
    "Maria keeps a cat.",
]


def shape(memory: TemporalMemory) -> list[tuple[Any, ...]]:
    statements, _ = memory.ledger.export()
    return sorted((s.text, s.subject, s.object, s.valid_from) for s in statements)


@pytest.fixture
def memories(clock: ManualClock) -> Iterator[Callable[[str], TemporalMemory]]:
    opened: list[TemporalMemory] = []

    def make(kind: str) -> TemporalMemory:
        opened.append(memory_with(kind, clock))
        return opened[-1]

    yield make
    for memory in opened:
        memory.close()


@pytest.mark.parametrize("kind", KINDS)
def test_memory_writes_and_reads_are_the_same_sync_and_async(
    kind: str, memories: Callable[[str], TemporalMemory]
) -> None:
    sync, other = memories(kind), memories(kind)
    sync_added = sync.add_many(TEXTS)
    async_added = asyncio.run(other.aadd_many(TEXTS))
    assert [(a.text, a.problem) for a in async_added] == [(a.text, a.problem) for a in sync_added]
    assert shape(other) == shape(sync)
    assert other.extraction_problems == sync.extraction_problems == 1
    one = sync.add("Maria keeps a dog.")
    assert asyncio.run(other.aadd("Maria keeps a dog.")).text == one.text
    assert shape(other) == shape(sync)

    judge = LLMConflictDetector(Fake(judge_rule).llm(kind))
    options: dict[str, Any] = {"k": 5, "expand": 2, "include_history": True, "detector": judge}
    hits = sync.search("Where does Maria live?", **options)
    assert "Maria moved to Lisbon in 2022." in [h.fact.text for h in hits]
    assert "Maria lives in Berlin since 2019." not in [h.fact.text for h in hits]
    again = asyncio.run(sync.asearch("Where does Maria live?", **options))
    assert again == hits
    context = sync.context("Where does Maria live?", expand=2)
    assert asyncio.run(sync.acontext("Where does Maria live?", expand=2)) == context


async def test_memory_async_paths_await_async_llms_on_the_loop(clock: ManualClock) -> None:
    extractor, expander, judge = Fake(extractor_rule), Fake(expander_rule), Fake(judge_rule)
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(
            embedder=HashingEmbedder(128),
            prose_judge=LLMExtractor(extractor.asynchronous),
            expander=expander.asynchronous,
            clock=clock,
        ),
    ) as memory:
        await memory.aadd_many(TEXTS)
        detector = LLMConflictDetector(judge.asynchronous)
        await memory.asearch("Where does Maria live?", expand=2, detector=detector)
        loop = threading.get_ident()
        for fake in (extractor, expander, judge):
            assert fake.calls
            assert set(fake.calls) == {("async", loop)}
        with pytest.raises(NeedsAsyncError, match="asearch"):
            memory.search("Where does Maria live?", expand=2)  # sync, inside the loop


async def test_memory_async_paths_run_sync_llms_off_the_loop(clock: ManualClock) -> None:
    extractor, judge = Fake(extractor_rule), Fake(judge_rule)
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(
            embedder=HashingEmbedder(128), prose_judge=LLMExtractor(extractor.sync), clock=clock
        ),
    ) as memory:
        await memory.aadd_many(TEXTS)
        await memory.asearch("Where does Maria live?", detector=LLMConflictDetector(judge.sync))
        loop = threading.get_ident()
        for fake in (extractor, judge):
            assert fake.calls
            assert all(form == "sync" and thread != loop for form, thread in fake.calls)
