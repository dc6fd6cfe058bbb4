"""Vector index figures: what the live/all layout of :class:`ChromaIndex` buys, and how its
cost grows with the number of records (issues 4 and 17).

Built once per case, a case being where the index lives and its size: ``embedded`` (a
``PersistentClient`` folder in pytest's temporary directory) or ``server`` (``chroma run``, the
``chroma_url`` fixture: ``ChromaIndex.connect`` and a plain collection on the same server, under
names of their own, deleted after the case), as ``INDEX_PLACES`` lists them (default
``embedded,server``), at each size of ``INDEX_SIZES`` (default ``10000,100000``; a million is
opt-in: inserting 2 x 1M records takes about an hour per place on 2 cores, see
benchmarks/README.md; ``INDEX_REUSE=folder`` keeps builds for later runs). A size of N records
holds N / 2 keys, dimension 384. Each key has an older version, retired (corrected) in record
time, and a current one; both are the key's random direction plus a little noise, so every
current record has a stale near-duplicate, as in agent memory. Then, k = 10, on every case:

1. ``ChromaIndex.search`` of the current state (valid now, known now): the fast path;
2. a raw, unfiltered Chroma query on a plain collection of the same N records (the floor this
   library cannot beat), and the ratio 1 / 2 (the aim is <= 1.5, at a million too): the ratio
   of the two medians, and the median ratio of 200 back-to-back pairs of calls (the same
   query vector each; steadier when other jobs load the machine);
3. the same raw query with ``where retired_at == OPEN``: what one filtered collection costs;
4. ``ChromaIndex.search`` as of the past (random ``valid_at`` and ``known_at``): unfiltered
   over-fetching when it settles the answer, else filtered queries (the mean and p90 show how
   often that happens); then the same searches as ``TemporalMemory`` makes them, by row ids
   alone with the caller checking visibility and listing the visible rows when few are (here
   the caller knows them in closed form: the ledger's part, one SQL query, is not counted);
5. ``apply`` of 1,000 supersessions (1,000 rows leave live and are updated in all, 1,000 arrive).

At the end: a table of 1 and 2 and both ratios per case, each also as a multiple of the
smallest size, and a plot of the same (``INDEX_PLOT``, default build/bench-index/growth.png).
Under ``--benchmark-disable`` (``make test``) one size of 2,000 records runs, embedded and on
the server, every workload once as a smoke test (results checked, no timing asserted; the plot
goes to pytest's temporary directory).
"""

from __future__ import annotations

import os
import random
import statistics
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import count, cycle, islice
from pathlib import Path
from typing import Any

import numpy as np
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
from shared_core.clock import OPEN
from shared_core.index import chroma, chroma_client
from shared_core.index.chroma_records import to_metadata
from shared_core.ledger.results import ChangeCursor, VersionRecord
from tests.servers import close_chroma_client

pytest.importorskip("chromadb")

SIZES = tuple(int(n) for n in os.environ.get("INDEX_SIZES", "10000,100000").split(","))
SMOKE = 2_000
PLACES = tuple(os.environ.get("INDEX_PLACES", "embedded,server").split(","))
REUSE = os.environ.get("INDEX_REUSE")  # a folder: embedded builds are kept there and reused
DIM, K, BATCH, QUERIES, MOVES = 384, 10, 10_000, 200, 1_000
NOISE = 0.15  # per-coordinate noise around a key's direction, relative to 1/sqrt(DIM)
SECOND = 1_000_000
T0 = 1_577_836_800 * SECOND  # 2020-01-01: valid times of the old versions start here
T1 = T0 + 365 * 86_400 * SECOND  # 2021-01-01: the current versions
R0 = T1 + 365 * 86_400 * SECOND  # record times of the old versions, then the corrections
NOW = R0 + 365 * 86_400 * SECOND
SEED = 20_240_501
CURRENT, RAW, RATIO = "current-state (us)", "unfiltered (us)", "ratio"
PAIRED = "paired ratio"
GROWTH: Growth = {}


@dataclass
class Built:
    index: chroma.ChromaIndex
    plain: Any  # a chromadb Collection
    queries: Any  # QUERIES x DIM query vectors
    records: dict[int, VersionRecord]
    size: int
    where: str

    @property
    def case(self) -> str:
        return f"{self.where}, {self.size:,} records"


def _records(keys: int) -> list[VersionRecord]:
    """Row 2i+1: key i's old version, retired; row 2i+2: its current version."""
    out = []
    for i in range(keys):
        old_at, new_at = R0 + i * SECOND, R0 + (keys + i) * SECOND
        out.append(
            VersionRecord(
                2 * i + 1, f"old-{i}", "default", f"key {i} was", T0 + i, OPEN, old_at, new_at
            )
        )
        out.append(
            VersionRecord(
                2 * i + 2, f"new-{i}", "default", f"key {i} is", T1 + i, OPEN, new_at, OPEN
            )
        )
    return out


def _vectors(keys: int, rng: Any) -> tuple[Any, Any]:
    """(record vectors in row order, query vectors): noisy copies of each key's direction."""
    base = rng.standard_normal((keys, DIM)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    scale = NOISE / np.sqrt(DIM)
    rows = np.repeat(base, 2, axis=0) + scale * rng.standard_normal((2 * keys, DIM)).astype(
        np.float32
    )
    picks = rng.integers(0, keys, QUERIES)
    queries = base[picks] + scale * rng.standard_normal((QUERIES, DIM)).astype(np.float32)
    return rows, queries


def _build_index(index: Any, records: list[VersionRecord], vectors: Any) -> None:
    index.bind(embedder="random-384", dimension=DIM)
    for start in range(0, len(records), BATCH):
        batch = records[start : start + BATCH]
        given = {r.fact_id: vectors[start + i] for i, r in enumerate(batch)}
        index.apply(batch, given, ChangeCursor(batch[-1].row_id, 0))


def _build_plain(client: Any, name: str, records: list[VersionRecord], vectors: Any) -> Any:
    """One plain collection of every record, as a naive single-collection design keeps them."""
    plain = client.create_collection(
        name,
        configuration={"hnsw": {"space": "cosine"}},
        embedding_function=chroma_client.precomputed_embedding_function(),
    )
    step = min(client.get_max_batch_size(), chroma_client.PAGE)
    for start in range(0, len(records), step):
        batch = records[start : start + step]
        plain.add(
            ids=[str(r.row_id) for r in batch],
            embeddings=vectors[start : start + step],
            documents=[r.text for r in batch],
            metadatas=[to_metadata(r) for r in batch],
        )
    return plain


def _kept(index: Any, client: Any, name: str, size: int) -> Any:
    """The plain collection of a build kept under INDEX_REUSE, when both it and the index
    were built whole, else None (and a partial plain collection is deleted). A kept index
    also holds the rows of earlier runs' ``apply`` rounds (new ids, valid and known from NOW:
    invisible to every past search)."""
    if not REUSE or size <= SMOKE:
        return None
    plain = None
    if name in {c.name for c in client.list_collections()}:
        plain = client.get_collection(
            name, embedding_function=chroma_client.precomputed_embedding_function()
        )
        if plain.count() < size:
            client.delete_collection(name)
            plain = None
    cursor = index.cursor()
    return plain if cursor.after_row >= size else None


def _http_client(url: str) -> Any:
    parts = urllib.parse.urlsplit(url)
    return chroma_client.chromadb_module().HttpClient(host=parts.hostname, port=parts.port or 8000)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        sizes = [SMOKE] if metafunc.config.getoption("benchmark_disable") else list(SIZES)
        cases = [(where, size) for where in PLACES for size in sizes]
        ids = [f"{where}-{size}" for where, size in cases]
        metafunc.parametrize("case", cases, ids=ids, scope="module")


@pytest.fixture(scope="module")
def place(
    case: tuple[str, int], request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, Any, str]]:
    """(a new, empty ChromaIndex, a Chroma client for the plain collection, its name) where
    the case says; on the server, every collection made here is deleted after the case, unless
    INDEX_REUSE keeps it (under fixed names: run against a server of your own, kept running,
    given by TEMPORAL_RAG_CHROMA_URL)."""
    where, size = case
    if where == "embedded":
        folder = tmp_path_factory.mktemp("bench-index")
        if REUSE and size > SMOKE:
            folder = Path(REUSE) / f"embedded-{size}"
            folder.mkdir(parents=True, exist_ok=True)
        index = chroma.ChromaIndex(folder / "index")
        yield index, chroma_client.persistent_client(folder / "plain"), "plain"
        index.close()
        return
    url = request.getfixturevalue("chroma_url")
    keep = bool(REUSE) and size > SMOKE
    tag = f"bench_{size}" if keep else f"bench_{size}_{uuid.uuid4().hex[:8]}"
    index, client = chroma.ChromaIndex.connect(url, prefix=tag), _http_client(url)
    try:
        yield index, client, f"{tag}_plain"
    finally:
        if keep:
            index.close()
        else:
            index.drop()
            if f"{tag}_plain" in {c.name for c in client.list_collections()}:
                client.delete_collection(f"{tag}_plain")
        close_chroma_client(client)


@pytest.fixture(scope="module")
def built(case: tuple[str, int], place: tuple[Any, Any, str], figures: list[str]) -> Built:
    where, size = case
    index, client, name = place
    records = _records(size // 2)
    vectors, queries = _vectors(size // 2, np.random.default_rng(SEED))
    kept = _kept(index, client, name, size)
    if kept is not None:
        for vector in islice(_cycled(queries), QUERIES):  # warm both, as a build leaves them
            index.search(vector, k=K, namespace="default", valid_at=NOW, known_at=None)
            kept.query(query_embeddings=[vector], n_results=K, include=["distances"])
        figures.append(f"  build, {where}: {size:,} records reused from INDEX_REUSE (warmed)")
        return Built(index, kept, queries, {r.row_id: r for r in records}, size, where)
    start = time.perf_counter()
    _build_index(index, records, vectors)
    middle = time.perf_counter()
    plain = _build_plain(client, name, records, vectors)
    end = time.perf_counter()
    figures.append(
        f"  build, {where}: ChromaIndex.apply of {size:,} records (half retired) in batches of "
        f"{BATCH:,}: {middle - start:.1f} s ({size / (middle - start):,.0f}/s); "
        f"plain collection of {size:,}: {end - middle:.1f} s"
    )
    return Built(index, plain, queries, {r.row_id: r for r in records}, size, where)


@pytest.fixture(scope="module", autouse=True)
def growth(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> Iterator[None]:
    """After the last case: the growth table and plot of the current-state / unfiltered ratio."""
    yield
    scratch = tmp_path_factory.mktemp("bench-index-plot") / "growth.png"
    plot = plot_path(request.config, "INDEX_PLOT", "build/bench-index/growth.png", scratch)
    growth_report(figures, "Chroma search, k=10, current state vs unfiltered", GROWTH, plot)


def _cycled(queries: Any) -> Iterator[list[float]]:
    return cycle([q.tolist() for q in queries])


@pytest.mark.benchmark(group="index search, k=10")
def test_current_state_search(benchmark: Any, figures: list[str], built: Built) -> None:
    queries = _cycled(built.queries)

    def search() -> list[Any]:
        return built.index.search(
            next(queries), k=K, namespace="default", valid_at=NOW, known_at=None
        )

    timed = Timed(search)
    found = benchmark(timed)
    assert len(found) == K
    assert all(built.records[m.row_id].retired_at == OPEN for m in found)
    GROWTH.setdefault((built.where, built.size), {})[CURRENT] = (
        1e6 * (median_seconds(benchmark, timed)[0])
    )
    record_latency(
        benchmark,
        figures,
        timed,
        f"ChromaIndex.search, current state, {built.case}",
        records=built.size,
        where=built.where,
    )


@pytest.mark.benchmark(group="index search, k=10")
def test_raw_unfiltered_chroma_query(benchmark: Any, figures: list[str], built: Built) -> None:
    queries = _cycled(built.queries)

    def query() -> Any:
        return built.plain.query(
            query_embeddings=[next(queries)], n_results=K, include=["metadatas", "distances"]
        )

    timed = Timed(query)
    found = benchmark(timed)
    assert len(found["ids"][0]) == K
    row = GROWTH.setdefault((built.where, built.size), {})
    row[RAW] = 1e6 * median_seconds(benchmark, timed)[0]
    record_latency(
        benchmark,
        figures,
        timed,
        f"raw Chroma query, unfiltered, plain collection, {built.case}",
        records=built.size,
        where=built.where,
    )
    if CURRENT in row:
        row[RATIO] = row[CURRENT] / row[RAW]
        benchmark.extra_info["current_over_raw"] = round(row[RATIO], 2)
        figures.append(
            f"  ratio current-state search / raw unfiltered query, {built.case}: "
            f"{row[RATIO]:.2f} (aim <= 1.5)"
        )
    calls = 1 if benchmark.disabled else QUERIES
    row[PAIRED] = _paired_ratio(built, calls)
    benchmark.extra_info["paired_ratio"] = round(row[PAIRED], 2)
    figures.append(
        f"    the same ratio from {calls} alternating pairs of calls (median of the "
        f"ratios, less swayed by other load on the machine): {row[PAIRED]:.2f}"
    )


def _paired_ratio(built: Built, calls: int) -> float:
    """The median, over ``calls`` pairs, of (current-state search) / (raw unfiltered query)
    with the same query vector, the two calls back to back."""
    ratios = []
    for vector in islice(_cycled(built.queries), calls):
        start = time.perf_counter()
        built.index.search(vector, k=K, namespace="default", valid_at=NOW, known_at=None)
        middle = time.perf_counter()
        built.plain.query(
            query_embeddings=[vector], n_results=K, include=["metadatas", "distances"]
        )
        ratios.append((middle - start) / (time.perf_counter() - middle))
    return statistics.median(ratios)


@pytest.mark.benchmark(group="index search, k=10")
def test_raw_filtered_chroma_query(benchmark: Any, figures: list[str], built: Built) -> None:
    queries = _cycled(built.queries)
    where = {"retired_at": {"$eq": OPEN}}

    def query() -> Any:
        return built.plain.query(
            query_embeddings=[next(queries)],
            n_results=K,
            where=where,
            include=["metadatas", "distances"],
        )

    timed = Timed(query)
    found = benchmark(timed)
    assert len(found["ids"][0]) == K
    record_latency(
        benchmark,
        figures,
        timed,
        f"raw Chroma query, where retired_at == OPEN, plain collection, {built.case}",
    )


def _visible_keys(valid_at: int, known_at: int, keys: int) -> range:
    """The keys i whose old version (row 2i + 1) is visible at a past (valid_at, known_at) of
    :func:`_records`: only old versions can be (the current ones start later), those known by
    ``known_at``, not yet retired then, and valid from T0 + i: some times see none."""
    known = (known_at - R0) // SECOND
    return range(max(0, known - keys + 1), min(known, keys - 1, valid_at - T0) + 1)


def _past_times(keys: int) -> Iterator[tuple[int, int]]:
    """QUERIES random past (valid_at, known_at) over the records of ``keys`` keys, cycled."""
    rng = random.Random(SEED)
    return cycle(
        [
            (T0 + rng.randrange(2 * keys), R0 + rng.randrange(2 * keys) * SECOND)
            for _ in range(QUERIES)
        ]
    )


def _record_tail(
    benchmark: Any, figures: list[str], timed: Timed, built: Built, what: str, why: str = ""
) -> None:
    """The median of a search's calls, then their mean and p90 (the rare slow ones count)."""
    record_latency(
        benchmark, figures, timed, f"ChromaIndex.search {what}, {built.case}", records=built.size
    )
    calls = sorted(timed.seconds)
    mean, p90 = sum(calls) / len(calls), calls[int(0.9 * (len(calls) - 1))]
    benchmark.extra_info.update(mean_us=round(mean * 1e6), p90_us=round(p90 * 1e6))
    figures.append(
        f"    {what}, {built.case}, over {len(calls)} calls: mean {mean * 1e3:,.1f} ms, "
        f"p90 {p90 * 1e3:,.1f} ms{why}"
    )


@dataclass
class _Caller:
    """What the reader hands the index: a check of visibility that can list the visible rows."""

    keys: range

    def __call__(self, rows: Any) -> set[int]:
        return {row for row in rows if row % 2 == 1 and (row - 1) // 2 in self.keys}

    def list_rows(self, limit: int) -> list[int] | None:
        return [2 * i + 1 for i in self.keys] if len(self.keys) <= limit else None


@pytest.mark.benchmark(group="index search, k=10")
def test_as_of_search(benchmark: Any, figures: list[str], built: Built) -> None:
    keys = built.size // 2
    times, queries = _past_times(keys), _cycled(built.queries)

    def search() -> tuple[list[Any], int, int]:
        valid_at, known_at = next(times)
        found = built.index.search(
            next(queries), k=K, namespace="default", valid_at=valid_at, known_at=known_at
        )
        return found, valid_at, known_at

    timed = Timed(search)  # every query once: the mean and p90 need the rare slow ones
    found, valid_at, known_at = benchmark.pedantic(timed, rounds=QUERIES, iterations=1)
    assert bool(found) == bool(_visible_keys(valid_at, known_at, keys)), (valid_at, known_at)
    assert all(built.records[m.row_id].visible(valid_at, known_at) for m in found)
    _record_tail(
        benchmark,
        figures,
        timed,
        built,
        "as of the past",
        " (the slow ones fell back to filtered queries)",
    )


@pytest.mark.benchmark(group="index search, k=10")
def test_as_of_search_by_row_ids(benchmark: Any, figures: list[str], built: Built) -> None:
    keys = built.size // 2
    times, queries = _past_times(keys), _cycled(built.queries)

    def search() -> tuple[list[Any], _Caller]:
        valid_at, known_at = next(times)
        caller = _Caller(_visible_keys(valid_at, known_at, keys))
        found = built.index.search(
            next(queries),
            k=K,
            namespace="default",
            valid_at=valid_at,
            known_at=known_at,
            rows_only=True,
            visible_rows=caller,
        )
        return found, caller

    timed = Timed(search)
    found, caller = benchmark.pedantic(timed, rounds=QUERIES, iterations=1)
    assert bool(found) == bool(caller.keys)
    assert all(caller([m.row_id]) for m in found)
    _record_tail(benchmark, figures, timed, built, "as of the past by row ids, the caller listing")


@pytest.mark.benchmark(group="index apply")
def test_apply_supersessions(benchmark: Any, figures: list[str], built: Built) -> None:
    """Each round: 1,000 current rows retired (out of live) and 1,000 new current rows; then
    the build is put back as it was (for the tests after this one, and for INDEX_REUSE)."""
    rng = np.random.default_rng(SEED + 1)
    rows = count(built.size + 1)
    moves = min(MOVES, built.size // 4)
    current = cycle([r for r in built.records.values() if r.retired_at == OPEN])
    moved: list[VersionRecord] = []

    def batch() -> tuple[tuple[list[VersionRecord], dict[str, Any], ChangeCursor], dict[str, Any]]:
        moved.extend(next(current) for _ in range(moves))
        retired = [replace(r, retired_at=NOW) for r in moved[-moves:]]
        fresh = [
            VersionRecord(row, f"fact-{row}", "default", "newer", NOW, OPEN, NOW, OPEN)
            for row in (next(rows) for _ in range(moves))
        ]
        vectors = {
            r.fact_id: v for r, v in zip(fresh, rng.standard_normal((moves, DIM)), strict=True)
        }
        return (retired + fresh, vectors, ChangeCursor(fresh[-1].row_id, NOW)), {}

    timed = Timed(built.index.apply)
    try:
        benchmark.pedantic(timed, setup=batch, rounds=3)
    finally:
        built.index.remove(range(built.size + 1, next(rows)))
        built.index.apply(moved, {}, ChangeCursor(built.size, 0))
    record_rate(
        benchmark,
        figures,
        timed,
        f"ChromaIndex.apply, supersessions (records/s), {built.case}",
        2 * moves,
    )
