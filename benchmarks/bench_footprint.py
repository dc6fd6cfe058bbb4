"""Resident memory of one process holding a memory of N fact versions (issue 17, "memory"),
embedded (an SQLite ledger file and a Chroma folder) and on servers (PostgreSQL and ``chroma
run``, the ``postgres_url`` and ``chroma_url`` fixtures).

The store is built once per place, fast and not measured: the seeded history of
``bench_growth.py`` (N version rows, about half of them retired) is stored with
``Ledger.load``, then the ledger's change feed is applied to a ``ChromaIndex`` with random
384-dimensional vectors (no text is embedded). Then a fresh process
(``benchmarks/footprint_probe.py``) imports the library, opens ``TemporalMemory.connect`` on the
store with a hashing embedder (no model), runs 20 current-state searches and reports its
resident memory (VmRSS and its peak VmHWM, /proc/self/status) before importing, after the
imports (the baseline), after opening and after searching: the increment over the baseline is
what holding the memory costs. On servers, the Chroma server's own resident memory is read too
(/proc/PID/status; only for a server the fixture started). The benchmark's time is that
process's whole run (start, imports, open, searches), one round.

N is ``FOOTPRINT_SIZE`` (default 100,000, about 10 minutes; ``FOOTPRINT_SIZE=1000000`` takes
about an hour per place more on 2 shared cores, most of it inserting into Chroma) and
``FOOTPRINT_PLACES`` the places (default ``embedded,server``). Under ``--benchmark-disable``
(``make test``) N is 2,000 and the probe still runs once per place, its searches checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.bench_growth import history
from benchmarks.footprint_probe import DIM, EMBEDDER, status
from benchmarks.reporting import Timed
from shared_core import ChromaIndex, Ledger, PostgresLedger, SQLiteLedger
from shared_core.clock import OPEN
from shared_core.ledger.records import LedgerDump
from shared_core.ledger.results import ChangeCursor
from tests.servers import chroma_server_pid, drop_schema

pytest.importorskip("chromadb")

SIZE = int(os.environ.get("FOOTPRINT_SIZE", "100000"))
SMOKE_SIZE = 2_000
PLACES = os.environ.get("FOOTPRINT_PLACES", "embedded,server").split(",")
SEARCHES, PAGE, SEED = 20, 10_000, 4_242
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Store:
    """A built memory: where its ledger and index are, and how to name them."""

    where: str
    ledger: str
    index: str
    schema: str = "temporal_rag"
    prefix: str = "temporal_rag"
    server_pid: int | None = None
    server_mb: tuple[float, float] = (0.0, 0.0)  # the Chroma server's RSS: before, after build


@pytest.fixture(scope="module")
def dump(request: pytest.FixtureRequest, figures: list[str]) -> LedgerDump:
    size = SMOKE_SIZE if request.config.getoption("benchmark_disable") else SIZE
    start = time.perf_counter()
    built = history(size)
    retired = sum(1 for v in built.versions if v.retired_at < OPEN)
    figures.append(
        f"  history: {len(built.versions):,} version rows ({retired:,} retired), "
        f"{len(built.statements):,} statements, built in {time.perf_counter() - start:.1f} s"
    )
    return built


def mirror(ledger: Ledger, index: ChromaIndex, rows: int) -> int:
    """Apply the change feed of a ledger of ``rows`` version rows to ``index``, with random
    vectors; the rows applied.

    The feed is read as one page and applied in batches (the build is not what is measured)."""
    rng = np.random.default_rng(SEED)
    index.bind(embedder=EMBEDDER, dimension=DIM)
    feed = ledger.changes(ChangeCursor(), limit=rows + 1)
    assert not feed.more
    records = feed.records
    for start in range(0, len(records), PAGE):
        batch = records[start : start + PAGE]
        ids = sorted({r.fact_id for r in batch})
        vectors = dict(zip(ids, rng.standard_normal((len(ids), DIM)), strict=True))
        last = start + PAGE >= len(records)
        cursor = feed.cursor if last else ChangeCursor(batch[-1].row_id, 0)
        index.apply(batch, vectors, cursor)
    return len(records)


def _built(ledger: Ledger, index: ChromaIndex, dump: LedgerDump) -> None:
    try:
        ledger.load(dump)
        mirror(ledger, index, len(dump.versions))
    finally:
        index.close()
        ledger.close()


@pytest.fixture(scope="module", params=PLACES)
def store(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    dump: LedgerDump,
    figures: list[str],
) -> Iterator[Store]:
    start = time.perf_counter()
    if request.param == "embedded":
        folder = tmp_path_factory.mktemp("footprint")
        ledger, index = folder / "ledger.sqlite", folder / "index"
        _built(SQLiteLedger(ledger, durability="normal"), ChromaIndex(index), dump)
        yield _report_build(Store("embedded", str(ledger), str(index)), start, figures, folder)
        return
    postgres, chroma = (
        request.getfixturevalue("postgres_url"),
        request.getfixturevalue("chroma_url"),
    )
    tag, pid = f"fp_{uuid.uuid4().hex[:12]}", chroma_server_pid(chroma)
    before = status(pid)["rss_mb"] if pid is not None else 0.0
    try:
        _built(PostgresLedger(postgres, schema=tag), ChromaIndex.connect(chroma, prefix=tag), dump)
        after = status(pid)["rss_mb"] if pid is not None else 0.0
        built = Store("server", postgres, chroma, tag, tag, pid, (before, after))
        yield _report_build(built, start, figures, None)
    finally:
        ChromaIndex.connect(chroma, prefix=tag).drop()
        drop_schema(postgres, tag)


def _report_build(built: Store, start: float, figures: list[str], folder: Path | None) -> Store:
    line = f"  build, {built.where}: load + index in {time.perf_counter() - start:.1f} s"
    if folder is not None:
        on_disk = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        line += f"; {on_disk / 2**20:,.0f} MB on disk"
    figures.append(line)
    return built


def _probe(built: Store) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.footprint_probe", built.ledger, built.index]
    command += ["--schema", built.schema, "--prefix", built.prefix, "--searches", str(SEARCHES)]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=3_600, check=False
    )
    assert done.returncode == 0, done.stderr[-4_000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.benchmark(group="memory footprint")
def test_resident_memory(
    benchmark: Any, figures: list[str], store: Store, dump: LedgerDump
) -> None:
    timed = Timed(_probe)
    report = benchmark.pedantic(timed, args=(store,), rounds=1, iterations=1)
    assert report["hits"], report
    assert all(report["hits"]), report["hits"]  # every search found something
    assert report["reconciled"] == 0  # the index mirrors the ledger: nothing to catch up
    server = status(store.server_pid) if store.server_pid is not None else None
    base, held = report["imported"]["rss_mb"], report["searched"]["rss_mb"]
    benchmark.extra_info.update(
        where=store.where,
        versions=len(dump.versions),
        bare_mb=round(report["bare"]["rss_mb"], 1),
        imported_mb=round(base, 1),
        opened_mb=round(report["opened"]["rss_mb"], 1),
        searched_mb=round(held, 1),
        peak_mb=round(report["searched"]["hwm_mb"], 1),
        server_mb=None if server is None else round(server["rss_mb"], 1),
    )
    figures.extend(_lines(store, report, server, len(dump.versions)))


def _lines(
    store: Store, report: dict[str, Any], server: dict[str, float] | None, versions: int
) -> list[str]:
    base = report["imported"]["rss_mb"]
    lines = [
        f"  {store.where}, {versions:,} version rows: one process, resident memory (MB): "
        f"bare interpreter {report['bare']['rss_mb']:,.0f}, library imported "
        f"{base:,.0f} (the baseline), opened {report['opened']['rss_mb']:,.0f} "
        f"(+{report['opened']['rss_mb'] - base:,.0f}), after {SEARCHES} searches "
        f"{report['searched']['rss_mb']:,.0f} (+{report['searched']['rss_mb'] - base:,.0f}); "
        f"peak {report['searched']['hwm_mb']:,.0f}",
        f"    open {report['open_s']:.2f} s, {SEARCHES} searches {report['search_s']:.2f} s",
    ]
    if store.where == "server":
        if server is None:
            lines.append("    Chroma server: not started by this session, its memory not read")
        else:
            before, after = store.server_mb
            lines.append(
                f"    Chroma server process, resident memory (MB): {before:,.0f} before the "
                f"build, {after:,.0f} after it, {server['rss_mb']:,.0f} after the searches "
                f"(peak {server['hwm_mb']:,.0f})"
            )
    return lines
