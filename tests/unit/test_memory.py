"""TemporalMemory over the in-memory fakes: InMemoryLedger, NumpyIndex, HashingEmbedder."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import CallableEmbedder, HashingEmbedder
from shared_core.errors import (
    EmbedderError,
    EmbedderMismatchError,
    ExtractorError,
    InvalidInputError,
)
from shared_core.extractors.base import ExtractedFact, Extraction
from shared_core.facts import Cardinality, Decision
from shared_core.filters import where
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.memory import Added, Hit, MemoryConfig, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


def make_memory(clock: ManualClock, **options: object) -> TemporalMemory:
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=options.pop("index", NumpyIndex()),  # type: ignore[arg-type]
        config=MemoryConfig(
            embedder=options.pop("embedder", HashingEmbedder(64)),  # type: ignore[arg-type]
            clock=clock,
            **options,  # type: ignore[arg-type]
        ),
    )


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    with make_memory(clock) as memory:
        yield memory


def objects(hits: list[Hit]) -> list[object]:
    return [hit.fact.object for hit in hits]


def moves(memory: TemporalMemory, clock: ManualClock) -> None:
    """Maria: Berlin (2020) -> Lisbon (2022) -> Porto (2024), recorded as they happen."""
    for city, year in (("Berlin", 2020), ("Lisbon", 2022), ("Porto", 2024)):
        clock.set(d(year, 1, 2))
        memory.add(
            f"Maria lives in {city}", subject="Maria", relation="lives in", object=city,
            valid_from=d(year),
        )  # fmt: skip


# ---------------------------------------------------------------- the timeline cases
def test_berlin_lisbon_porto_current_state_is_porto_only(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    moves(memory, clock)
    assert objects(memory.search("where does Maria live", k=5)) == ["Porto"]


def test_as_of_search_answers_with_the_past(memory: TemporalMemory, clock: ManualClock) -> None:
    moves(memory, clock)
    assert objects(memory.search("Maria lives", valid_at=d(2021))) == ["Berlin"]
    assert objects(memory.search("Maria lives", valid_at=d(2023))) == ["Lisbon"]
    # known at 2023-06: Porto was not yet recorded, so Lisbon was believed to be current
    assert objects(memory.search("Maria lives", known_at=d(2023, 6))) == ["Lisbon"]
    assert memory.search("Maria lives", valid_at=d(2019)) == []


def test_include_history_returns_every_version(memory: TemporalMemory, clock: ManualClock) -> None:
    moves(memory, clock)
    hits = memory.search("Maria lives", k=10, include_history=True)
    assert sorted(map(str, objects(hits))) == ["Berlin", "Lisbon", "Porto"]
    closed = {hit.fact.object: hit.fact.valid_to for hit in hits}
    assert closed == {"Berlin": d(2022), "Lisbon": d(2024), "Porto": None}


def test_a_flip_flop_comes_back_to_the_first_value(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    for city, year in (("Berlin", 2020), ("Lisbon", 2021), ("Berlin", 2022)):
        clock.set(d(year, 1, 2))
        memory.add(f"Maria lives in {city}", subject="Maria", relation="lives in", object=city,
                   valid_from=d(year))  # fmt: skip
    assert objects(memory.search("Maria lives in")) == ["Berlin"]
    assert objects(memory.search("Maria lives in", valid_at=d(2021, 6))) == ["Lisbon"]
    assert len(memory.search("Maria lives in", include_history=True, k=10)) == 3


def test_a_late_arriving_old_fact_is_history_not_current(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    moves(memory, clock)
    clock.advance(timedelta(days=30))
    memory.add("Maria lived in Madrid", subject="Maria", relation="lives in", object="Madrid",
               valid_from=d(2018))  # fmt: skip
    assert objects(memory.search("Maria lives in")) == ["Porto"]
    assert objects(memory.search("Maria lives in", valid_at=d(2019))) == ["Madrid"]


def test_a_many_relation_accumulates(memory: TemporalMemory) -> None:
    memory.declare("speaks", Cardinality.MANY)
    memory.add("Maria speaks German", subject="Maria", relation="speaks", object="German")
    memory.add("Maria speaks Portuguese", subject="Maria", relation="speaks", object="Portuguese")
    assert sorted(map(str, objects(memory.search("Maria speaks", k=5)))) == [
        "German",
        "Portuguese",
    ]


def test_a_correction_replaces_the_wrong_record(memory: TemporalMemory, clock: ManualClock) -> None:
    wrong = memory.add("Maria lives in Lisbon", subject="Maria", relation="lives in",
                       object="Lisbon", valid_from=d(2023))  # fmt: skip
    clock.advance(timedelta(days=1))
    before_correction = clock.now()
    clock.advance(timedelta(days=1))
    memory.correct(wrong.fact_ids[0], object="Porto", text="Maria lives in Porto")
    assert objects(memory.search("Maria lives in", k=5)) == ["Porto"]
    assert objects(memory.search("Maria lives in", k=5, include_history=True)) == ["Porto"]
    assert objects(memory.search("Maria lives in", known_at=before_correction)) == ["Lisbon"]


def test_a_retraction_leaves_nothing_current_and_unretire_restores(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Anna is vegetarian", subject="Anna", relation="diet", object="vegetarian")
    clock.advance(timedelta(days=1))
    retraction = memory.retract("Anna", "diet")
    assert memory.search("Anna vegetarian diet") == []
    memory.unretire(retraction.statement_id)
    assert objects(memory.search("Anna vegetarian diet")) == ["vegetarian"]


def test_namespaces_never_see_each_other(memory: TemporalMemory) -> None:
    memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="Berlin",
               namespace="tenant-a")  # fmt: skip
    memory.add("Maria likes tea", namespace="tenant-a")
    assert memory.search("Maria lives in Berlin") == []
    assert memory.search("Maria", namespace="tenant-b", use_recency_buffer=True) == []
    assert len(memory.search("Maria", namespace="tenant-a", k=5)) == 2


# ---------------------------------------------------------------- prose
def test_prose_is_kept_searchable_and_not_stored_twice(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    first = memory.add("The team ships on Fridays.")
    clock.advance(timedelta(days=3))
    again = memory.add("the team   ships on fridays.")
    assert again.writes[0].decision is Decision.DUPLICATE
    assert again.fact_ids == first.fact_ids
    hits = memory.search("when does the team ship", k=5)
    assert [hit.fact.id for hit in hits] == list(first.fact_ids)
    assert memory.index.count() == 1


def test_add_many_embeds_each_distinct_text_once(clock: ManualClock) -> None:
    embedder = HashingEmbedder(64)
    with make_memory(clock, embedder=embedder) as memory:
        texts = ["Maria likes tea", "Maria likes tea", "João likes coffee"]
        added = memory.add_many(texts)
        assert [a.text for a in added] == texts
        assert embedder.calls == 2
        clock.advance(timedelta(days=1))
        memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto")
        clock.advance(timedelta(days=1))
        calls = embedder.calls
        memory.add("Maria lives in Faro", subject="Maria", relation="lives in", object="Faro")
        # the superseded Porto version is re-indexed with its stored vector, not re-embedded
        assert embedder.calls == calls + 1


def test_keyed_facts_from_metadata_go_through_the_extractor(memory: TemporalMemory) -> None:
    memory.add_many(
        ["Maria lives in Berlin", "Maria moved to Lisbon"],
        metadatas=[
            {"subject": "Maria", "relation": "lives in", "object": "Berlin",
             "valid_from": "2020-01-01T00:00:00+00:00"},
            {"subject": "Maria", "relation": "lives in", "object": "Lisbon",
             "valid_from": "2022-01-01T00:00:00+00:00"},
        ],
    )  # fmt: skip
    assert objects(memory.search("Maria")) == ["Lisbon"]


class ScriptedExtractor:
    def __init__(self, extraction: Extraction) -> None:
        self.extraction = extraction

    def extract(self, text: str, metadata: object) -> Extraction:
        return self.extraction


def test_several_triples_per_text_keep_their_sentences(clock: ManualClock) -> None:
    found = Extraction(
        facts=(
            ExtractedFact(text="Maria moved to Porto", subject="Maria", relation="lives in",
                          object="Porto"),
            ExtractedFact(text="she now works at Acme", subject="Maria", relation="employer",
                          object="Acme"),
        )
    )  # fmt: skip
    with make_memory(clock, extractor=ScriptedExtractor(found)) as memory:
        added = memory.add("Maria moved to Porto and she now works at Acme.")
        assert len(added.writes) == 2
        assert {h.fact.text for h in memory.search("Maria", k=5)} == {
            "Maria moved to Porto",
            "she now works at Acme",
        }


def test_malformed_extractor_output_is_kept_as_prose_and_counted(clock: ManualClock) -> None:
    broken = Extraction(problem="the model's answer was not JSON")
    with make_memory(clock, extractor=ScriptedExtractor(broken)) as memory:
        added = memory.add("Maria moved to Porto last week.")
        assert added.problem == "the model's answer was not JSON"
        assert memory.extraction_problems == 1
        assert memory.search("Maria Porto")[0].fact.subject is None


# ---------------------------------------------------------------- Phi_T, buffer, expansion
def test_phi_t_removes_older_versions_and_reports_them_as_shadows(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    moves(memory, clock)
    detector = KeyConflictDetector(memory.ledger.cardinality)
    hits = memory.search("Maria lives in", k=10, include_history=True, detector=detector)
    assert objects(hits) == ["Porto"]
    assert sorted(str(s.candidate.object) for s in hits[0].shadows) == ["Berlin", "Lisbon"]


def test_the_recency_buffer_adds_what_retrieval_missed(clock: ManualClock) -> None:
    memory = make_memory(clock, recency_capacity=1)
    memory.add("The project goal is a fast parser", valid_from=d(2023))
    memory.add("The project goal was discussed at length", valid_from=d(2023))
    clock.advance(timedelta(days=1))
    memory.add("Nothing like before: we now build a compiler", valid_from=d(2024))
    plain = memory.search("project goal fast parser", k=1)
    buffered = memory.search("project goal fast parser", k=1, use_recency_buffer=True)
    assert [h.fact.text for h in plain] == ["The project goal is a fast parser"]
    assert {h.fact.text for h in buffered} == {
        "The project goal is a fast parser",
        "Nothing like before: we now build a compiler",
    }
    assert [h.from_buffer for h in buffered] == [False, True]


class VectorReadsIndex(NumpyIndex):
    """A NumpyIndex that counts the vectors read back from it."""

    def __init__(self) -> None:
        super().__init__()
        self.vector_reads = 0

    def vectors(self, fact_ids):  # type: ignore[no-untyped-def]
        self.vector_reads += 1
        return super().vectors(fact_ids)


def test_a_buffered_search_reads_just_written_vectors_from_memory(clock: ManualClock) -> None:
    # broke: every buffered search read the buffer's vectors back from the index (Chroma get)
    index = VectorReadsIndex()
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=index,
        config=MemoryConfig(
            embedder=HashingEmbedder(dimension=64), clock=clock, recency_capacity=2
        ),
    )
    memory.add_many(["Ana lives in Braga", "Ana likes tea", "Bob plays chess"], valid_from=d(2023))
    first = memory.search("where does Ana live", k=1, use_recency_buffer=True)
    assert index.vector_reads == 0
    memory._reader._buffered_vectors.clear()  # as after a restart: read from the index
    again = memory.search("where does Ana live", k=1, use_recency_buffer=True)
    assert index.vector_reads == 1
    assert [(h.fact.id, h.from_buffer) for h in first] == [
        (h.fact.id, h.from_buffer) for h in again
    ]
    assert [h.score for h in first] == pytest.approx([h.score for h in again])


def test_expansion_fuses_the_variants(clock: ManualClock) -> None:
    prompts: list[str] = []

    def expander(prompt: str) -> str:
        prompts.append(prompt)
        return "1. residence of Maria\n- Maria city\n\n"

    with make_memory(clock, expander=expander) as memory:
        memory.add("Maria city: Porto")
        memory.add("The residence of Maria is a flat")
        memory.add("Bob likes tea")
        hits = memory.search("where is home", k=2, expand=2)
        assert "where is home" in prompts[0]
        assert {h.fact.text for h in hits} == {
            "Maria city: Porto",
            "The residence of Maria is a flat",
        }


def test_expansion_without_an_expander_is_refused(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputError, match="expander"):
        memory.search("x", expand=2)


def test_a_failing_expander_is_an_extractor_error(clock: ManualClock) -> None:
    def expander(prompt: str) -> str:
        raise RuntimeError("model offline")

    with make_memory(clock, expander=expander) as memory, pytest.raises(ExtractorError):
        memory.search("x", expand=1)


# ---------------------------------------------------------------- context packing
def test_context_lines_carry_valid_time_and_respect_the_budget(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    moves(memory, clock)
    memory.add("Maria likes green tea")
    block = memory.context("Maria lives", token_budget=200, include_history=True)
    lines = block.splitlines()
    assert "[valid 2024-01-01 -> now] Maria lives in Porto" in lines
    assert "[valid 2020-01-01 -> 2022-01-01] Maria lives in Berlin" in lines
    assert memory.context("Maria lives", token_budget=3) == ""
    one = memory.context("Maria lives", token_budget=20)
    assert one
    assert "\n" not in one


def test_context_puts_the_newest_valid_first_within_equal_relevance(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Maria lives in Porto", valid_from=d(2024))
    memory.add("Maria lives in Porto", valid_from=d(2020))  # same text: same relevance
    block = memory.context("Maria lives in Porto", token_budget=100)
    assert block.splitlines()[0].startswith("[valid 2024-01-01")


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"k": 0}, "k"),
        ({"k": True}, "k"),
        ({"k": -3}, "k"),
        ({"expand": -1}, "expand"),
        ({"valid_at": datetime(2024, 1, 1)}, "valid_at"),  # noqa: DTZ001 - naive on purpose
        ({"known_at": datetime(2024, 1, 1)}, "known_at"),  # noqa: DTZ001
        ({"namespace": ""}, "namespace"),
    ],
)
def test_bad_search_arguments_name_the_field(
    memory: TemporalMemory, options: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        memory.search("Maria", **options)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize("query", ["", "   ", None])
def test_an_empty_query_is_refused(memory: TemporalMemory, query: object) -> None:
    with pytest.raises(InvalidInputError, match="query"):
        memory.search(query)  # type: ignore[arg-type]


def test_a_bad_item_writes_nothing(memory: TemporalMemory) -> None:
    with pytest.raises(InvalidInputError) as caught:
        memory.add_many(["fine", ""])
    assert caught.value.field == "items[1]"
    naive = datetime(2024, 1, 1)  # noqa: DTZ001
    with pytest.raises(InvalidInputError, match="valid_from"):
        memory.add("x", subject="a", relation="b", object="c", valid_from=naive)
    with pytest.raises(InvalidInputError, match="metadatas"):
        memory.add_many(["a", "b"], metadatas=[{}])
    assert memory.ledger.export() == ([], [])
    assert memory.index.count() == 0


def test_a_wrong_embedding_dimension_writes_nothing(clock: ManualClock) -> None:
    wrong = CallableEmbedder(lambda texts: [[0.5] * 7 for _ in texts], name="bad", dimension=8)
    with make_memory(clock, embedder=wrong) as memory:
        with pytest.raises(EmbedderError, match="dimension 7"):
            memory.add("Maria likes tea")
        assert memory.ledger.export() == ([], [])
        with pytest.raises(EmbedderError):
            memory.search("tea")


def test_an_index_built_by_another_embedder_is_refused(clock: ManualClock) -> None:
    index = NumpyIndex()
    make_memory(clock, index=index, embedder=HashingEmbedder(64, name="one")).add("tea")
    with pytest.raises(EmbedderMismatchError):
        make_memory(clock, index=index, embedder=HashingEmbedder(64, name="other"))
    with pytest.raises(EmbedderMismatchError):
        make_memory(clock, index=index, embedder=HashingEmbedder(32, name="one"))
    assert index.count() == 1


# ---------------------------------------------------------------- async
def test_async_twins_agree_with_sync(memory: TemporalMemory, clock: ManualClock) -> None:
    async def run() -> tuple[list[Hit], list[Hit]]:
        await memory.aadd("Maria lives in Berlin", subject="Maria", relation="lives in",
                          object="Berlin", valid_from=d(2020))  # fmt: skip
        await memory.aadd_many(["Maria likes tea"])
        return await memory.asearch("Maria", k=5), await memory.asearch("Maria", k=1)

    async_all, async_one = asyncio.run(run())
    assert async_all == memory.search("Maria", k=5)
    assert async_one == memory.search("Maria", k=1)
    assert len(async_all) == 2


def test_sync_and_async_paths_agree_on_one_memory(memory: TemporalMemory) -> None:
    """add, add_many, search and context, each path writing and reading a namespace of its own
    on the same memory, give the same answers."""

    def written(added: list[Added]) -> list[tuple[object, ...]]:
        return [
            (w.decision, w.fact and w.fact.text, len(w.closed)) for a in added for w in a.writes
        ]

    def found(hits: list[Hit]) -> list[tuple[object, ...]]:
        return [(h.fact.text, h.fact.object, h.score, h.from_buffer) for h in hits]

    notes = ["Maria likes tea", "The office opens at nine"]
    sync = [
        memory.add("Maria lives in Berlin", subject="Maria", relation="lives in",
                   object="Berlin", valid_from=d(2020), namespace="sync"),
        memory.add("Maria lives in Porto", subject="Maria", relation="lives in",
                   object="Porto", valid_from=d(2023), namespace="sync"),
        *memory.add_many(notes, metadatas=[{"doc": "a"}, {}], namespace="sync"),
    ]  # fmt: skip

    async def run() -> tuple[list[Added], list[Hit], list[Hit], str]:
        added = [
            await memory.aadd("Maria lives in Berlin", subject="Maria", relation="lives in",
                              object="Berlin", valid_from=d(2020), namespace="async"),
            await memory.aadd("Maria lives in Porto", subject="Maria", relation="lives in",
                              object="Porto", valid_from=d(2023), namespace="async"),
            *await memory.aadd_many(notes, metadatas=[{"doc": "a"}, {}], namespace="async"),
        ]  # fmt: skip
        now = await memory.asearch("Where does Maria live?", k=5, namespace="async")
        history = await memory.asearch(
            "Maria", k=5, namespace="async", include_history=True, detector=KeyConflictDetector()
        )
        return added, now, history, await memory.acontext("Maria", namespace="async")

    async_added, async_now, async_history, async_context = asyncio.run(run())
    assert [len(a.closed) for a in sync] == [0, 1, 0, 0]
    assert written(async_added) == written(sync)
    assert found(async_now) == found(memory.search("Where does Maria live?", k=5, namespace="sync"))
    sync_history = memory.search(
        "Maria", k=5, namespace="sync", include_history=True, detector=KeyConflictDetector()
    )
    assert found(async_history) == found(sync_history)
    assert [h.fact.object for h in sync_history if h.fact.key] == ["Porto"]  # Berlin shadowed
    assert async_context == memory.context("Maria", namespace="sync")
    assert "Maria lives in Porto" in async_context


def test_prose_takes_its_times_from_metadata(memory: TemporalMemory) -> None:
    memory.add("The office moved downstairs.", metadata={"valid_from": "2023-04-01T00:00:00Z",
                                                         "source": "slack"})  # fmt: skip
    (hit,) = memory.search("office moved", valid_at=d(2023, 5))
    assert hit.fact.valid_from == d(2023, 4)
    assert dict(hit.fact.metadata) == {"source": "slack"}
    assert memory.search("office moved", valid_at=d(2023, 3)) == []


def test_search_filters_on_metadata_and_key_fields(memory: TemporalMemory) -> None:
    memory.add("Maria likes tea", metadata={"source": "chat", "year": 2024})
    memory.add("Maria likes coffee", metadata={"source": "email", "year": 2022})
    memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto")
    assert [h.fact.text for h in memory.search("Maria likes", where={"source": "chat"})] == [
        "Maria likes tea"
    ]
    old = memory.search("Maria likes", k=5, where=where("year", "<", 2023))
    assert [h.fact.text for h in old] == ["Maria likes coffee"]
    keyed = memory.search("Maria", k=5, where=where("object", "==", "Porto"))
    assert [h.fact.text for h in keyed] == ["Maria lives in Porto"]
    buffered = memory.search("x", k=1, where={"source": "email"}, use_recency_buffer=True)
    assert {h.fact.text for h in buffered} == {"Maria likes coffee"}


def test_select_lists_facts_by_metadata_now_and_in_history(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="Berlin",
               valid_from=d(2020), metadata={"doc": "a"})  # fmt: skip
    clock.advance(timedelta(days=1))
    memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto",
               valid_from=d(2023), metadata={"doc": "b"})  # fmt: skip
    memory.add("Maria likes tea", metadata={"doc": "a"})
    assert {f.text for f in memory.select({"doc": "a"})} == {"Maria likes tea"}
    history = memory.select({"doc": "a"}, include_history=True)
    assert {f.text for f in history} == {"Maria likes tea", "Maria lives in Berlin"}
    assert memory.select({"doc": "a"}, namespace="other") == []


def test_an_llm_extractor_feeds_the_ledger_and_bad_answers_stay_prose(
    clock: ManualClock,
) -> None:
    answers = iter(
        [
            '```json\n{"facts": [{"subject": "Maria", "relation": "lives in", "object": "Porto",'
            ' "sentence": "Maria moved to Porto."}]}\n```',
            "Sure! Maria now lives in Faro.",  # not JSON: kept as prose, counted
        ]
    )
    extractor = LLMExtractor(lambda prompt: next(answers))
    with make_memory(clock, prose_judge=extractor) as memory:
        memory.add("Last spring Maria moved to Porto.")
        clock.advance(timedelta(days=1))
        faro = memory.add("Maria has lived in Faro since May.")
        assert faro.problem is not None
        assert memory.extraction_problems == 1
        assert [f.object for f in memory.as_of(subject="Maria")] == ["Porto"]
        texts = {h.fact.text for h in memory.search("Maria", k=5)}
        assert texts == {"Maria moved to Porto.", "Maria has lived in Faro since May."}


def test_a_failing_embedder_is_an_embedder_error_and_writes_nothing(clock: ManualClock) -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embedding server down")

    with make_memory(clock, embedder=CallableEmbedder(broken, name="remote", dimension=8)) as m:
        with pytest.raises(EmbedderError, match="embedding server down") as caught:
            m.add("Maria likes tea")
        assert isinstance(caught.value.__cause__, ConnectionError)
        assert m.ledger.export() == ([], [])
        with pytest.raises(EmbedderError):
            m.search("tea")


def test_retire_where_withdraws_every_statement_of_a_source(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="Berlin",
               valid_from=d(2019), metadata={"doc": "a"})  # fmt: skip
    clock.advance(timedelta(days=1))
    memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto",
               valid_from=d(2022), metadata={"doc": "b"})  # fmt: skip
    memory.add("Maria still lives in Porto", subject="Maria", relation="lives in",
               object="Porto", valid_from=d(2023), metadata={"doc": "c"})  # fmt: skip
    clock.advance(timedelta(days=1))
    assert len(memory.retire_where({"doc": "b"})) == 1
    assert objects(memory.search("Maria lives in", k=5)) == ["Porto"], "doc c still says it"
    memory.retire_where({"doc": "c"})
    assert objects(memory.search("Maria lives in", k=5)) == ["Berlin"], "nothing supersedes it"
    assert memory.retire_where({"doc": "nope"}) == []
