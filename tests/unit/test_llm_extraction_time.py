"""An LLM extractor's valid time and its reported problems, through the memory (issue 31, item 4;
defects 1 and 5): the caller's valid_from is the default, a date the model proposes is used only
when the sentence states it, never the prompt's; every empty or failed extraction is counted per
kind and logged once."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.extractors.base import VALID_FROM_SOURCE
from shared_core.facts import Decision, FactStatus, ReasonKind
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import DEFAULT_TEMPLATE, LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.memory import ExtractionReport, MemoryConfig, TemporalMemory
from tests.keying_llm import ana_history, keyed_memory, keying_llm


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(d(2025, 6, 1))


@pytest.fixture
def memory(clock: ManualClock) -> Iterator[TemporalMemory]:
    with keyed_memory(clock) as memory:
        yield memory


# ---------------------------------------------------------------- defect 1: the prompt's date
def test_the_prompt_example_date_is_never_taken_as_valid_from(memory: TemporalMemory) -> None:
    assert "2024" not in DEFAULT_TEMPLATE  # the prompt shows no date to copy
    added = memory.add("Ana lives in Berlin.", valid_from=d(2021))
    (fact,) = [w.fact for w in added.writes if w.fact is not None]
    assert fact.valid_from == d(2021)
    assert fact.metadata[VALID_FROM_SOURCE] == "caller"
    assert memory.extraction_report.refused_dates == 1


def test_a_date_from_a_custom_prompt_is_refused_even_when_the_year_matches() -> None:
    template = DEFAULT_TEMPLATE + '\nExample: {{"valid_from": "2024-05-01T00:00:00Z"}}\n'
    extractor = LLMExtractor(keying_llm, template=template)
    (fact,) = extractor.extract("Ana moved to Lisbon in 2024.", {}).facts
    assert (fact.valid_from, fact.valid_from_source) == (None, "caller")
    (stated,) = LLMExtractor(keying_llm).extract("Ana moved to Lisbon in 2024.", {}).facts
    assert (stated.valid_from, stated.valid_from_source) == (d(2024, 5, 1), "statement")


def test_a_date_the_statement_states_overrides_the_callers(memory: TemporalMemory) -> None:
    memory.add("Ana has lived in Berlin since May 1st.", valid_from=d(2025, 2, 1))
    (fact,) = memory.as_of(subject="Ana")
    assert fact.valid_from == d(2024, 5, 1)
    assert fact.metadata[VALID_FROM_SOURCE] == "statement"
    assert memory.extraction_report.refused_dates == 0


def test_an_undated_write_records_that_its_valid_time_is_the_record_time(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Ana lives in Berlin.")
    (fact,) = memory.as_of(subject="Ana")
    assert fact.valid_from == clock.now()
    assert fact.metadata[VALID_FROM_SOURCE] == "record_time"


def test_the_metadata_valid_from_dates_facts_and_prose_as_the_caller(
    memory: TemporalMemory,
) -> None:
    memory.add_many(
        ["Ana lives in Berlin.", "Nice weather today."],
        metadatas=[{"valid_from": "2021-03-01T09:00:00+02:00"}, {"valid_from": d(2022)}],
    )
    (fact,) = memory.as_of(subject="Ana")
    assert fact.valid_from == datetime.fromisoformat("2021-03-01T09:00:00+02:00")
    assert "valid_from" not in fact.metadata
    assert fact.metadata[VALID_FROM_SOURCE] == "caller"
    prose = [f for f in memory.as_of() if f.subject is None]
    assert [(f.text, f.valid_from) for f in prose] == [("Nice weather today.", d(2022))]


# ---------------------------------------------------------------- corrections instead of closings
def test_a_changed_value_with_a_later_valid_from_closes_the_old_version_not_corrects_it(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    memory.add("Ana lives in Berlin.", valid_from=d(2021))
    clock.set(d(2025, 7, 1))
    moved = memory.add("Just moved to Lisbon!", valid_from=d(2023))
    assert moved.writes[0].decision is Decision.SUPERSEDED
    assert ana_history(memory) == [("Berlin", d(2021), d(2023)), ("Lisbon", d(2023), None)]
    berlin, _ = memory.history("Ana", "lives in")
    assert berlin.retired_at is None  # closed in valid time, not withdrawn as a correction
    assert berlin.end_reason is not None
    assert berlin.end_reason.kind is ReasonKind.SUPERSEDED
    assert berlin.status is FactStatus.SUPERSEDED


# ---------------------------------------------------------------- defect 5: empty and failed
def test_empty_and_failed_extractions_are_counted_per_kind_and_logged(
    memory: TemporalMemory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="shared_core.memory.extraction_report"):
        memory.add_many(["Nice weather today.", "Hmm.", "Ana lives in Porto."])
    assert memory.extraction_report == ExtractionReport(invalid=1, empty=1, refused_dates=1)
    assert memory.extraction_problems == 1  # the int counts bad output, not empty answers
    levels = [(r.levelname, r.getMessage().split(" ")[1]) for r in caplog.records]
    assert levels == [("INFO", "found"), ("WARNING", "invalid"), ("INFO", "1")]


def test_a_failing_model_is_counted_as_failed_with_one_warning(
    clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    def down(prompt: str) -> str:
        raise ConnectionError("the model server is down")

    config = MemoryConfig(
        embedder=HashingEmbedder(64), prose_judge=LLMExtractor(down, on_error="prose"), clock=clock
    )
    with (
        TemporalMemory(ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config) as m,
        caplog.at_level(logging.DEBUG),
    ):
        added = m.add("Ana lives in Porto.")
    assert added.problem is not None
    assert "ConnectionError" in added.problem
    assert m.extraction_report == ExtractionReport(failed=1)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].name == "shared_core.memory.extraction_report"
