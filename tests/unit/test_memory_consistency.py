"""The ledger is the source of truth: failures between the ledger write and the index write
never leave a retired version visible or an acknowledged fact missing after reconcile()."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import IndexSyncError, TemporalRagError
from shared_core.index.base import Vector
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import ChangeCursor, InMemoryLedger, VersionRecord
from shared_core.memory import MemoryConfig, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)


def d(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


class FlakyIndex(NumpyIndex):
    """Fails the n-th apply: before any change, or after the records but before the cursor."""

    def __init__(self, fail_at: int | None = None, *, mode: str = "before") -> None:
        super().__init__()
        self.fail_at = fail_at
        self.mode = mode
        self.applies = 0

    def apply(
        self, records: Sequence[VersionRecord], vectors: Mapping[str, Vector], cursor: ChangeCursor
    ) -> None:
        self.applies += 1
        if self.applies == self.fail_at:
            if self.mode == "after-records":
                super().apply(records, vectors, self.cursor())  # the cursor is not advanced
            raise OSError("disk full")
        super().apply(records, vectors, cursor)

    def search_record(self, row_id: int) -> VersionRecord:
        return self._records[row_id]


class LaggingIndex(NumpyIndex):
    """Takes new rows but silently ignores later changes to rows it already holds."""

    def apply(
        self, records: Sequence[VersionRecord], vectors: Mapping[str, Vector], cursor: ChangeCursor
    ) -> None:
        held = self.row_ids()
        super().apply([r for r in records if r.row_id not in held], vectors, cursor)


def workload(memory: TemporalMemory, clock: ManualClock) -> None:
    """Every kind of write: supersession, MANY, prose, retraction, correction, retire, undo."""
    steps: list[Callable[[], object]] = [
        lambda: memory.add("Maria lives in Berlin", subject="Maria", relation="lives in",
                           object="Berlin", valid_from=d(2020)),
        lambda: memory.add("Maria lives in Lisbon", subject="Maria", relation="lives in",
                           object="Lisbon", valid_from=d(2022)),
        lambda: memory.declare("speaks", "many"),
        lambda: memory.add_many(["Maria speaks German", "The team ships on Fridays"],
                                metadatas=[{"subject": "Maria", "relation": "speaks",
                                            "object": "German"}, {}]),
        lambda: memory.add("Maria lived in Madrid", subject="Maria", relation="lives in",
                           object="Madrid", valid_from=d(2018)),
        lambda: memory.retract("Maria", "speaks", "German"),
        lambda: memory.correct(memory.search("Lisbon")[0].fact.id, object="Porto",
                               text="Maria lives in Porto"),
        lambda: memory.retire(memory.search("ships on Fridays")[0].fact.id),
        lambda: memory.add("Maria lives in Faro", subject="Maria", relation="lives in",
                           object="Faro", valid_from=d(2023)),
    ]  # fmt: skip
    for step in steps:
        clock.advance(timedelta(days=1))
        with contextlib.suppress(IndexSyncError):  # the ledger has it; the index catches up
            step()


def check_index_matches_ledger(memory: TemporalMemory, clock: ManualClock) -> None:
    record_times = [START + timedelta(days=n, hours=12) for n in range(12)]
    for valid_at in (d(2019), d(2021), d(2022, 6), d(2023, 6), None):
        for known_at in (*record_times, None):
            hits = memory.search("Maria lives speaks team", k=50, valid_at=valid_at,
                                 known_at=known_at)  # fmt: skip
            expected = memory.as_of(valid_at=valid_at, known_at=known_at)
            assert {h.fact.id for h in hits} == {f.id for f in expected}, (valid_at, known_at)


def make(index: NumpyIndex, clock: ManualClock) -> TemporalMemory:
    return TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=index,
        config=MemoryConfig(embedder=HashingEmbedder(), clock=clock),
    )


def test_the_workload_is_consistent_without_failures() -> None:
    clock = ManualClock(START)
    memory = make(NumpyIndex(), clock)
    workload(memory, clock)
    check_index_matches_ledger(memory, clock)


@pytest.mark.parametrize("mode", ["before", "after-records"])
@pytest.mark.parametrize("fail_at", range(1, 9))  # the workload applies 8 times
def test_a_failed_index_write_is_repaired_by_reconcile(fail_at: int, mode: str) -> None:
    clock = ManualClock(START)
    index = FlakyIndex(fail_at, mode=mode)
    memory = make(index, clock)
    workload(memory, clock)
    assert index.applies >= fail_at, "the failure was injected"
    memory.reconcile()
    check_index_matches_ledger(memory, clock)
    before = {r: index.search_record(r) for r in index.row_ids()}
    again = memory.reconcile()  # may re-deliver retirements at the cursor's instant: harmless
    assert again.embedded == 0
    assert {r: index.search_record(r) for r in index.row_ids()} == before, "idempotent"
    check_index_matches_ledger(memory, clock)


def test_a_failed_index_write_surfaces_as_index_sync_error_after_the_ledger_commit() -> None:
    clock = ManualClock(START)
    index = FlakyIndex(fail_at=1)  # an empty ledger: the reconcile on construction applies nothing
    memory = make(index, clock)
    with pytest.raises(IndexSyncError, match="reconcile") as caught:
        memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="B")
    assert isinstance(caught.value.__cause__, OSError)
    assert [f.object for f in memory.as_of()] == ["B"], "the write is acknowledged"
    assert [h.fact.object for h in memory.search("Maria lives")] == ["B"]


def test_search_never_serves_stale_results_while_the_index_is_broken() -> None:
    clock = ManualClock(START)
    index = FlakyIndex()
    memory = make(index, clock)
    memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="Berlin")
    index.fail_at = index.applies + 1
    clock.advance(timedelta(days=1))
    with pytest.raises(IndexSyncError):
        memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto")
    index.fail_at = index.applies + 1
    with pytest.raises(IndexSyncError):  # the search first catches up, and that fails again
        memory.search("Maria lives")
    assert [h.fact.object for h in memory.search("Maria lives")] == ["Porto"]


def test_a_lagging_index_never_surfaces_a_retired_version() -> None:
    clock = ManualClock(START)
    memory = make(LaggingIndex(), clock)
    memory.add("Maria lives in Berlin", subject="Maria", relation="lives in", object="Berlin",
               valid_from=d(2020))  # fmt: skip
    clock.advance(timedelta(days=1))
    memory.add("Maria lives in Porto", subject="Maria", relation="lives in", object="Porto",
               valid_from=d(2023))  # fmt: skip
    assert [h.fact.object for h in memory.search("Maria lives in", k=5)] == ["Porto"]


def test_reconcile_on_open_indexes_what_an_earlier_process_left_behind() -> None:
    clock = ManualClock(START)
    ledger = InMemoryLedger(clock=clock)
    ledger_only = TemporalMemory(
        ledger=ledger,
        index=FlakyIndex(fail_at=1),
        config=MemoryConfig(clock=clock, embedder=HashingEmbedder()),
    )
    with pytest.raises(IndexSyncError):
        ledger_only.add("Maria likes tea")
    fresh = NumpyIndex()
    memory = TemporalMemory(
        ledger=ledger, index=fresh, config=MemoryConfig(embedder=HashingEmbedder(), clock=clock)
    )
    assert fresh.count() == 1
    assert [h.fact.text for h in memory.search("tea")] == ["Maria likes tea"]


def test_an_index_of_another_ledger_is_rebuilt_on_open() -> None:
    clock = ManualClock(START)
    index = NumpyIndex()
    other = make(index, clock)
    other.add_many(["a fact from another ledger", "and another one"])
    memory = make(index, clock)  # its ledger is empty: the index is ahead of it
    assert index.count() == 0
    memory.add("Maria likes tea")
    assert {h.fact.text for h in memory.search("fact tea another", k=10)} == {"Maria likes tea"}
    assert memory.reconcile(full=True).removed == 0


def test_errors_of_the_index_are_ours() -> None:
    assert issubclass(IndexSyncError, TemporalRagError)
    assert issubclass(IndexSyncError, RuntimeError)
