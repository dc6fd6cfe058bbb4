"""LangChain's standard retriever tests, run whole (no override) against TemporalRetriever."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_temporal import TemporalRetriever
from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

CITIES = ("Berlin", "Lisbon", "Porto", "Madrid", "Vienna", "Prague")


def timeline_memory() -> TemporalMemory:
    """Six people, each of whom moved once, and some prose: six current facts, six stale."""
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(256), clock=clock),
    )
    people = ("Maria", "João", "Ana", "Luis", "Eva", "Tom")
    for year, shift in ((2019, 0), (2023, 1)):
        for number, person in enumerate(people):
            city = CITIES[(number + shift) % len(CITIES)]
            memory.add(
                f"{person} lives in {city}.", subject=person, relation="lives in", object=city,
                valid_from=datetime(year, 1, 1, tzinfo=UTC),
            )  # fmt: skip
    memory.add_many(["The office opens at nine.", "Lunch is served at noon."])
    return memory


class TestTemporalRetrieverStandard(RetrieversIntegrationTests):
    """Nothing is overridden or marked xfail: every standard test runs as LangChain wrote it."""

    @pytest.fixture(autouse=True)
    def _memory(self) -> Iterator[None]:
        # The constructor params are a property (no fixtures there): hold one memory per test.
        with timeline_memory() as memory:
            self.memory = memory
            yield

    @property
    def retriever_constructor(self) -> type[TemporalRetriever]:
        return TemporalRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory}

    @property
    def retriever_query_example(self) -> str:
        return "Where does Maria live?"


def test_the_standard_queries_see_only_current_facts() -> None:
    """What the standard suite retrieves is the current state: no superseded version."""
    with timeline_memory() as memory:
        documents = TemporalRetriever(memory=memory, k=20).invoke("Where does Maria live?")
    assert len(documents) == 8  # six current places and two prose facts, of 14 versions
    assert {d.metadata["status"] for d in documents} == {"current"}
