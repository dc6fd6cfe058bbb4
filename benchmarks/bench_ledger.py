"""Ledger write and read figures (issue 2, "Figures to report"), measured with pytest-benchmark.

Every benchmark runs on an :class:`SQLiteLedger` file under pytest's temporary directory, with a
:class:`ManualClock` (record time) and explicit, aware valid times:

1. ``write`` with one transaction (one commit) per fact, ``durability="full"`` and ``"normal"``;
2. ``write_many`` of a 20,000-fact mixed batch in one transaction;
3. ``as_of`` on one key with 1,000 versions (``known_at`` now and in the past);
4. ``as_of`` and ``current`` for one key on a ledger of 100,000 keys.

``make bench-ledger`` prints pytest-benchmark's table and, at the end of the session, one summary
line per figure (rates in facts/s, latencies per query). Under ``pytest --benchmark-disable``
(``make test``) each workload runs once as a smoke test and its results are checked; no timing
is asserted. See benchmarks/README.md.
"""

from __future__ import annotations

import random
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import count, cycle
from pathlib import Path
from typing import Any

import pytest

from benchmarks.reporting import Timed, record_latency, record_rate
from shared_core import Cardinality, Decision, Fact, ManualClock, SQLiteLedger
from shared_core.ledger import Durability

T0 = datetime(2020, 1, 1, tzinfo=UTC)  # valid times start here
NOW = datetime(2025, 1, 1, tzinfo=UTC)  # the ledger's clock (record time) starts here
HOUR = timedelta(hours=1)

SINGLE_WRITES, SINGLE_KEYS, WRITE_ROUNDS = 1_000, 200, 5
BATCH_ROUNDS = 3
VERSIONS = 1_000
BIG_KEYS, BIG_CHUNK = 100_000, 10_000
RELATIONS = ("lives_in", "works_at", "drives", "speaks", "favourite_colour")
QUERY_SAMPLE = 1_000  # distinct random queries, cycled through while benchmarking
SEED = 20_240_501


def _filesystem(path: Path) -> str:
    """Best effort: the type of the filesystem holding ``path`` (fsync cost depends on it)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    resolved, best, kind = path.resolve(), "", "unknown"
    for line in mounts:
        parts = line.split()
        if len(parts) >= 3 and resolved.is_relative_to(parts[1]) and len(parts[1]) > len(best):
            best, kind = parts[1], parts[2]
    return kind


# ---------------------------------------------------------------- workloads
def _single_write_facts() -> list[Fact]:
    """1,000 facts over 200 keys at increasing valid times: 200 novel, 800 supersessions."""
    return [
        Fact(
            text=f"user {i % SINGLE_KEYS} lives in city {i}",
            subject=f"user-{i % SINGLE_KEYS}",
            relation="lives_in",
            object=f"city-{i}",
            valid_from=T0 + i * HOUR,
            metadata={"source": "bench", "n": i},
        )
        for i in range(SINGLE_WRITES)
    ]


BASE_KEYS, BASE_MANY = 5_000, 1_000


def _base_facts() -> list[Fact]:
    """What the ledger holds before the batch: 5,000 ONE keys and 1,000 MANY values."""
    one = [
        Fact(
            text=f"person {i} lives in the old town",
            subject=f"person-{i}",
            relation="lives_in",
            object="old town",
            valid_from=T0 + (i % 1_000) * HOUR,
        )
        for i in range(BASE_KEYS)
    ]
    many = [
        Fact(
            text=f"person {i} likes tea",
            subject=f"person-{i}",
            relation="likes",
            object="tea",
            valid_from=T0,
        )
        for i in range(BASE_MANY)
    ]
    return one + many


def _batch_facts() -> list[Fact]:
    """20,000 facts, shuffled: 8,000 new keys, 6,000 supersessions of existing keys (1,000 keys
    twice), 3,000 values of a MANY relation and 3,000 prose facts without subject/relation."""
    new_keys = [
        Fact(
            text=f"person {i} lives in city {i % 500}",
            subject=f"person-{i}",
            relation="lives_in",
            object=f"city-{i % 500}",
            valid_from=T0 + (i % 1_000) * HOUR,
        )
        for i in range(BASE_KEYS, BASE_KEYS + 8_000)
    ]
    moves = [
        Fact(
            text=f"person {i % BASE_KEYS} moved to harbour {i}",
            subject=f"person-{i % BASE_KEYS}",
            relation="lives_in",
            object=f"harbour-{i}",
            valid_from=T0 + (1_000 + (i // BASE_KEYS) * 1_000) * HOUR,
        )
        for i in range(6_000)
    ]
    likes = [
        Fact(
            text=f"person {j % BASE_MANY} likes thing {j}",
            subject=f"person-{j % BASE_MANY}",
            relation="likes",
            object=f"thing-{j}",
            valid_from=T0 + (j % 1_000) * HOUR,
        )
        for j in range(3_000)
    ]
    prose = [
        Fact(
            text=f"note {j}: the meeting about project {j % 97} moved to room {j % 13}",
            valid_from=T0 + j * timedelta(minutes=1),
            metadata={"source": "notes"},
        )
        for j in range(3_000)
    ]
    facts = new_keys + moves + likes + prose
    random.Random(SEED).shuffle(facts)
    return facts


def _build_base_ledger(path: Path) -> None:
    with SQLiteLedger(path, clock=ManualClock(NOW - timedelta(days=1))) as ledger:
        ledger.declare("likes", Cardinality.MANY)
        ledger.write_many(_base_facts())


# ---------------------------------------------------------------- 1. single writes
@pytest.mark.benchmark(group="ledger write: 1,000 facts, one transaction each")
@pytest.mark.parametrize("durability", ["full", "normal"])
def test_write_one_transaction_per_fact(
    benchmark: Any, tmp_path: Path, figures: list[str], durability: Durability
) -> None:
    facts = _single_write_facts()
    opened: list[SQLiteLedger] = []
    names = count()

    def fresh_ledger() -> tuple[tuple[SQLiteLedger], dict[str, Any]]:
        path = tmp_path / f"single-{next(names)}.sqlite"
        ledger = SQLiteLedger(path, clock=ManualClock(NOW), durability=durability)
        opened.append(ledger)
        return (ledger,), {}

    def write_each(ledger: SQLiteLedger) -> list[Any]:
        return [ledger.write(fact) for fact in facts]

    timed = Timed(write_each)
    try:
        results = benchmark.pedantic(timed, setup=fresh_ledger, rounds=WRITE_ROUNDS)
    finally:
        for ledger in opened:
            ledger.close()
    assert Counter(r.decision for r in results) == {
        Decision.NOVEL: SINGLE_KEYS,
        Decision.SUPERSEDED: SINGLE_WRITES - SINGLE_KEYS,
    }
    filesystem = _filesystem(tmp_path)
    record_rate(
        benchmark,
        figures,
        timed,
        f"write, one commit each (durability={durability}, {filesystem})",
        SINGLE_WRITES,
        durability=durability,
        keys=SINGLE_KEYS,
        filesystem=filesystem,
    )


# ---------------------------------------------------------------- 2. write_many
@pytest.fixture(scope="module")
def base_ledger_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench-batch") / "base.sqlite"
    _build_base_ledger(path)
    return path


@pytest.mark.benchmark(group="ledger write_many: 20,000 facts in one transaction")
def test_write_many_mixed_batch(
    benchmark: Any, tmp_path: Path, figures: list[str], base_ledger_file: Path
) -> None:
    facts = _batch_facts()
    opened: list[SQLiteLedger] = []
    names = count()

    def fresh_copy() -> tuple[tuple[SQLiteLedger], dict[str, Any]]:
        path = tmp_path / f"batch-{next(names)}.sqlite"
        shutil.copyfile(base_ledger_file, path)
        ledger = SQLiteLedger(path, clock=ManualClock(NOW))
        opened.append(ledger)
        return (ledger,), {}

    def write_batch(ledger: SQLiteLedger) -> list[Any]:
        return ledger.write_many(facts)

    timed = Timed(write_batch)
    try:
        results = benchmark.pedantic(timed, setup=fresh_copy, rounds=BATCH_ROUNDS)
    finally:
        for ledger in opened:
            ledger.close()
    assert len(results) == len(facts)
    assert Counter(r.decision for r in results) == {
        Decision.NOVEL: 14_000,
        Decision.SUPERSEDED: 6_000,
    }
    record_rate(
        benchmark,
        figures,
        timed,
        "write_many, one transaction (mixed batch)",
        len(facts),
        mix="8k new keys, 6k supersessions, 3k MANY values, 3k prose; 6k facts stored before",
    )


# ---------------------------------------------------------------- 3. one key, 1,000 versions
@pytest.fixture(scope="module")
def thousand_versions(
    tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> Iterator[SQLiteLedger]:
    """One key with 1,000 versions (one write_many of superseding facts), recorded at NOW; the
    clock then moves on a day, so ``known_at=NOW + 1h`` is a past record time."""
    path = tmp_path_factory.mktemp("bench-versions") / "versions.sqlite"
    clock = ManualClock(NOW)
    ledger = SQLiteLedger(path, clock=clock)
    facts = [
        Fact(
            text=f"ada lives in city {i}",
            subject="Ada",
            relation="lives in",
            object=f"city-{i}",
            valid_from=T0 + i * HOUR,
        )
        for i in range(VERSIONS)
    ]
    start = time.perf_counter()
    ledger.write_many(facts)
    seconds = time.perf_counter() - start
    figures.append(
        f"  build: 1 key x {VERSIONS:,} versions, one write_many: {seconds:.2f} s "
        f"({VERSIONS / seconds:,.0f} facts/s)"
    )
    clock.set(NOW + timedelta(days=1))
    yield ledger
    ledger.close()


@pytest.mark.benchmark(group="ledger as_of: one key with 1,000 versions")
@pytest.mark.parametrize("known", ["now", "past"])
def test_as_of_one_key_many_versions(
    benchmark: Any, figures: list[str], thousand_versions: SQLiteLedger, known: str
) -> None:
    rng = random.Random(SEED)
    times = cycle([T0 + rng.uniform(0, VERSIONS) * HOUR for _ in range(QUERY_SAMPLE)])
    known_at = None if known == "now" else NOW + HOUR

    def query() -> list[Fact]:
        return thousand_versions.as_of(
            valid_at=next(times), known_at=known_at, subject="ada", relation="lives_in"
        )

    timed = Timed(query)
    answer = benchmark(timed)
    assert len(answer) == 1
    assert answer[0].subject == "Ada"
    record_latency(
        benchmark,
        figures,
        timed,
        f"as_of, 1 key x {VERSIONS:,} versions, known_at={'None' if known_at is None else 'past'}",
        versions=VERSIONS,
        known_at=known,
    )


# ---------------------------------------------------------------- 4. 100,000 keys
@pytest.fixture(scope="module")
def hundred_thousand_keys(
    tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> Iterator[SQLiteLedger]:
    """100,000 keys (20,000 subjects x 5 relations), one version each, written with write_many
    in chunks of 10,000."""
    path = tmp_path_factory.mktemp("bench-keys") / "keys.sqlite"
    ledger = SQLiteLedger(path, clock=ManualClock(NOW))
    start = time.perf_counter()
    for first in range(0, BIG_KEYS, BIG_CHUNK):
        ledger.write_many(
            Fact(
                text=f"person {i // len(RELATIONS)} {RELATIONS[i % len(RELATIONS)]} {i}",
                subject=f"person-{i // len(RELATIONS)}",
                relation=RELATIONS[i % len(RELATIONS)],
                object=f"value-{i}",
                valid_from=T0 + (i % 1_000) * HOUR,
            )
            for i in range(first, first + BIG_CHUNK)
        )
    seconds = time.perf_counter() - start
    figures.append(
        f"  build: {BIG_KEYS:,} keys, write_many in chunks of {BIG_CHUNK:,}: {seconds:.2f} s "
        f"({BIG_KEYS / seconds:,.0f} facts/s)"
    )
    yield ledger
    ledger.close()


def _random_keys() -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    picks = [rng.randrange(BIG_KEYS) for _ in range(QUERY_SAMPLE)]
    return [(f"person-{i // len(RELATIONS)}", RELATIONS[i % len(RELATIONS)]) for i in picks]


@pytest.mark.benchmark(group="ledger one key on 100,000 keys")
def test_as_of_one_key_among_100k(
    benchmark: Any, figures: list[str], hundred_thousand_keys: SQLiteLedger
) -> None:
    rng = random.Random(SEED + 1)
    span = (NOW - T0) / HOUR - 1_000
    queries = cycle([(key, T0 + (1_000 + rng.uniform(0, span)) * HOUR) for key in _random_keys()])

    def query() -> list[Fact]:
        (subject, relation), valid_at = next(queries)
        return hundred_thousand_keys.as_of(valid_at=valid_at, subject=subject, relation=relation)

    timed = Timed(query)
    answer = benchmark(timed)
    assert len(answer) == 1
    record_latency(
        benchmark,
        figures,
        timed,
        f"as_of, 1 key (subject+relation) on {BIG_KEYS:,} keys",
        keys=BIG_KEYS,
    )


@pytest.mark.benchmark(group="ledger one key on 100,000 keys")
def test_current_one_key_among_100k(
    benchmark: Any, figures: list[str], hundred_thousand_keys: SQLiteLedger
) -> None:
    keys = cycle(_random_keys())

    def query() -> list[Fact]:
        subject, relation = next(keys)
        return hundred_thousand_keys.current(subject=subject, relation=relation)

    timed = Timed(query)
    answer = benchmark(timed)
    assert len(answer) == 1
    record_latency(
        benchmark,
        figures,
        timed,
        f"current, 1 key (subject+relation) on {BIG_KEYS:,} keys",
        keys=BIG_KEYS,
    )
