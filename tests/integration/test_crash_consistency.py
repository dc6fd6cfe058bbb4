"""Crash consistency (issue 9, part 1): SIGKILL a writer anywhere, reopen, nothing is lost.

A writer process (tests/integration/crash_writer.py) ingests a seeded stream of changing facts
through the embedded TemporalMemory (SQLite ledger, ``durability="full"``, persistent Chroma
index) and fsyncs an acknowledgement line after every write that returned. The parent kills it
with SIGKILL, either after a random delay or at a precise point through a hook installed in the
child only (inside a ledger transaction, between the ledger commit and the index write, inside
the index write, before the index stores its cursor, before the ack). Every trial continues the
same folder. After each kill the parent reopens the memory (``reconcile`` runs on open) and
checks:

* every acknowledged statement id is in the ledger (``explain`` finds it);
* nothing was deleted or rewritten relative to the previous trial's export (only a
  ``retired_at`` may be set once);
* no two versions of one stream are valid at the same instant as known at the same record
  time (for a ONE key: at most one value at a time; no overlapping intervals), checked exactly
  as rectangle overlap in (valid time x record time);
* the index agrees with the ledger: it holds exactly the ledger's version rows, and at sampled
  (valid_at, known_at) points a search with k above the row count returns exactly the rows the
  ledger says are visible (no retired version visible, no current one missing); a memory
  search per subject returns exactly the ledger's ``as_of`` facts of that subject.

The HashingEmbedder stands in for MiniLM: the property is about which rows the index holds and
filters, not about embedding quality, and the model would only slow each restart down.

The default run does TRIALS trials; ``pytest -m soak`` runs SOAK_TRIALS (environment variable,
default 300) more on longer streams. The same trials run SERVER_TRIALS times on a memory over
PostgreSQL and a Chroma server (TemporalMemory.connect), the servers the tests start.
The figures (trials, kills, violations, acknowledged and lost writes) are printed at the end.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from shared_core.clock import OPEN, from_instant
from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.memory.config import MemoryConfig
from shared_core.memory.memory import TemporalMemory
from tests.integration.crash_writer import day, open_memory
from tests.integration.ledger_checks import (
    deleted_or_rewritten,
    emit,
    index_disagreements,
    lost_ids,
    overlapping_versions,
)
from tests.servers import drop_schema

ROOT = Path(__file__).resolve().parents[2]
POINTS = ("ledger", "between", "index", "cursor", "ack")
HOOKED = [f"{point}:{n}" for point in POINTS for n in (1, 3, 8, 17)]  # 20 precise kills
TRIALS = 60  # the default run: the 20 hooked kills and 40 random ones
OPERATIONS = 30  # writes per trial (most trials are killed before the end)
SOAK_TRIALS = int(os.environ.get("SOAK_TRIALS", "300"))  # about 5 s each on 2 cores
SOAK_OPERATIONS = 80
SERVER_TRIALS = 28  # on PostgreSQL + a Chroma server: the 20 hooked kills and 8 random ones
SEED = 9_001


@dataclass
class Figures:
    trials: int = 0
    killed: int = 0
    hooked: int = 0
    acknowledged: int = 0
    lost: int = 0
    misses: list[int] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def lines(self, label: str) -> list[str]:
        return [
            "",
            f"crash consistency ({label}):",
            f"  trials run: {self.trials} ({self.killed} ended by SIGKILL, "
            f"{self.hooked} of them at a hooked point)",
            f"  acknowledged writes: {self.acknowledged}, lost: {self.lost}",
            f"  invariant violations: {len(self.violations)}",
            f"  visible rows a large-k search left out (counted as violations too): "
            f"{len(self.misses)}",
        ]


# ---------------------------------------------------------------- the writer process
def acknowledged(ack: Path) -> tuple[bool, list[str]]:
    """(ready, acknowledged statement ids): complete lines only (a torn last line is no ack)."""
    if not ack.exists():
        return False, []
    ready, ids = False, []
    for line in ack.read_text(encoding="utf-8").split("\n")[:-1]:
        record = json.loads(line)
        ready = ready or record.get("ready", False)
        ids += record.get("ids", [])
    return ready, ids


def run_writer(
    location: str, ack: Path, seed: int, operations: int, hook: str | None, delay: float
) -> int:
    """Start a writer, kill it (after ``delay`` s of writing, unless a hook kills it first)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CRASH_AT", None)
    if hook is not None:
        env["CRASH_AT"] = hook
    command = [sys.executable, "-m", "tests.integration.crash_writer"]
    process = subprocess.Popen(
        [*command, location, str(ack), str(seed), str(operations)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        if hook is None:
            started = time.monotonic()
            while not acknowledged(ack)[0] and process.poll() is None:
                assert time.monotonic() - started < 60, "the writer never got ready"
                time.sleep(0.01)
            time.sleep(delay)
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # pragma: no cover - only when a check above failed
            process.kill()
            process.wait()
    assert process.returncode in (0, -signal.SIGKILL), stderr.decode(errors="replace")
    return process.returncode


# ---------------------------------------------------------------- the checks
# ---------------------------------------------------------------- the harness
def crash_trials(
    folder: Path,
    trials: int,
    operations: int,
    seed: int,
    figures: Figures,
    location: str | None = None,
) -> None:
    """``trials`` killed writers on one memory: the embedded one in ``folder``, or the one on
    servers at ``location`` (see crash_writer.open_memory)."""
    rng = random.Random(seed)
    ack = folder / "acks.jsonl"
    data = str(folder / "memory") if location is None else location
    previous: tuple[list[StatementRow], list[VersionRow]] = ([], [])
    hooks = (
        [*HOOKED, *[None] * (trials - len(HOOKED))] if trials >= len(HOOKED) else HOOKED[:trials]
    )
    rng.shuffle(hooks)
    for trial, hook in enumerate(hooks):
        delay = rng.uniform(0.0, 0.02 * operations)
        code = run_writer(data, ack, seed * 1_000 + trial, operations, hook, delay)
        figures.trials += 1
        figures.killed += code == -signal.SIGKILL
        figures.hooked += code == -signal.SIGKILL and hook is not None
        if hook is not None and code != -signal.SIGKILL:
            figures.violations.append(f"trial {trial}: hook {hook} never fired")
        _, ids = acknowledged(ack)
        memory = open_memory(data)  # reconcile runs on open
        try:
            lost = lost_ids(memory, ids)
            figures.acknowledged = len(set(ids))
            figures.lost += len(lost)
            found = [
                f"trial {trial} ({hook or 'random kill'}): acknowledged {f} lost" for f in lost
            ]
            export = memory.ledger.export()
            found += deleted_or_rewritten(previous, export)
            found += overlapping_versions(export[1])
            found += index_disagreements(memory, export[1], rng, figures.misses)
            figures.violations += [f"trial {trial} ({hook or 'random kill'}): {p}" for p in found]
            previous = export
        finally:
            memory.close()


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Iterator[Figures]:
    figures = Figures()
    yield figures
    label = "soak" if request.node.get_closest_marker("soak") else "default run"
    if "postgres" in request.node.name:
        label = "PostgreSQL + Chroma server"
    if figures.trials:
        emit(request.config, figures.lines(label))


def check(figures: Figures) -> None:
    summary = " | ".join(line.strip() for line in figures.lines("")[2:])
    assert figures.violations == [], f"{summary}\n" + "\n".join(figures.violations[:20])
    assert figures.lost == 0, summary
    assert figures.acknowledged > 0, summary
    assert figures.hooked == len(HOOKED), summary


def test_sigkilled_writers_lose_no_acknowledged_write_and_keep_the_invariants(
    tmp_path: Path, report: Figures
) -> None:
    crash_trials(tmp_path, TRIALS, OPERATIONS, SEED, report)
    assert report.trials == TRIALS
    check(report)


def test_sigkilled_writers_on_postgres_and_a_chroma_server_lose_nothing(
    postgres_url: str, chroma_url: str, tmp_path: Path, report: Figures
) -> None:
    """The same trials on servers: every hooked kill and some random ones."""
    name = f"c{uuid.uuid4().hex[:12]}"
    try:
        location = f"{postgres_url}#{name}|{chroma_url}#{name}"
        crash_trials(tmp_path, SERVER_TRIALS, OPERATIONS, SEED + 2, report, location)
        check(report)
    finally:
        ChromaIndex.connect(chroma_url, prefix=name).drop()
        drop_schema(postgres_url, name)


@pytest.mark.soak
def test_crash_soak(tmp_path: Path, report: Figures, request: pytest.FixtureRequest) -> None:
    if "soak" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("a long soak: run it with -m soak")
    crash_trials(tmp_path, SOAK_TRIALS, SOAK_OPERATIONS, SEED + 1, report)
    check(report)


def test_the_ack_reader_ignores_a_torn_last_line(tmp_path: Path) -> None:
    ack = tmp_path / "acks.jsonl"
    ack.write_text('{"ready": true}\n{"op": "add", "ids": ["a"]}\n{"op": "add", "ids": ["b"')
    assert acknowledged(ack) == (True, ["a"])


def test_the_overlap_check_can_fail() -> None:
    row = VersionRow(1, "f", 1, "default", 1, "", "berlin", 0, OPEN, None, 5, OPEN, None)
    other = replace(row, row_id=2, fact_id="g", value="lisbon", valid_from=10)
    assert overlapping_versions([row, other])
    assert not overlapping_versions([replace(row, valid_to=10), other])
    assert not overlapping_versions([replace(row, retired_at=7), replace(other, recorded_at=7)])
    assert from_instant(row.recorded_at)  # instants, not datetimes, in the rows


def test_history_search_finds_every_version_of_a_repeated_text(tmp_path: Path) -> None:
    memory = TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(64)))
    with memory:
        memory.add_many(
            Fact(
                text=f"Maria lives in {city}",
                subject="Maria",
                relation="lives in",
                object=city,
                valid_from=day(n),
            )
            for n, city in enumerate(["Berlin", "Lisbon"] * 100)
        )
        assert len(memory.history("Maria", "lives in")) == 200
        hits = memory.search("Maria", k=500, include_history=True)
        assert len(hits) == 200
