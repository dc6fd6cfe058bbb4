"""What the ledger does with a backend that writes in parallel (PostgreSQL's, see
tests/integration/test_postgres_parallel_writes.py): which writes it lets run in parallel, a
refused one run again alone, and results moved to the record time stamped at commit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest

from shared_core import Fact, ManualClock
from shared_core.clock import to_instant
from shared_core.facts import FactKey
from shared_core.ledger import Ledger, WriteResult
from shared_core.ledger.backend import NO_READS, ParallelWriteRefused, ProseRead, WriteReads
from shared_core.ledger.batch import restamped
from shared_core.ledger.in_memory import InMemoryBackend
from shared_core.ledger.postgres.connection import scope_locks

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LATER = T0 + timedelta(seconds=5)


class ParallelBackend(InMemoryBackend):
    """The in-memory backend, claiming parallel writes: it refuses the next ``refuse`` of
    them at their commit (after their changes, which roll back) and reports every other one
    as stamped at ``stamped`` when given."""

    parallel_writes = True
    reads_ahead = True

    def __init__(self, *, stamped: datetime | None = None) -> None:
        super().__init__()
        self.asked: list[bool] = []  # each transaction: parallel or not
        self.refuse = 0
        self._stamped = stamped
        self._planned: int | None = None

    @contextmanager
    def transaction(self, *, reads: WriteReads = NO_READS) -> Iterator[None]:
        self.asked.append(reads.parallel)
        with super().transaction(reads=reads):
            yield
            if reads.parallel and self.refuse:
                self.refuse -= 1
                raise ParallelWriteRefused("refused by the test")
        self._planned = self.last_record()[0] if reads.parallel else None

    def moved_record_time(self) -> tuple[int, int] | None:
        if self._planned is None or self._stamped is None:
            return None
        return self._planned, to_instant(self._stamped)


def lives(city: str, valid_from: datetime | None = None) -> Fact:
    return Fact(
        text=f"Ana lives in {city}",
        subject="Ana",
        relation="lives in",
        object=city,
        valid_from=valid_from,
    )


def ledger_on(backend: ParallelBackend) -> Ledger:
    return Ledger(backend, clock=ManualClock(T0))


def test_a_refused_parallel_write_runs_again_alone_and_keeps_nothing_of_the_first_try() -> None:
    backend = ParallelBackend()
    ledger = ledger_on(backend)
    ledger.write(lives("Porto", T0 - timedelta(days=1)))
    backend.refuse = 1
    result = ledger.write(lives("Faro"))
    assert backend.asked == [True, True, False]
    assert result.decision == "superseded"
    assert [(f.object, f.valid_to) for f in ledger.history("Ana", "lives in")] == [
        ("Porto", T0),
        ("Faro", None),
    ]
    assert len(backend.export()[0]) == 2  # statements: no trace of the refused try


def test_only_writes_of_new_facts_without_a_record_time_ask_for_parallel() -> None:
    backend = ParallelBackend()
    ledger = ledger_on(backend)
    ledger.write(lives("Porto", T0 - timedelta(days=1)))
    ledger.write_many([lives("Faro"), Fact(text="Ana likes tea")])
    ledger.write(Fact(text="Ana likes coffee", recorded_at=T0))
    stored = ledger.write(lives("Braga", T0 + timedelta(days=1)))
    ledger.write_many([lives("Lagos", T0 + timedelta(days=2))], replacing=[stored.statement_id])
    ledger.retract("Ana", "lives in", at=T0 + timedelta(days=3))
    ledger.write_many([])
    assert backend.asked == [True, True, False, True, False, False, False]


def test_results_move_to_the_record_time_stamped_at_commit() -> None:
    """Stamped later than planned (another writer committed a later record time first):
    every instant of the result that was the planned record time is the stamped one."""
    backend = ParallelBackend(stamped=LATER)
    ledger = ledger_on(backend)
    ledger.write(lives("Porto", T0 - timedelta(days=1)))
    moved = ledger.write(lives("Faro"))
    dated = ledger.write_many([lives("Lagos", T0 + timedelta(days=1))])[0]
    assert moved.fact is not None
    assert moved.fact.valid_from == moved.fact.recorded_at == LATER
    assert [(c.object, c.valid_from, c.valid_to) for c in moved.closed] == [
        ("Porto", T0 - timedelta(days=1), LATER)
    ]
    assert dated.fact is not None
    assert dated.fact.valid_from == T0 + timedelta(days=1)  # not the record time: kept
    assert dated.fact.recorded_at == LATER


@pytest.mark.parametrize("name", ["valid_from", "valid_to", "recorded_at", "retired_at"])
def test_restamping_moves_exactly_the_planned_instant(name: str) -> None:
    planned, other = T0, T0 - timedelta(hours=1)
    times = {"valid_from": other, "valid_to": T0 + timedelta(hours=1), "recorded_at": other}
    times["retired_at"] = T0 + timedelta(hours=2)
    times[name] = planned
    fact = Fact(text="Ana lives in Porto", subject="Ana", relation="lives in", object="Porto")
    stored = Fact.trusted(**{**_fields(fact), **times})
    result = WriteResult(decision="novel", statement_id=fact.id, fact=stored, closed=(stored,))
    moved = restamped(result, to_instant(planned), to_instant(LATER))
    assert moved.fact is not None
    for field in times:
        expected = LATER if field == name else times[field]
        assert getattr(moved.fact, field) == expected
        assert getattr(moved.closed[0], field) == expected
    assert restamped(result, to_instant(planned), to_instant(planned)) == result


def _fields(fact: Fact) -> dict[str, object]:
    return {name: getattr(fact, name) for name in ("text", "subject", "relation", "object", "id")}


def test_scope_locks_are_sorted_one_per_name_and_the_ledgers_own() -> None:
    """Sorted (so writers never wait in a circle), one per key, fact id and prose text
    (repeats once), and per schema (two ledgers in one database never block each other)."""
    key = FactKey("default", "ana", "lives_in")
    reads = WriteReads(
        fact_ids=("f1", "f1"),
        prose=(ProseRead("default", "ana likes tea", None, None),),
        keys=(key, key),
    )
    locks = scope_locks("memory", reads)
    assert locks == sorted(locks)
    assert len(locks) == 3
    assert set(locks).isdisjoint(scope_locks("other_memory", reads))
    assert scope_locks("memory", WriteReads(keys=(key,))) != scope_locks(
        "memory", WriteReads(fact_ids=("default\0ana\0lives_in",))
    )
