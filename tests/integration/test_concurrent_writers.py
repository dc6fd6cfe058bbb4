"""Concurrent writers (issue 9, part 2): no lost update, invariants, the oracle's answer.

Four processes and, separately, eight threads (each with its own connection to the file, and
then all through one TemporalMemory) write conflicting facts on the same few keys at the same
few valid times into one ledger: supersessions, corrections at equal valid_from,
backfills, retractions. Each writer logs what the ledger acknowledged. Then:

* every acknowledged statement id is in the ledger, and every statement in the ledger was
  acknowledged to some writer (nothing partial from a refused write, no silent drop);
* no two versions of one stream overlap in (valid time x record time); nothing was deleted;
* replaying the acknowledged writes through the brute-force oracle (tests/oracle.py) in the
  order the ledger recorded them (statement seq, at their recorded_at) gives the same decision
  for every write and the same ``as_of`` answer at many (valid_at, known_at) points;
* with a tiny busy timeout and no retries, writes that meet a held lock raise LedgerBusyError
  (the documented error), write nothing, and succeed once the lock is released.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shared_core.clock import OPEN, to_instant
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import LedgerBusyError
from shared_core.facts import Cardinality, Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres.connection import lock_id
from shared_core.ledger.postgres.ledger import PostgresLedger
from shared_core.ledger.records import StatementRow
from shared_core.ledger.sqlite.ledger import SQLiteLedger
from shared_core.memory.config import MemoryConfig
from shared_core.memory.memory import TemporalMemory
from tests.integration.concurrent_writer import (
    CARDINALITIES,
    DAYS,
    Target,
    as_fact,
    day,
    open_ledger,
    run,
)
from tests.integration.ledger_checks import (
    emit,
    index_disagreements,
    ledger_answer,
    lost_ids,
    overlapping_versions,
)
from tests.oracle import Oracle
from tests.servers import drop_schema

ROOT = Path(__file__).resolve().parents[2]
SEED = 4_242
L = TypeVar("L", bound=Ledger)


def new_ledger(path: Path, **options: Any) -> SQLiteLedger:
    return declare(SQLiteLedger(path, durability="normal", **options))


def declare(ledger: L) -> L:
    for relation, cardinality in CARDINALITIES.items():
        ledger.declare(relation, cardinality)
    return ledger


# ---------------------------------------------------------------- checks
def acknowledged_ids(logs: list[list[dict[str, Any]]]) -> set[str]:
    """Statement ids the writers were told were stored (duplicates store nothing)."""
    return {
        sid
        for log in logs
        for entry in log
        for sid, decision in zip(entry.get("ids", []), entry.get("decisions", []), strict=True)
        if decision != "duplicate"
    }


def replay(logs: list[list[dict[str, Any]]], statements: list[StatementRow]) -> Oracle:
    """The oracle fed the acknowledged writes in the ledger's order; decisions must agree."""
    first: dict[str, StatementRow] = {}
    for row in statements:  # in seq order
        first.setdefault(row.fact_id, row)
    steps: list[tuple[int, str, Any, str, str]] = []
    for log in logs:
        for entry in log:
            if "error" in entry:
                continue
            targets = entry["facts"] if entry["op"] == "write_many" else [entry]
            for what, sid, decision in zip(targets, entry["ids"], entry["decisions"], strict=True):
                if decision != "duplicate":
                    steps.append((first[sid].seq, entry["op"], what, sid, decision))
    oracle = Oracle({relation: Cardinality(c) for relation, c in CARDINALITIES.items()})
    for _, op, what, sid, decision in sorted(steps, key=lambda step: step[0]):
        t = first[sid].recorded_at
        if op == "write_many":
            got = oracle.write(as_fact(what), t)
        elif op == "retract":
            obj = what["object"]
            probe = Fact(
                id=sid,
                text="retraction",
                subject=what["subject"],
                relation=what["relation"],
                object="-" if obj is None else obj,
            )
            got = oracle.retract(probe, obj, to_instant(day(what["at"])), t)
        else:
            got = oracle.correct(what["target"], what["changes"], t, sid)
        assert str(got) == decision, f"{op} {what}: the ledger said {decision}, the oracle {got}"
    return oracle


def check_everything(ledger: Any, logs: list[list[dict[str, Any]]]) -> dict[str, int]:
    """All the checks of the module docstring; returns counts for the figures."""
    statements, versions = ledger.export()
    acked = acknowledged_ids(logs)
    assert lost_ids(ledger, sorted(acked)) == [], "an acknowledged write is missing"
    assert {row.fact_id for row in statements} == acked, "a statement nobody was told about"
    assert overlapping_versions(versions) == []
    oracle = replay(logs, statements)
    times = sorted({row.recorded_at for row in statements})
    rng = random.Random(SEED)
    known: list[int | None] = [None, times[0] - 1, *rng.sample(times, min(12, len(times)))]
    valid = [to_instant(day(n)) for n in range(-1, DAYS + 2, 3)]
    for k in known:
        for v in valid:
            expected = oracle.as_of("default", v, OPEN - 1 if k is None else k)
            assert ledger_answer(ledger, v, k) == expected, f"as_of(valid {v}, known {k})"
    errors = [entry["error"] for log in logs for entry in log if "error" in entry]
    return {
        "operations": sum(len(log) for log in logs),
        "statements": len(statements),
        "versions": len(versions),
        "refused": len(errors),
        "busy": errors.count("LedgerBusyError"),
    }


def summary(config: pytest.Config, label: str, counts: dict[str, int]) -> None:
    emit(
        config,
        [
            "",
            f"concurrent writers ({label}): {counts['operations']} operations, "
            f"{counts['statements']} statements, {counts['versions']} version rows, "
            f"{counts['refused']} documented refusals ({counts['busy']} busy); "
            "lost updates 0, invariant violations 0, oracle replay equal",
        ],
    )


def writer_processes(
    count: int, where: list[str], operations: int, go: Path, *, timeout: float = 120
) -> list[Any]:
    """``count`` concurrent_writer processes on ``where`` ([ledger] or [ledger, index]),
    released together; their logs."""
    ledger, *index = where
    command = [sys.executable, "-m", "tests.integration.concurrent_writer", ledger]
    processes = [
        subprocess.Popen(
            [*command, str(worker), str(operations), str(SEED), str(go), *index],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(count)
    ]
    go.touch()
    logs = []
    for process in processes:
        out, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, err
        logs.append(json.loads(out))
    return logs


def in_threads(count: int, work: Callable[[int], list[dict[str, Any]]]) -> list[Any]:
    barrier = threading.Barrier(count)
    logs: list[Any] = [None] * count
    failures: list[BaseException] = []

    def body(worker: int) -> None:
        try:
            barrier.wait()
            logs[worker] = work(worker)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    return logs


# ---------------------------------------------------------------- the ledgers
class Store:
    """Where the ledger of a test lives: an SQLite file, or a schema on the PostgreSQL server;
    opens it with a busy timeout and retries, and holds its writer lock from outside."""

    def __init__(self, location: str, blocker: Callable[[], AbstractContextManager[None]]):
        self.location = location
        self.blocker = blocker

    def open(self, *, timeout: float | None = None, retries: int | None = None) -> Ledger:
        options: dict[str, Any] = {} if retries is None else {"busy_retries": retries}
        if timeout is not None:
            kind = "lock_timeout" if self.location.startswith("postgresql") else "busy_timeout"
            options[kind] = timeout
        return open_ledger(self.location, **options)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The SQLite file and the PostgreSQL server must give the same guarantees."""
    if request.param == "sqlite":
        path = tmp_path / "ledger.sqlite"
        new_ledger(path).close()

        @contextmanager
        def sqlite_lock() -> Iterator[None]:
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                blocker.execute("ROLLBACK")
                blocker.close()

        yield Store(str(path), sqlite_lock)
        return
    url: str = request.getfixturevalue("postgres_url")
    schema = f"w_{uuid.uuid4().hex[:12]}"
    with PostgresLedger(url, schema=schema) as ledger:
        declare(ledger)

    @contextmanager
    def advisory_lock() -> Iterator[None]:
        import psycopg

        with psycopg.connect(url, autocommit=True) as blocker:
            blocker.execute("SELECT pg_advisory_lock(%s)", (lock_id(schema),))
            yield

    try:
        yield Store(f"{url}#{schema}", advisory_lock)
    finally:
        drop_schema(url, schema)


# ---------------------------------------------------------------- the tests
def test_four_processes_writing_the_same_keys_lose_nothing_and_match_the_oracle(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    logs = writer_processes(4, [store.location], 60, tmp_path / "go")
    with store.open() as ledger:
        counts = check_everything(ledger, logs)
    summary(request.config, f"4 processes, {request.node.callspec.id}", counts)


def test_four_memories_in_four_processes_share_a_server_ledger_and_index(
    postgres_url: str, chroma_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """PostgreSQL and a Chroma server shared by four processes, each with its own
    TemporalMemory: the ledger matches the oracle and the index, caught up by the writers
    themselves (one mirror at a time), matches the ledger exactly."""
    schema, prefix = f"m_{uuid.uuid4().hex[:12]}", f"m{uuid.uuid4().hex[:12]}"
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        declare(ledger)
    location, index = f"{postgres_url}#{schema}", f"{chroma_url}#{prefix}"
    try:
        logs = writer_processes(4, [location, index], 30, tmp_path / "go", timeout=300)
        memory = TemporalMemory(
            ledger=PostgresLedger(postgres_url, schema=schema),
            index=ChromaIndex.connect(chroma_url, prefix=prefix),
            config=MemoryConfig(embedder=HashingEmbedder(32)),
        )
        with memory:
            counts = check_everything(memory.ledger, logs)
            assert memory.ledger.changes(memory.index.cursor()).records == ()  # nothing left
            _, versions = memory.ledger.export()
            assert index_disagreements(memory, versions, random.Random(SEED)) == []
        summary(request.config, "4 processes, PostgreSQL + Chroma server, 4 memories", counts)
    finally:
        ChromaIndex.connect(chroma_url, prefix=prefix).drop()
        drop_schema(postgres_url, schema)


def test_eight_threads_with_their_own_connections_lose_nothing_and_match_the_oracle(
    store: Store, request: pytest.FixtureRequest
) -> None:
    ledgers = [store.open() for _ in range(8)]
    try:
        logs = in_threads(8, lambda w: run(Target.of_ledger(ledgers[w]), w, 40, SEED))
    finally:
        for ledger in ledgers:
            ledger.close()
    with store.open() as ledger:
        counts = check_everything(ledger, logs)
    summary(request.config, f"8 threads, 8 connections, {request.node.callspec.id}", counts)


def test_eight_threads_through_one_memory_keep_ledger_and_index_in_step(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    memory = TemporalMemory(
        ledger=store.open(),
        index=ChromaIndex(tmp_path / "index"),
        config=MemoryConfig(embedder=HashingEmbedder(32)),
    )
    with memory:
        logs = in_threads(8, lambda w: run(Target.of_memory(memory), w, 25, SEED + 1))
        counts = check_everything(memory.ledger, logs)
        _, versions = memory.ledger.export()
        assert index_disagreements(memory, versions, random.Random(SEED)) == []
    summary(request.config, f"8 threads, one TemporalMemory, {request.node.callspec.id}", counts)


def test_a_held_lock_is_a_busy_error_for_every_write_and_nothing_partial_is_stored(
    store: Store,
) -> None:
    ledger = store.open(timeout=0.02, retries=2)
    first = ledger.write(as_fact(_lives("Maria", "Berlin", 1, "a")))
    other = ledger.write(as_fact(_lives("Jonas", "Berlin", 1, "z")))
    before = ledger.export()
    writes: list[Callable[[], Any]] = [
        lambda: ledger.write_many(
            [as_fact(_lives(s, "Oslo", 5, f"b{s}")) for s in ("Maria", "Jonas", "Aiko")]
        ),
        lambda: ledger.write(as_fact(_lives("Maria", "Porto", 2, "c"))),
        lambda: ledger.retract("Maria", "lives in", at=day(3)),
        lambda: ledger.correct(first.statement_id, object="Lisbon"),
        lambda: ledger.retire(other.statement_id),
        lambda: ledger.declare("speaks", "many"),
    ]
    with store.blocker():
        for write in writes:
            with pytest.raises(LedgerBusyError, match="locked by other writers"):
                write()
        assert ledger.export() == before, "a refused write left something behind"
    for write in writes:  # the lock is gone: the same writes now go through
        write()
    statements, _ = ledger.export()
    assert {"bMaria", "bJonas", "bAiko", "c"} <= {row.fact_id for row in statements}
    ledger.close()


def test_contended_writers_with_no_retries_fail_loudly_or_store_everything(
    store: Store, request: pytest.FixtureRequest
) -> None:
    """Real contention, tiny timeout, no retries: every write is either acknowledged and stored
    or refused with a documented error and absent (checked by check_everything)."""
    ledgers = [store.open(timeout=0.001, retries=0) for _ in range(6)]
    try:
        logs = in_threads(6, lambda w: run(Target.of_ledger(ledgers[w]), w, 40, SEED + 2))
    finally:
        for ledger in ledgers:
            ledger.close()
    with store.open() as ledger:
        counts = check_everything(ledger, logs)
    refusals = {entry["error"] for log in logs for entry in log if "error" in entry}
    assert refusals <= {"LedgerBusyError", "NothingToRetractError", "InvalidOperationError"}
    label = f"6 threads, busy timeout 1 ms, no retries, {request.node.callspec.id}"
    summary(request.config, label, counts)


def test_a_second_mirror_waits_for_the_first_on_another_connection(store: Store) -> None:
    """The mirror lock holds across connections (and so processes): a second ledger object's
    mirror gets it only once the first lets go, and writers do not wait for it."""
    first, second = store.open(), store.open()
    holding, got = threading.Event(), threading.Event()
    release = threading.Event()

    def hold() -> None:
        with first.mirror_lock():
            holding.set()
            release.wait(timeout=60)

    def take() -> None:
        with second.mirror_lock():
            got.set()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(timeout=30)
    taker = threading.Thread(target=take)
    taker.start()
    second.write(as_fact(_lives("Maria", "Berlin", 1, "w")))  # a writer goes on meanwhile
    assert not got.wait(timeout=0.5), "the second mirror ran while the first held the lock"
    release.set()
    holder.join(timeout=30)
    assert got.wait(timeout=30)
    taker.join(timeout=30)
    first.close()
    second.close()


def _lives(subject: str, city: str, valid_day: int, fact_id: str) -> dict[str, Any]:
    return {
        "id": fact_id,
        "text": f"{subject} lives in {city}",
        "subject": subject,
        "relation": "lives in",
        "object": city,
        "valid_from": valid_day,
    }


def test_the_replay_catches_a_wrong_order() -> None:
    """The oracle replay can fail: swapping the recorded order of two conflicting writes at the
    same valid time changes which one is believed."""
    rows = {
        "x": _row(1, "x", 100),
        "y": _row(2, "y", 200),
    }
    logs = [
        [{"op": "write_many", "facts": [_lives("Maria", "Berlin", 1, "x")]}],
        [{"op": "write_many", "facts": [_lives("Maria", "Oslo", 1, "y")]}],
    ]
    logs[0][0] |= {"ids": ["x"], "decisions": ["novel"]}
    logs[1][0] |= {"ids": ["y"], "decisions": ["corrected"]}
    replay(logs, [rows["x"], rows["y"]])
    with pytest.raises(AssertionError, match="the oracle"):
        replay(logs, [_row(1, "y", 100), _row(2, "x", 200)])


def _row(seq: int, fact_id: str, recorded_at: int) -> StatementRow:
    return StatementRow(
        seq, fact_id, "default", 1, "", None, None, None, None, "assertion", "", "", 0, None,
        recorded_at, OPEN, None, "{}",
    )  # fmt: skip
