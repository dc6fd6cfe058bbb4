"""How the ledger's costs grow with its size (issue 17, "cost growth"), for the SQLite file and
PostgreSQL, measured with pytest-benchmark.

One seeded history is built once per size in memory (keys whose values change again and again:
each change retires one version row and adds two, so about half the rows end up retired), then
copied into each ledger with ``Ledger.load`` (not timed). On each ledger: ``current`` and
``as_of`` (a past valid time, as known at a past record time) for one key, cycling through
random keys; ``list_visible_rows`` at random past times (a scan, reported beside the reads);
and single writes that supersede a key's value (one commit each). Sizes are
GROWTH_SIZES version rows (default 10,000 and 100,000; ``GROWTH_SIZES=10000,100000,1000000
make bench-growth`` adds a million, about 10 minutes more). The aim: reads grow at most
logarithmically (the largest no more than 2 x the smallest), writes stay constant per fact.
At the end: a table of the three figures per ledger and size, each also as a multiple of the
smallest size, and a plot of the same (``GROWTH_PLOT``, default build/bench-growth/growth.png).
Under ``--benchmark-disable`` (``make test``) one small size runs once as a smoke test (the plot
goes to pytest's temporary directory).
"""

from __future__ import annotations

import os
import random
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import count, cycle
from pathlib import Path
from typing import Any

import pytest

from benchmarks.reporting import (
    Growth,
    Timed,
    growth_report,
    median_seconds,
    plot_path,
    record_latency,
    record_rate,
)
from shared_core import Fact, Ledger, ManualClock, PostgresLedger, SQLiteLedger
from shared_core.clock import OPEN, from_instant
from shared_core.ledger.records import LedgerDump
from tests.servers import drop_schema

T0 = datetime(2000, 1, 1, tzinfo=UTC)
STEP = timedelta(minutes=1)  # between changes: a million rows end in 2000, before NOW and today
NOW = datetime(2025, 1, 1, tzinfo=UTC)
KEY_SHARE = 20  # about one key per 20 version rows: ~10 changes per key
SIZES = tuple(int(n) for n in os.environ.get("GROWTH_SIZES", "10000,100000").split(","))
SMOKE_SIZE = 2_000
QUERIES, WRITES, ROUNDS, LISTINGS = 500, 200, 5, 50
SEED = 1_717
WRITES_PER_S = "single writes (/s)"
GROWTH: Growth = {}


@cache
def history(size: int) -> LedgerDump:
    """A ledger of about ``size`` version rows, as a dump (built once per size, in a scratch
    SQLite file: the in-memory fake scans its rows on each write)."""
    rng = random.Random(SEED)
    keys = max(1, size // KEY_SHARE)
    clock = ManualClock(NOW)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder) / "history.sqlite"
        with SQLiteLedger(scratch, clock=clock, durability="normal") as ledger:
            _write_history(ledger, clock, rng, keys, size)
            return ledger.dump()


def _write_history(
    ledger: Ledger, clock: ManualClock, rng: random.Random, keys: int, size: int
) -> None:
    facts = size // 2  # a change adds two rows (and retires one) once a key has a value
    for start in range(0, facts, 1_000):
        batch = []
        for n in range(start, min(start + 1_000, facts)):
            key = rng.randrange(keys)
            batch.append(
                Fact(
                    text=f"user {key} lives in city {n}",
                    subject=f"user-{key}",
                    relation="lives_in",
                    object=f"city-{n}",
                    valid_from=T0 + n * STEP,
                )
            )
        ledger.write_many(batch)
        clock.advance(timedelta(seconds=1))


def open_store(store: str, tmp_path: Path, postgres: str | None) -> tuple[Ledger, str]:
    """A new, empty ledger of the kind asked: (the ledger, the schema to drop or "")."""
    clock = ManualClock(NOW + timedelta(days=1))
    if store == "postgres":
        assert postgres is not None
        schema = f"g_{uuid.uuid4().hex[:12]}"
        return PostgresLedger(postgres, schema=schema, clock=clock), schema
    return SQLiteLedger(tmp_path / "ledger.sqlite", clock=clock, durability="normal"), ""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def loaded(
    store: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, size: int
) -> Iterator[tuple[Ledger, LedgerDump]]:
    """The history of ``size`` rows in a new ledger of the store's kind (shared by the tests of
    one size: the reads come first, then the writes add a few rows)."""
    postgres = request.getfixturevalue("postgres_url") if store == "postgres" else None
    dump = history(size)
    ledger, schema = open_store(store, tmp_path_factory.mktemp("growth"), postgres)
    try:
        ledger.load(dump)
        yield ledger, dump
    finally:
        ledger.close()
        if schema and postgres is not None:
            drop_schema(postgres, schema)


@pytest.fixture(scope="module", autouse=True)
def growth(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> Iterator[None]:
    """After the last size: the growth table and plot of every figure."""
    yield
    scratch = tmp_path_factory.mktemp("bench-growth-plot") / "growth.png"
    plot = plot_path(request.config, "GROWTH_PLOT", "build/bench-growth/growth.png", scratch)
    growth_report(figures, "ledger reads of one key and single writes", GROWTH, plot)


def sizes(config: Any) -> list[int]:
    return [SMOKE_SIZE] if config.getoption("benchmark_disable") else list(SIZES)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "size" in metafunc.fixturenames:
        metafunc.parametrize("size", sizes(metafunc.config), scope="module")


def _label(store: str, dump: LedgerDump, what: str) -> str:
    retired = sum(1 for v in dump.versions if v.retired_at < OPEN)
    return f"{store}, {len(dump.versions):,} version rows ({retired:,} retired): {what}"


@pytest.mark.benchmark(group="cost growth: reads of one key")
@pytest.mark.parametrize("read", ["current", "as_of"])
def test_reads_of_one_key(
    benchmark: Any,
    figures: list[str],
    loaded: tuple[Ledger, LedgerDump],
    store: str,
    size: int,
    read: str,
) -> None:
    ledger, dump = loaded
    rng = random.Random(SEED + 1)
    keys = [key for _, key in dump.keys]
    past = NOW - timedelta(days=rng.randrange(1, 300))
    asked = cycle(rng.sample(keys, min(QUERIES, len(keys))))

    def one() -> list[Fact]:
        key = next(asked)
        if read == "current":
            return ledger.current(subject=key.subject, relation=key.relation)
        valid = T0 + rng.randrange(len(dump.statements)) * STEP
        return ledger.as_of(
            valid_at=valid, known_at=past, subject=key.subject, relation=key.relation
        )

    timed = Timed(one)
    benchmark.pedantic(timed, rounds=QUERIES, iterations=1)
    assert ledger.current(subject=keys[0].subject, relation=keys[0].relation)
    label = _label(store, dump, read)
    record_latency(benchmark, figures, timed, label, store=store, size=len(dump.versions))
    row = GROWTH.setdefault((store, len(dump.versions)), {})
    row[f"{read} (us)"] = 1e6 * median_seconds(benchmark, timed)[0]


@pytest.mark.benchmark(group="cost growth: listing the visible rows")
def test_listing_the_visible_rows(
    benchmark: Any,
    figures: list[str],
    loaded: tuple[Ledger, LedgerDump],
    store: str,
    size: int,
) -> None:
    """``list_visible_rows`` at random past times, limit a tenth of the rows (what an as-of
    search asks when few rows are visible): a scan of the namespace, not a read of one key,
    so it grows with the ledger; reported beside the reads, not held to their aim."""
    ledger, dump = loaded
    rng = random.Random(SEED + 3)
    span = max(1, (max(v.recorded_at for v in dump.versions) - dump.versions[0].recorded_at))
    first = from_instant(dump.versions[0].recorded_at)
    limit = len(dump.versions) // 10
    listed: list[int | None] = []

    def one() -> None:
        known = first + timedelta(microseconds=rng.randrange(span))
        valid = T0 + rng.randrange(len(dump.statements)) * STEP
        found = ledger.list_visible_rows(
            namespace="default", valid_at=valid, known_at=known, limit=limit
        )
        listed.append(None if found is None else len(found))

    timed = Timed(one)
    benchmark.pedantic(timed, rounds=LISTINGS, iterations=1)
    counted = [n for n in listed if n is not None]
    label = _label(store, dump, f"list_visible_rows, limit {limit:,}")
    record_latency(benchmark, figures, timed, label, store=store, size=len(dump.versions))
    figures.append(
        f"    {len(counted)} of {len(listed)} calls listed (at most {max(counted, default=0):,} "
        f"rows), the others stopped at the limit"
    )
    row = GROWTH.setdefault((store, len(dump.versions)), {})
    row["list visible rows (us)"] = 1e6 * median_seconds(benchmark, timed)[0]


@pytest.mark.benchmark(group="cost growth: single writes")
def test_single_writes(
    benchmark: Any,
    figures: list[str],
    loaded: tuple[Ledger, LedgerDump],
    store: str,
    size: int,
) -> None:
    ledger, dump = loaded
    rng = random.Random(SEED + 2)
    keys = [key for _, key in dump.keys]
    changes = count(len(dump.statements) + 1)

    def writes() -> None:
        for _ in range(WRITES):
            n, key = next(changes), rng.choice(keys)
            ledger.write(
                Fact(
                    text=f"{key.subject} lives in city {n}",
                    subject=key.subject,
                    relation=key.relation,
                    object=f"city-{n}",
                    valid_from=T0 + n * STEP,
                )
            )

    timed = Timed(writes)
    benchmark.pedantic(timed, rounds=ROUNDS, iterations=1)
    record_rate(
        benchmark,
        figures,
        timed,
        _label(store, dump, "single writes"),
        WRITES,
        store=store,
        size=len(dump.versions),
    )
    row = GROWTH.setdefault((store, len(dump.versions)), {})
    row[WRITES_PER_S] = WRITES / median_seconds(benchmark, timed)[0]
