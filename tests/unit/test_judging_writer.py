"""The writer and the write-time judging port: one judge call per batch with prose, what a
judgement says written in one transaction (statements, supersessions, cardinalities,
extractions), sync and async alike."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared_core.clock import ManualClock
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import Extraction
from shared_core.facts import Cardinality, Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging import Judge, JudgeChain, Judgement, WriteBatch
from shared_core.ledger import InMemoryLedger, SQLiteLedger
from shared_core.ledger.protocol import LedgerStore
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.judges import EMBEDDER, AsyncKeyingJudge, KeyingJudge


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def memory_with(judge: Judge | None, ledger: LedgerStore | None = None) -> TemporalMemory:
    clock = ManualClock(at(2026))
    config = MemoryConfig(embedder=EMBEDDER, clock=clock, prose_judge=judge)
    return TemporalMemory(
        ledger=ledger if ledger is not None else InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=config,
    )


def current(mem: TemporalMemory) -> set[tuple[str, str | None, str | None, str | None]]:
    return {(f.text, f.subject, f.relation, f.object_key) for f in mem.as_of()}


@dataclass
class Splitting:
    """Writes "A and B." as two statements, "A." and "B."; records the texts the index held
    for each batch's first statement when it was judged."""

    seen: list[list[str]] = field(default_factory=list)
    extraction: Extraction | None = None

    def judge(self, batch: WriteBatch) -> Judgement:
        first = batch.statements[0]
        matches = batch.index.search(
            batch.vectors[first.text], k=5, namespace="default", valid_at=None, known_at=None
        )
        rows = [m.row_id for m in matches]
        versions = batch.ledger.versions(row_ids=rows) if rows else []  # type: ignore[attr-defined]
        self.seen.append([v.fact.text for v in versions])
        groups = []
        for fact in batch.statements:
            parts = fact.text.rstrip(".").split(" and ")
            if fact.key is not None or len(parts) == 1:
                groups.append((fact,))
            else:
                groups.append(tuple(Fact(text=f"{p}.", namespace=fact.namespace) for p in parts))
        extractions = {0: self.extraction} if self.extraction is not None else {}
        return Judgement(statements=tuple(groups), extractions=extractions)


def test_the_judge_is_called_once_per_batch_with_prose_and_never_for_keyed_only_batches() -> None:
    judge = KeyingJudge()
    with memory_with(judge) as mem:
        mem.add("Ana is 30.", subject="Ana", relation="age", object=30)
        mem.add_many([Fact(text="Bo is 31.", subject="Bo", relation="age", object=31)])
        assert judge.batches == []
        mem.add_many(["I live in Berlin.", "The sky is blue.", "I like tea."], speaker="ana")
        assert len(judge.batches) == 1
        (batch,) = judge.batches
        assert [f.text for f in batch.statements] == [
            "I live in Berlin.",
            "The sky is blue.",
            "I like tea.",
        ]
        assert batch.speakers == ("ana", "ana", "ana")
        assert batch.speaker_field == "user_id"
        assert batch.prose == (0, 1, 2)
        assert len(batch.embed(["x"])[0]) == EMBEDDER.dimension


def test_the_index_is_caught_up_before_the_judge_reads_it() -> None:
    judge = Splitting()
    with memory_with(judge) as mem:
        mem.ledger.write(Fact(text="I live in Berlin."))  # the ledger only: the index lags
        mem.add("I live in Berlin and I like tea.")
        assert "I live in Berlin." in judge.seen[0]


def test_an_item_judged_into_several_statements_writes_and_embeds_each() -> None:
    with memory_with(Splitting()) as mem:
        (added,) = mem.add_many(["I live in Berlin and I like tea."])
        assert [w.fact.text for w in added.writes if w.fact] == ["I live in Berlin.", "I like tea."]
        assert {f.text for f in mem.as_of()} == {"I live in Berlin.", "I like tea."}
        hits = mem.search("I like tea.", k=1)
        assert [hit.fact.text for hit in hits] == ["I like tea."]
        assert hits[0].score == pytest.approx(1.0)  # the new text was embedded as itself


def test_a_judgements_extractions_are_counted_in_the_extraction_report() -> None:
    problem = Extraction(problem="the model answered chatter", problem_kind="invalid")
    with memory_with(Splitting(extraction=problem)) as mem:
        mem.add("I live in Berlin.")
        assert mem.extraction_report.invalid == 1
        assert mem.extraction_problems == 1


@pytest.mark.parametrize("path", ["sync", "async"])
def test_added_problem_was_lost_when_the_prose_judge_rejected_a_text(path: str) -> None:
    """Once the LLM extractor became the prose judge, ``Added.problem`` only read the planning
    extractor's problem and stayed None for what the judge rejected."""

    class Rejecting:
        def judge(self, batch: WriteBatch) -> Judgement:
            extractions = {
                i: Extraction(problem=f"chatter about {f.text}", problem_kind="invalid")
                for i, f in enumerate(batch.statements)
                if f.key is None and "tea" in f.text
            }
            return Judgement(
                statements=tuple((f,) for f in batch.statements), extractions=extractions
            )

    items: list[str | Fact] = [
        "I live in Berlin.",
        Fact(text="Bo is 31.", subject="Bo", relation="age", object=31),
        "I like tea.",
    ]
    with memory_with(Rejecting()) as mem:
        added = mem.add_many(items) if path == "sync" else asyncio.run(mem.aadd_many(items))
        assert [a.problem for a in added] == [None, None, "chatter about I like tea."]
        assert mem.extraction_report.invalid == 1


def test_a_judgement_that_loses_a_statement_is_refused_and_nothing_is_written() -> None:
    class Losing:
        def judge(self, batch: WriteBatch) -> Judgement:
            return Judgement(statements=((),) * len(batch.statements))

    with memory_with(Losing()) as mem:
        with pytest.raises(TypeError, match="at least one statement"):
            mem.add("I live in Berlin.")
        assert mem.as_of() == []


LEDGERS = {
    "in-memory": lambda _: InMemoryLedger(),
    "sqlite": lambda folder: SQLiteLedger(folder / "ledger.sqlite"),
}


@pytest.mark.parametrize("make", LEDGERS.values(), ids=LEDGERS.keys())
def test_declared_cardinalities_always_win(make, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    judge = KeyingJudge(cardinalities=(("likes", Cardinality.MANY),))
    ledger = make(tmp_path)
    assert ledger.declared_cardinality("likes") is None
    with memory_with(judge, ledger) as mem:
        mem.declare("likes", Cardinality.ONE)
        mem.add("I like tea.", speaker="ana", valid_from=at(2020))
        changed = mem.add("I like coffee.", speaker="ana", valid_from=at(2021))
        assert [f.text for f in changed.closed] == ["I like tea."]  # ONE, as declared
        assert mem.ledger.declared_cardinality("likes") is Cardinality.ONE


@pytest.mark.parametrize("make", LEDGERS.values(), ids=LEDGERS.keys())
def test_a_judge_declares_a_new_relation_but_never_one_holding_facts(make, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proposed = (("likes", Cardinality.MANY), ("lives in", Cardinality.MANY))
    with memory_with(KeyingJudge(cardinalities=proposed), make(tmp_path)) as mem:
        mem.add(
            "Bo lives in Rome.",
            subject="bo",
            relation="lives in",
            object="Rome",
            valid_from=at(2019),
        )
        mem.add("I like tea.", speaker="ana", valid_from=at(2020))
        also = mem.add("I like coffee.", speaker="ana", valid_from=at(2021))
        assert also.closed == ()  # MANY: both hold
        assert mem.ledger.declared_cardinality("likes") is Cardinality.MANY
        assert mem.ledger.declared_cardinality("lives in") is None  # it held facts
        mem.add("I live in Berlin.", speaker="bo", valid_from=at(2022))
        assert [f.object for f in mem.as_of(subject="bo")] == ["Berlin"]  # ONE closed Rome


@pytest.mark.parametrize(
    "judge",
    [AsyncKeyingJudge(), KeyingJudge(), JudgeChain((KeyingJudge(), AsyncKeyingJudge()))],
    ids=["async", "sync", "chain"],
)
def test_sync_and_async_writes_agree(judge: Judge) -> None:
    items = ["I live in Berlin.", "The sky is blue.", "I like tea."]
    later = ["I moved to Lisbon."]

    def run_sync() -> tuple[object, ...]:
        with memory_with(judge) as mem:
            first = mem.add_many(items, speaker="ana", valid_from=at(2020))
            second = mem.add_many(later, speaker="ana", valid_from=at(2021))
            return current(mem), _closed(first + second)

    async def run_async() -> tuple[object, ...]:
        with memory_with(judge) as mem:
            first = await mem.aadd_many(items, speaker="ana", valid_from=at(2020))
            second = await mem.aadd_many(later, speaker="ana", valid_from=at(2021))
            return current(mem), _closed(first + second)

    expected = run_sync()
    assert expected[1] == [(), (), (), ("I live in Berlin.",)]  # the judge keyed the homes
    assert asyncio.run(run_async()) == expected


def test_an_async_judge_is_awaited_on_the_async_path_and_called_on_the_sync_one() -> None:
    judge = AsyncKeyingJudge()
    with memory_with(judge) as mem:
        mem.add("I live in Berlin.", speaker="ana")
        asyncio.run(mem.aadd("I live in Lisbon.", speaker="ana"))
        asyncio.run(mem.aadd("Ana is 30.", subject="Ana", relation="age", object=30))
    assert judge.calls == ["judge", "ajudge"]


def test_the_prose_judge_option_refuses_what_is_not_a_judge() -> None:
    with pytest.raises(InvalidInputError) as error:
        MemoryConfig(prose_judge=(KeyingJudge(), "claims"))  # type: ignore[arg-type]
    assert error.value.field == "prose_judge[1]"


def _closed(added: list[object]) -> list[tuple[str, ...]]:
    return [tuple(f.text for f in a.closed) for a in added]  # type: ignore[attr-defined]
