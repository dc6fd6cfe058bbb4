"""Write throughput with 1, 4, 8 and 16 concurrent writer processes on one ledger: an SQLite
file (issue 9) and PostgreSQL (issue 17), in one run, measured with pytest-benchmark.

Each writer is a separate process (``python -m benchmarks.bench_concurrency WORKER ...``) with
its own connection, as several services sharing one ledger would be. Before each round the
writers are started and open the ledger (not timed); the timed part releases them at once and
waits until all have written WRITES_PER_WRITER keyed facts, one ``ledger.write`` (one
transaction, one commit) each, on 50 shared keys (so writers supersede each other's facts): on
SQLite with ``durability="full"`` (an fsync per commit) and ``"normal"``, on the PostgreSQL
server the tests start (fsync off there, so its figure is an upper bound for a durable server).
The figure is all writers' facts divided by that wall time. Under ``--benchmark-disable`` each
case runs once with a few writes per writer as a smoke test, and the results are checked (no
timing asserted).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from benchmarks.reporting import Timed, record_rate
from shared_core import Ledger, PostgresLedger, SQLiteLedger
from shared_core.facts import Fact
from tests.servers import drop_schema

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2020, 1, 1, tzinfo=UTC)
KEYS = 50
WRITES_PER_WRITER, SMOKE_WRITES = 250, 10
ROUNDS = 3


def _facts(worker: int, writers: int, writes: int) -> list[Fact]:
    """Writer ``worker``'s facts: shared keys, interleaved valid times (mostly supersessions)."""
    return [
        Fact(
            text=f"user {i % KEYS} lives in city {worker}-{i}",
            subject=f"user-{i % KEYS}",
            relation="lives_in",
            object=f"city-{worker}-{i}",
            valid_from=T0 + timedelta(hours=i * writers + worker),
        )
        for i in range(writes)
    ]


def open_ledger(location: str, durability: str) -> Ledger:
    """``postgresql://...#schema`` on the server, else the SQLite file at ``location``."""
    if location.startswith("postgresql://"):
        url, _, schema = location.partition("#")
        return PostgresLedger(url, schema=schema, lock_timeout=30.0)
    return SQLiteLedger(location, durability=durability, busy_timeout=30.0)  # type: ignore[arg-type]


def worker_main(argv: list[str]) -> None:
    """The writer process: open, say ready, wait for go, write one commit per fact."""
    path, durability, worker, writers, writes, ready, go, done = argv
    facts = _facts(int(worker), int(writers), int(writes))
    with open_ledger(path, durability) as ledger:
        Path(ready).touch()
        waiting = time.monotonic()
        while not Path(go).exists():
            if time.monotonic() - waiting > 300:
                raise SystemExit("never told to go")
            time.sleep(0.001)
        for fact in facts:
            ledger.write(fact)
        Path(done).touch()  # the last commit returned (closing and exiting are not timed)


class Round:
    """One round: writer processes started and ready; ``run`` releases and waits for them."""

    def __init__(
        self, folder: Path, server: str | None, durability: str, writers: int, writes: int
    ) -> None:
        folder.mkdir()
        self.go = folder / "go"
        self.path = str(folder / "ledger.sqlite")
        if server is not None:  # a fresh schema per round
            self.path = f"{server}#b_{uuid.uuid4().hex[:12]}"
        open_ledger(self.path, durability).close()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        readies = [folder / f"ready-{w}" for w in range(writers)]
        self.dones = [folder / f"done-{w}" for w in range(writers)]
        self.processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.bench_concurrency",
                    *map(
                        str,
                        (self.path, durability, w, writers, writes, readies[w], self.go),
                    ),
                    str(self.dones[w]),
                ],
                cwd=ROOT,
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(writers)
        ]
        started = time.monotonic()
        while not all(ready.exists() for ready in readies):
            failed = [p for p in self.processes if p.poll() not in (None, 0)]
            assert not failed, failed[0].communicate()[1]
            assert time.monotonic() - started < 120, "writers never got ready"
            time.sleep(0.005)

    def run(self) -> None:
        """Release the writers; return when every one has had its last commit acknowledged.

        The wait costs the same whatever the number of writers (one file checked per turn, the
        processes every 200 turns): it shares the cores with them, and a wait that checked
        every writer each turn took more of them the more writers there were."""
        self.go.touch()
        started = time.monotonic()
        waiting, turns = list(self.dones), 0
        while waiting:
            if waiting[0].exists():
                waiting.pop(0)
                continue
            time.sleep(0.0005)
            turns += 1
            if turns % 200 == 0:
                failed = [p for p in self.processes if p.poll() not in (None, 0)]
                assert not failed, failed[0].communicate()[1]
                assert time.monotonic() - started < 600, "writers never finished"

    def join(self) -> None:
        for process in self.processes:
            _, err = process.communicate(timeout=120)
            assert process.returncode == 0, err


@pytest.mark.benchmark(group="concurrent writers: one commit per fact, shared keys")
@pytest.mark.parametrize("store", ["sqlite-full", "sqlite-normal", "postgres"])
@pytest.mark.parametrize("writers", [1, 4, 8, 16])
def test_concurrent_writer_processes(
    benchmark: Any,
    tmp_path: Path,
    figures: list[str],
    writers: int,
    store: str,
    request: pytest.FixtureRequest,
) -> None:
    writes = SMOKE_WRITES if benchmark.disabled else WRITES_PER_WRITER
    server = request.getfixturevalue("postgres_url") if store == "postgres" else None
    durability = store.removeprefix("sqlite-") if server is None else "full"
    names = count()
    rounds: list[Round] = []

    def setup() -> tuple[tuple[Round], dict[str, Any]]:
        folder = tmp_path / f"round-{next(names)}"
        rounds.append(Round(folder, server, durability, writers, writes))
        return (rounds[-1],), {}

    timed = Timed(Round.run)
    try:
        benchmark.pedantic(timed, setup=setup, rounds=ROUNDS)
    finally:
        for done in rounds:
            done.join()
    try:
        with open_ledger(rounds[-1].path, durability) as ledger:
            statements, _ = ledger.export()
            assert len(statements) == writers * writes  # every acknowledged write is there
            assert len(ledger.current()) == min(KEYS, writes)
    finally:
        if server is not None:
            for done in rounds:
                drop_schema(server, done.path.partition("#")[2])
    record_rate(
        benchmark,
        figures,
        timed,
        f"{writers} writer process(es), {store}",
        writers * writes,
        writers=writers,
        store=store,
    )


if __name__ == "__main__":
    worker_main(sys.argv[1:])
