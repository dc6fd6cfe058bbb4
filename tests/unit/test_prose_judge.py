"""TemporalMemory judging prose at write time (ProseJudge), over both ledgers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared_core.clock import Instant, ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import DetectorError, IndexSyncError, InvalidInputError
from shared_core.facts import Decision, Fact, FactStatus, Reason, ReasonKind
from shared_core.filters import Filter
from shared_core.index.base import IndexMatch, RowCheck, Vector
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging import ProseJudge
from shared_core.ledger import ChangeCursor, InMemoryLedger, SQLiteLedger, VersionRecord
from shared_core.memory import Hit, MemoryConfig, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)
RULE = "kappa-test-v1"
TOPICS = ("standup", "office", "wifi", "lunch")


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


class TopicScorer:
    """Contradiction when both texts mention the same topic word (a stand-in for a model)."""

    def __init__(self, high: float = 0.9, low: float = 0.05) -> None:
        self.high = high
        self.low = low
        self.calls: list[list[tuple[str, str]]] = []

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(list(pairs))
        return [self.high if _topic(a) & _topic(b) else self.low for a, b in pairs]


def _topic(text: str) -> set[str]:
    return {topic for topic in TOPICS if topic in text.casefold()}


class RaisingScorer:
    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        raise RuntimeError("the model fell over")


class CountingIndex(NumpyIndex):
    """Counts searches; can be told to fail when applying changes."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0
        self.fail_apply = False

    def search(
        self,
        vector: Vector,
        *,
        k: int,
        namespace: str,
        valid_at: Instant | None,
        known_at: Instant | None,
        where: Filter | None = None,
        rows_only: bool = False,
        visible_rows: RowCheck | None = None,
    ) -> list[IndexMatch]:
        self.searches += 1
        return super().search(
            vector,
            k=k,
            namespace=namespace,
            valid_at=valid_at,
            known_at=known_at,
            where=where,
            rows_only=rows_only,
            visible_rows=visible_rows,
        )

    def apply(
        self,
        records: Sequence[VersionRecord],
        vectors: Any,
        cursor: ChangeCursor,
    ) -> None:
        if self.fail_apply:
            raise RuntimeError("disk full")
        super().apply(records, vectors, cursor)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def scorer() -> TopicScorer:
    return TopicScorer()


@pytest.fixture
def index() -> CountingIndex:
    return CountingIndex()


@pytest.fixture(params=["in-memory", "sqlite"])
def memory(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    clock: ManualClock,
    scorer: TopicScorer,
    index: CountingIndex,
) -> Iterator[TemporalMemory]:
    with make_memory(request.param, tmp_path, clock, index, judge(scorer)) as memory:
        yield memory


def judge(scorer: Any, **options: Any) -> ProseJudge:
    return ProseJudge(scorer=scorer, threshold=options.pop("threshold", 0.5), name=RULE, **options)


def make_memory(
    kind: str,
    tmp_path: Path,
    clock: ManualClock,
    index: NumpyIndex,
    prose_judge: ProseJudge | None,
) -> TemporalMemory:
    if kind == "sqlite":
        ledger: InMemoryLedger | SQLiteLedger = SQLiteLedger(
            tmp_path / "ledger.sqlite", clock=clock, durability="normal"
        )
    else:
        ledger = InMemoryLedger(clock=clock)
    return TemporalMemory(
        ledger=ledger,
        index=index,
        config=MemoryConfig(embedder=HashingEmbedder(256), clock=clock, prose_judge=prose_judge),
    )


def texts(hits: list[Hit]) -> list[str]:
    return sorted(hit.fact.text for hit in hits)


OLD = "The team standup is at 9 am"
NEW = "The team standup is at 10 am"


# ---------------------------------------------------------------- the semantics
def test_superseded_prose_is_not_current_but_stays_in_history(
    memory: TemporalMemory, scorer: TopicScorer
) -> None:
    [old] = memory.add(OLD, valid_from=d(2020)).fact_ids
    added = memory.add(NEW, valid_from=d(2022))
    [new] = added.fact_ids
    assert scorer.calls == [[(OLD, NEW)]]  # one call; premise = the earlier statement
    assert [(f.id, f.valid_to) for f in added.closed] == [(old, d(2022))]
    assert texts(memory.search("team standup")) == [NEW]
    assert texts(memory.search("team standup", valid_at=d(2021))) == [OLD]
    assert texts(memory.search("team standup", include_history=True)) == [NEW, OLD]
    assert [f.text for f in memory.as_of(valid_at=d(2021))] == [OLD]
    closed = memory.ledger.get(old)
    assert closed.status is FactStatus.SUPERSEDED
    explanation = memory.explain(old)
    assert explanation.reason == Reason(ReasonKind.SUPERSEDED, new, RULE, 0.9)
    assert f"rule: {RULE}, score 0.900" in explanation.summary()


def test_prose_without_valid_from_is_the_newest(
    memory: TemporalMemory, clock: ManualClock, scorer: TopicScorer
) -> None:
    [old] = memory.add(OLD).fact_ids
    clock.advance(timedelta(days=3))
    memory.add(NEW)
    assert scorer.calls == [[(OLD, NEW)]]
    assert texts(memory.search("team standup")) == [NEW]
    assert memory.ledger.get(old).valid_to == clock.now()


def test_a_late_arriving_older_statement_is_closed_by_the_stored_newer_one(
    memory: TemporalMemory, scorer: TopicScorer
) -> None:
    [new] = memory.add(NEW, valid_from=d(2022)).fact_ids
    added = memory.add(OLD, valid_from=d(2019))
    assert scorer.calls == [[(OLD, NEW)]]  # the late one is the premise
    [write] = added.writes
    assert write.fact is not None
    assert write.fact.valid_to == d(2022)
    assert write.fact.end_reason == Reason(ReasonKind.SUPERSEDED, new, RULE, 0.9)
    assert texts(memory.search("team standup")) == [NEW]
    assert texts(memory.search("team standup", valid_at=d(2020))) == [OLD]


def test_a_batch_is_judged_in_one_call_and_the_newest_stays(
    memory: TemporalMemory, scorer: TopicScorer
) -> None:
    memory.add("The office wifi password is cats", valid_from=d(2019))
    added = memory.add_many(
        [
            Fact(text="The office wifi password is dogs", valid_from=d(2022)),
            Fact(text="The office wifi password is birds", valid_from=d(2020)),
            Fact(text="The office wifi password is fish", valid_from=d(2021)),
        ]
    )
    assert len(scorer.calls) == 1
    assert len(scorer.calls[0]) == 6  # every pair of the four, each once, earlier first
    assert all(premise != hypothesis for premise, hypothesis in scorer.calls[0])
    assert texts(memory.search("office wifi password")) == ["The office wifi password is dogs"]
    assert texts(memory.search("office wifi password", valid_at=d(2020, 6))) == [
        "The office wifi password is birds"
    ]
    assert [f.valid_to for f in added[0].closed] == [d(2022)]  # dogs closed fish
    assert [f.valid_to for f in added[1].closed] == [d(2020)]  # birds closed cats
    assert [f.valid_to for f in added[2].closed] == [d(2021)]  # fish closed birds


def test_namespaces_never_judge_each_other(memory: TemporalMemory, scorer: TopicScorer) -> None:
    memory.add(OLD, valid_from=d(2020), namespace="team-a")
    memory.add(NEW, valid_from=d(2022), namespace="team-b")
    memory.add_many(
        [Fact(text=OLD, valid_from=d(2020), namespace="x"), Fact(text=NEW, namespace="y")]
    )
    assert scorer.calls == []
    assert texts(memory.search("team standup", namespace="team-a")) == [OLD]
    assert texts(memory.search("team standup", namespace="team-b")) == [NEW]


def test_below_the_threshold_nothing_is_closed(
    tmp_path: Path, clock: ManualClock, index: CountingIndex
) -> None:
    scorer = TopicScorer(high=0.4)
    with make_memory("in-memory", tmp_path, clock, index, judge(scorer)) as memory:
        memory.add(OLD, valid_from=d(2020))
        added = memory.add(NEW, valid_from=d(2022))
        assert len(scorer.calls) == 1
        assert added.closed == ()
        assert texts(memory.search("team standup")) == [NEW, OLD]


def test_below_min_cosine_nothing_is_scored(
    tmp_path: Path, clock: ManualClock, index: CountingIndex, scorer: TopicScorer
) -> None:
    with make_memory("sqlite", tmp_path, clock, index, judge(scorer, min_cosine=0.99)) as memory:
        memory.add(OLD, valid_from=d(2020))
        memory.add(NEW, valid_from=d(2022))
        memory.add_many([Fact(text=OLD + " sharp", valid_from=d(2023)), NEW + " sharp"])
        assert scorer.calls == []
        assert len(memory.search("team standup", k=10)) == 4


def test_only_the_nearest_neighbours_are_judged(
    tmp_path: Path, clock: ManualClock, index: CountingIndex
) -> None:
    scorer = TopicScorer(high=0.1)  # nothing is closed: every statement stays a candidate
    with make_memory("in-memory", tmp_path, clock, index, judge(scorer, neighbours=1)) as memory:
        for n, year in enumerate((2018, 2019, 2020)):
            memory.add(f"The lunch break is at noon {n}", valid_from=d(year))
        scorer.calls.clear()
        memory.add("The lunch break is at noon 3", valid_from=d(2021))
        assert [len(call) for call in scorer.calls] == [1]
        assert len(memory.search("lunch break", k=10)) == 4


def test_identical_text_and_equal_times_are_not_judged(
    memory: TemporalMemory, scorer: TopicScorer
) -> None:
    memory.add(OLD, valid_from=d(2020))
    memory.add(OLD.upper(), valid_from=d(2021))  # the same statement once normalised
    assert scorer.calls == []
    memory.add(NEW, valid_from=d(2020))  # a tie with OLD: only the 2021 one is judged
    assert scorer.calls == [[(NEW, OLD.upper())]]
    assert texts(memory.search("team standup", k=10)) == [OLD.upper(), OLD]


def test_keyed_facts_are_left_to_the_key_rule(
    memory: TemporalMemory, index: CountingIndex, scorer: TopicScorer
) -> None:
    memory.add(OLD, valid_from=d(2020))
    searches = index.searches
    memory.add(
        "The standup is run by Ana", subject="standup", relation="host", object="Ana",
        valid_from=d(2021),
    )  # fmt: skip
    assert index.searches == searches  # a batch without prose costs no query
    memory.add(NEW, valid_from=d(2022))
    assert [pair for call in scorer.calls for pair in call] == [(OLD, NEW)]


def test_one_query_per_new_statement_and_none_without_a_judge(
    tmp_path: Path, clock: ManualClock, index: CountingIndex, scorer: TopicScorer
) -> None:
    with make_memory("in-memory", tmp_path, clock, index, judge(scorer)) as memory:
        memory.add_many(["The office is in Berlin", "The office is in Porto"])  # valid from now
        assert index.searches == 2
        memory.add("The office is in Lisbon", valid_from=d(2020))  # now and 2020: two
        assert index.searches == 4
    other = CountingIndex()
    with make_memory("in-memory", tmp_path, clock, other, None) as memory:
        memory.add_many(["The office is in Berlin", "The office is in Porto"])
        assert other.searches == 0


def test_a_duplicate_statement_supersedes_nothing(
    memory: TemporalMemory, clock: ManualClock, scorer: TopicScorer
) -> None:
    memory.add(OLD)
    clock.advance(timedelta(days=1))
    memory.add(NEW)
    clock.advance(timedelta(days=1))
    [again] = memory.add(OLD).writes  # recognised as the stored statement: not written
    assert again.decision is Decision.DUPLICATE
    assert again.closed == ()
    assert texts(memory.search("team standup")) == [NEW]


# ---------------------------------------------------------------- failures
def test_a_failing_scorer_writes_nothing(
    tmp_path: Path, clock: ManualClock, index: CountingIndex
) -> None:
    with make_memory("sqlite", tmp_path, clock, index, judge(RaisingScorer())) as memory:
        memory.add(OLD, valid_from=d(2020))
        before = memory.ledger.export()
        with pytest.raises(DetectorError, match="fell over"):
            memory.add_many([NEW, Fact(text="Maria lives in Porto", subject="Maria",
                                       relation="lives in", object="Porto")])  # fmt: skip
        assert memory.ledger.export() == before
        assert texts(memory.search("team standup")) == [OLD]


@pytest.mark.parametrize("answer", [[0.9, 0.9], ["high"], [1.5], [float("nan")], [True], None])
def test_malformed_scores_are_detector_errors(
    tmp_path: Path, clock: ManualClock, index: CountingIndex, answer: Any
) -> None:
    class Odd:
        def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> Any:
            return answer

    with make_memory("in-memory", tmp_path, clock, index, judge(Odd())) as memory:
        memory.add(OLD, valid_from=d(2020))
        with pytest.raises(DetectorError, match=RULE):
            memory.add(NEW, valid_from=d(2022))
        assert len(memory.ledger.current()) == 1


def test_an_index_failure_after_the_commit_is_recovered_by_reconcile(
    memory: TemporalMemory, index: CountingIndex
) -> None:
    [old] = memory.add(OLD, valid_from=d(2020)).fact_ids
    index.fail_apply = True
    with pytest.raises(IndexSyncError, match="reconcile"):
        memory.add(NEW, valid_from=d(2022))
    assert memory.ledger.get(old).valid_to == d(2022)  # the ledger holds the write
    index.fail_apply = False
    memory.reconcile()
    assert texts(memory.search("team standup")) == [NEW]
    assert texts(memory.search("team standup", valid_at=d(2021))) == [OLD]


# ---------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": True}, "threshold"),
        ({"min_cosine": 2}, "min_cosine"),
        ({"min_cosine": "0.3"}, "min_cosine"),
        ({"neighbours": 0}, "neighbours"),
        ({"neighbours": 2.0}, "neighbours"),
        ({"name": ""}, "name"),
        ({"scorer": object()}, "scorer"),
    ],
)
def test_bad_judge_options_name_the_field(options: dict[str, Any], field: str) -> None:
    fields: dict[str, Any] = {"scorer": TopicScorer(), "threshold": 0.5, "name": RULE}
    fields.update(options)
    with pytest.raises(InvalidInputError) as error:
        ProseJudge(**fields)
    assert error.value.field == field


def test_the_memory_refuses_something_else_as_a_judge(clock: ManualClock) -> None:
    with pytest.raises(InvalidInputError) as error:
        TemporalMemory(
            ledger=InMemoryLedger(clock=clock),
            index=NumpyIndex(),
            config=MemoryConfig(
                embedder=HashingEmbedder(8),
                prose_judge=TopicScorer(),  # type: ignore[arg-type]
            ),
        )
    assert error.value.field == "prose_judge"


def test_the_judge_is_exported_and_frozen() -> None:
    import shared_core

    made = ProseJudge(TopicScorer(), 0.7, RULE)
    assert shared_core.ProseJudge is ProseJudge
    assert shared_core.ProseSupersession.__name__ == "ProseSupersession"
    assert (made.min_cosine, made.neighbours) == (0.3, 10)
    with pytest.raises(AttributeError):
        made.threshold = 0.1  # type: ignore[misc]


def test_the_async_twin_judges_too(memory: TemporalMemory, scorer: TopicScorer) -> None:
    async def run() -> None:
        await memory.aadd(OLD, valid_from=d(2020))
        await memory.aadd_many([Fact(text=NEW, valid_from=d(2022))])

    asyncio.run(run())
    assert len(scorer.calls) == 1
    assert texts(memory.search("team standup")) == [NEW]


def test_a_closed_statement_moves_to_the_chroma_history_collection(
    tmp_path: Path, clock: ManualClock, scorer: TopicScorer
) -> None:
    pytest.importorskip("chromadb")
    from shared_core.index.chroma import ChromaIndex
    from shared_core.index.chroma_records import namespace_key

    index = ChromaIndex(tmp_path / "index")
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite", clock=clock, durability="normal")
    with TemporalMemory(
        ledger=ledger,
        index=index,
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock, prose_judge=judge(scorer)),
    ) as memory:
        [old] = memory.add(OLD, valid_from=d(2020)).fact_ids
        [new] = memory.add(NEW, valid_from=d(2022)).fact_ids
        assert texts(memory.search("team standup")) == [NEW]  # the live-only fast path
        assert texts(memory.search("team standup", valid_at=d(2021))) == [OLD]
        live, every = index._collections(namespace_key("default"))
        assert [m["fact_id"] for m in live.get()["metadatas"]] == [new]
        assert old in [m["fact_id"] for m in every.get()["metadatas"]]
