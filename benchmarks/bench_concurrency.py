"""Write throughput with 1, 4 and 8 concurrent writer processes on one SQLite ledger file
(issue 9, "Figures to report"), measured with pytest-benchmark.

Each writer is a separate process (``python -m benchmarks.bench_concurrency WORKER ...``) with
its own connection, as several services sharing one ledger file would be. Before each round the
writers are started and open the ledger (not timed); the timed part releases them at once and
waits until all have written WRITES_PER_WRITER keyed facts, one ``ledger.write`` (one
``BEGIN IMMEDIATE`` transaction, one commit) each, on 50 shared keys (so writers supersede each
other's facts), with ``durability="full"`` (an fsync per commit) and ``"normal"``. The figure is
all writers' facts divided by that wall time. Under ``--benchmark-disable`` each case runs once
with a few writes per writer as a smoke test, and the results are checked (no timing asserted).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from benchmarks.reporting import Timed, record_rate
from shared_core import SQLiteLedger
from shared_core.facts import Fact

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


def worker_main(argv: list[str]) -> None:
    """The writer process: open, say ready, wait for go, write one commit per fact."""
    path, durability, worker, writers, writes, ready, go, done = argv
    facts = _facts(int(worker), int(writers), int(writes))
    with SQLiteLedger(path, durability=durability, busy_timeout=30.0) as ledger:  # type: ignore[arg-type]
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

    def __init__(self, folder: Path, durability: str, writers: int, writes: int) -> None:
        folder.mkdir()
        self.path, self.go = folder / "ledger.sqlite", folder / "go"
        SQLiteLedger(self.path, durability=durability).close()  # type: ignore[arg-type]
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
        """Release the writers; return when every one has had its last commit acknowledged."""
        self.go.touch()
        started = time.monotonic()
        while not all(done.exists() for done in self.dones):
            failed = [p for p in self.processes if p.poll() not in (None, 0)]
            assert not failed, failed[0].communicate()[1]
            assert time.monotonic() - started < 600, "writers never finished"
            time.sleep(0.0005)

    def join(self) -> None:
        for process in self.processes:
            _, err = process.communicate(timeout=120)
            assert process.returncode == 0, err


@pytest.mark.benchmark(group="concurrent writers: one commit per fact, shared keys")
@pytest.mark.parametrize("durability", ["full", "normal"])
@pytest.mark.parametrize("writers", [1, 4, 8])
def test_concurrent_writer_processes(
    benchmark: Any, tmp_path: Path, figures: list[str], writers: int, durability: str
) -> None:
    writes = SMOKE_WRITES if benchmark.disabled else WRITES_PER_WRITER
    names = count()
    rounds: list[Round] = []

    def setup() -> tuple[tuple[Round], dict[str, Any]]:
        rounds.append(Round(tmp_path / f"round-{next(names)}", durability, writers, writes))
        return (rounds[-1],), {}

    timed = Timed(Round.run)
    try:
        benchmark.pedantic(timed, setup=setup, rounds=ROUNDS)
    finally:
        for done in rounds:
            done.join()
    with SQLiteLedger(rounds[-1].path, create=False) as ledger:
        statements, _ = ledger.export()
        assert len(statements) == writers * writes  # every acknowledged write is there
        assert len(ledger.current()) == min(KEYS, writes)
    record_rate(
        benchmark,
        figures,
        timed,
        f"{writers} writer process(es), durability={durability}",
        writers * writes,
        writers=writers,
        durability=durability,
    )


if __name__ == "__main__":
    worker_main(sys.argv[1:])
