"""Parallel writes on PostgreSQL: writes of new facts lock only what they name, and are
stamped (record time, seqs, row ids) when they commit, in commit order."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from shared_core import Fact, ManualClock
from shared_core.clock import OPEN, to_instant
from shared_core.facts import Cardinality
from shared_core.ledger import PostgresLedger, WriteResult
from shared_core.ledger.backend import ParallelWriteRefused
from shared_core.ledger.postgres.backend import PostgresBackend
from shared_core.ledger.results import ChangeCursor
from tests.integration.ledger_checks import ledger_answer, overlapping_versions, sample_points
from tests.oracle import Oracle

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SECOND = timedelta(seconds=1)


def lives(subject: str, city: str, valid_from: datetime | None = None) -> Fact:
    return Fact(
        text=f"{subject} lives in {city}",
        subject=subject,
        relation="lives in",
        object=city,
        valid_from=valid_from,
    )


def ledger_at(url: str, schema: str, when: datetime, **options: Any) -> PostgresLedger:
    return PostgresLedger(url, schema=schema, clock=ManualClock(when), **options)


@contextmanager
def held_before_commit(ledger: PostgresLedger, write: Callable[[], object]) -> Iterator[list[Any]]:
    """Run ``write`` in a thread that stops once, after planning and before sending its changes
    (its locks held), until the block ends; yields the thread's result (or error), filled after."""
    backend = ledger._backend
    assert isinstance(backend, PostgresBackend)
    stamped = backend._stamped
    send, planned, go = stamped.send, threading.Event(), threading.Event()
    outcome: list[Any] = []

    def stop_once(conn: Any, **stamp: Any) -> None:
        if not planned.is_set():
            planned.set()
            assert go.wait(30)
        send(conn, **stamp)

    def run() -> None:
        try:
            outcome.append(write())
        except Exception as exc:  # reported by the test
            outcome.append(exc)

    stamped.send = stop_once  # type: ignore[method-assign]
    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert planned.wait(30), "the write never reached its commit"
        yield outcome
    finally:
        go.set()
        thread.join(30)


def stored_before(url: str, schema: str, *facts: Fact) -> None:
    """Write ``facts`` from a ledger whose clock is a minute behind the tests' T0."""
    with ledger_at(url, schema, T0 - 60 * SECOND) as earlier:
        earlier.write_many(facts)


def refusals(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Parallel writes refused from now on (they ran again, alone)."""
    refused: list[str] = []
    original = PostgresBackend.transaction

    @contextmanager
    def spy(self: PostgresBackend, **kwargs: Any) -> Iterator[None]:
        try:
            with original(self, **kwargs):
                yield
        except ParallelWriteRefused as exc:
            refused.append(str(exc))
            raise

    monkeypatch.setattr(PostgresBackend, "transaction", spy)
    return refused


def test_writes_of_other_keys_commit_while_a_write_is_planned_and_it_is_stamped_after_them(
    postgres_url: str, schema: str
) -> None:
    """A holds its key and has planned at its clock's 10:00:00; B (another key, clock 10:00:05,
    busy_retries 0: it would fail if it waited for A) commits meanwhile. A is then recorded at
    B's later time, its defaulted valid_from with it: record time follows commit order."""
    with (
        ledger_at(postgres_url, schema, T0) as a,
        ledger_at(postgres_url, schema, T0 + 5 * SECOND, busy_retries=0, lock_timeout=1) as b,
    ):
        stored_before(postgres_url, schema, lives("Ana", "Porto", T0 - 9 * SECOND))
        with held_before_commit(a, lambda: a.write(lives("Ana", "Faro"))) as outcome:
            other = b.write(lives("Rui", "Lagos"))
            b.write(lives("Eva", "Braga", T0 - 3 * SECOND))
        (moved,) = outcome
        assert isinstance(moved, WriteResult), moved
        assert other.fact is not None
        assert moved.fact is not None
        assert other.fact.recorded_at == T0 + 5 * SECOND
        assert moved.fact.recorded_at == moved.fact.valid_from == T0 + 5 * SECOND
        assert [(c.object, c.valid_to) for c in moved.closed] == [("Porto", T0 + 5 * SECOND)]
        history = a.history("Ana", "lives in")
        assert [(f.object, f.valid_from, f.valid_to) for f in history] == [
            ("Porto", T0 - 9 * SECOND, T0 + 5 * SECOND),
            ("Faro", T0 + 5 * SECOND, None),
        ]
        rows = sorted(a.changes(ChangeCursor()).records, key=lambda r: r.row_id)
        assert [r.recorded_at for r in rows] == sorted(r.recorded_at for r in rows)
        texts = [r.text for r in rows]
        assert texts.index("Eva lives in Braga") < texts.index("Ana lives in Faro")


def test_a_parallel_write_whose_plan_its_stamp_would_change_runs_again_alone(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ana's next move is known for 10:00:03. A plans "now" (10:00:00) before it: a version
    until 10:00:03. B commits at 10:00:05 meanwhile, so A would be recorded at 10:00:05, after
    that move: its plan is refused, nothing kept, and it runs again at 10:00:05 alone."""
    with (
        ledger_at(postgres_url, schema, T0) as a,
        ledger_at(postgres_url, schema, T0 + 5 * SECOND) as b,
    ):
        porto, lagos = (
            lives("Ana", "Porto", T0 - 9 * SECOND),
            lives("Ana", "Lagos", T0 + 3 * SECOND),
        )
        stored_before(postgres_url, schema, porto, lagos)
        refused = refusals(monkeypatch)
        with held_before_commit(a, lambda: a.write(lives("Ana", "Faro"))) as outcome:
            b.write(lives("Rui", "Lagos"))
        (again,) = outcome
        assert isinstance(again, WriteResult), again
        assert len(refused) == 1
        assert "a time it read lies between the two" in refused[0]
        assert again.fact is not None
        assert again.fact.valid_from == again.fact.recorded_at == T0 + 5 * SECOND
        assert [(c.object, c.valid_to) for c in again.closed] == [("Lagos", T0 + 5 * SECOND)]
        history = a.history("Ana", "lives in")
        assert [(f.object, f.valid_to) for f in history] == [
            ("Porto", T0 + 3 * SECOND),
            ("Lagos", T0 + 5 * SECOND),
            ("Faro", None),
        ]


def test_a_result_keeps_the_record_time_of_a_version_the_write_did_not_store(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A's clock stands still: Porto was recorded at the very instant A plans with. Reinforced,
    the result shows that stored version. B commits 10:00:05 while A is planned; had A been
    stamped then, its result would have moved Porto's record time too: it runs alone."""
    with (
        ledger_at(postgres_url, schema, T0) as a,
        ledger_at(postgres_url, schema, T0 + 5 * SECOND) as b,
    ):
        a.write(lives("Ana", "Porto", T0 - 9 * SECOND))
        refused = refusals(monkeypatch)
        same = Fact(
            text="Ana still lives in Porto",
            subject="Ana",
            relation="lives in",
            object="Porto",
            valid_from=T0 - 9 * SECOND,
        )
        with held_before_commit(a, lambda: a.write(same)) as outcome:
            b.write(lives("Rui", "Lagos"))
        (again,) = outcome
        assert isinstance(again, WriteResult), again
        assert again.decision == "reinforced"
        assert again.fact is not None
        assert again.fact.recorded_at == T0
        assert len(refused) == 1
        assert "a time it read lies between the two" in refused[0]


def test_a_parallel_write_that_must_read_its_own_changes_runs_again_alone(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same text twice in one batch: the second is looked up after the first is queued,
    which the database does not hold yet; the batch runs again alone and gets it right."""
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        refused = refusals(monkeypatch)
        results = ledger.write_many([Fact(text="Ana likes tea"), Fact(text="ana likes tea")])
        assert [r.decision for r in results] == ["novel", "duplicate"]
        assert refused == ["the write reads rows after changing some"]
        assert len(ledger.current()) == 1


def test_a_ledger_of_schema_version_1_is_upgraded_and_writes_in_parallel(
    postgres_url: str, schema: str
) -> None:
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.write(lives("Ana", "Porto", T0))
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # back to version 1
        for function in ("stamp_write", "stamped_time", "stamped_seq", "stamped_row"):
            conn.execute(f"DROP FUNCTION {schema}.{function}")
        conn.execute(f"UPDATE {schema}.schema_migrations SET version = 1")
    with PostgresLedger(postgres_url, schema=schema, create=False) as ledger:
        moved = ledger.write(lives("Ana", "Faro", T0 + SECOND))
        assert moved.decision == "superseded"
        assert ledger._backend.moved_record_time() is None
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute(f"SELECT version FROM {schema}.schema_migrations").fetchall()
    assert sorted(v for (v,) in versions) == [1, 2]


def test_the_record_clock_seqs_and_row_ids_continue_after_parallel_writes(
    postgres_url: str, schema: str
) -> None:
    """Provisional seqs and row ids never reach the tables: both continue from the stored ones,
    whichever kind of write comes next."""
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.write_many([lives(p, "Porto", T0) for p in ("Ana", "Rui", "Eva")])
        ledger.write(lives("Ana", "Faro", T0 + SECOND))
        closed = ledger.retract("Rui", "lives in", at=T0 + 2 * SECOND)
        ledger.write(lives("Eva", "Braga", T0 + 3 * SECOND))
        assert closed.decision == "retracted"
    with psycopg.connect(postgres_url) as conn:
        seqs = [s for (s,) in conn.execute(f"SELECT seq FROM {schema}.statements ORDER BY seq")]
        rows = [r for (r,) in conn.execute(f"SELECT row_id FROM {schema}.versions ORDER BY 1")]
        (clock,) = conn.execute(f"SELECT last_seq FROM {schema}.ledger_clock").fetchall()
    assert seqs == list(range(1, len(seqs) + 1))
    assert clock == (len(seqs),)
    assert rows == list(range(rows[0], rows[0] + len(rows)))
    assert max(rows) < 2**60


def test_parallel_writes_valid_from_now_on_shared_keys_match_the_oracle(
    postgres_url: str, schema: str
) -> None:
    """Four threads, each with a ledger of its own (its own connections, the system clock),
    write facts valid from "now" (and some from up to 3 ms later) on three shared keys; a few
    stamps move (another writer committed a later record time first; a refused plan is rarer,
    the test above makes one). Replayed in seq order at their stamped record times, the oracle
    decides every write as the ledger did and answers every as-of alike, and every result's
    fact is a version as stored."""
    PostgresLedger(postgres_url, schema=schema).close()
    written: dict[str, tuple[Fact, WriteResult]] = {}

    def work(worker: int) -> None:
        rng = random.Random(worker)
        with PostgresLedger(postgres_url, schema=schema, lock_timeout=30) as ledger:
            for _ in range(40):
                later = datetime.now(UTC) + rng.randrange(1, 3000) * timedelta(microseconds=1)
                when = later if rng.random() < 0.4 else None
                city = rng.choice(["Porto", "Faro", "Lagos", "Braga"])
                fact = lives(rng.choice(["Ana", "Rui", "Eva"]), city, when)
                written[fact.id] = (fact, ledger.write(fact))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(written) == 160
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        statements, versions = ledger.export()
        assert [s.seq for s in statements] == list(range(1, len(statements) + 1))
        recorded = [s.recorded_at for s in statements]
        assert recorded == sorted(recorded)
        assert overlapping_versions(versions) == []
        stored = {(v.fact_id, v.valid_from, v.recorded_at) for v in versions}
        oracle = Oracle({"lives_in": Cardinality.ONE})
        for row in statements:
            fact, result = written[row.fact_id]
            assert str(oracle.write(fact, row.recorded_at)) == result.decision, fact
            assert result.fact is not None  # the version carrying it, as stored
            carrying = result.fact.id, result.fact.valid_from, result.fact.recorded_at
            assert (carrying[0], *map(to_instant, carrying[1:])) in stored  # type: ignore[arg-type]
        for valid, known in sample_points(versions, random.Random(7)):
            now = to_instant(datetime.now(UTC) + timedelta(days=1)) if valid is None else valid
            expected = oracle.as_of("default", now, OPEN - 1 if known is None else known)
            assert ledger_answer(ledger, now, known) == expected, (valid, known)
