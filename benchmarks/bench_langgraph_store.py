"""TemporalStore put, delete and get on the embedded stack, beside LangGraph's own store (issue 32,
item 6: "a put or delete on the embedded stack costs about 90 ms today: measure it beside
LangGraph's own SQLite store and cut it").

Stores, each measured in the same run:

- ``temporal, index``: ``TemporalStore.open(folder, index={"fields": ["text"]})``: SQLite ledger
  (``durability="full"``: an fsync per commit) + persistent Chroma + the offline MiniLM;
- ``temporal, no index``: the same without ``index`` (nothing is embedded by the embedder);
- ``langgraph SqliteStore``: LangGraph's own SQLite store (``langgraph.store.sqlite``) when the
  ``langgraph-checkpoint-sqlite`` package is installed; skipped otherwise;
- ``langgraph InMemoryStore``: LangGraph's in-memory store (no durability: a lower bound);
- ``sqlite floor``: one ``INSERT OR REPLACE`` / ``DELETE`` of the JSON value per transaction in
  WAL mode with ``synchronous=FULL``: what a durable key-value write costs on this disk.

Each put writes a new value to one of ``KEYS`` items (a new item on the first pass, then a new
version); each delete removes an item put just before (outside the timing); each get reads one.
``5 puts + search`` is five puts and one ``search(query=...)``: what a query search after writes
costs, the index catching up on them then (LangGraph's stores and the floor: puts and a listing).
The summary prints the median ms per op and each store's ratio to LangGraph's stores and the
floor. ``make bench-langgraph`` (``LANGGRAPH_BENCH_ROUNDS=...``, default 60 rounds per figure);
under ``--benchmark-disable`` each workload runs once.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, IndexConfig
from langgraph.store.memory import InMemoryStore

from benchmarks.reporting import Timed, median_seconds
from langchain_temporal import TemporalStore
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.memory import MemoryConfig

KEYS = 50
ROUNDS = int(os.environ.get("LANGGRAPH_BENCH_ROUNDS", "60"))
NAMESPACE = ("users", "ana", "memories")
STORES = [
    "temporal, index",
    "temporal, no index",
    "langgraph SqliteStore",
    "langgraph InMemoryStore",
    "sqlite floor",
]
OPS = ["put", "get", "delete", "5 puts + search"]
BASELINES = ("langgraph SqliteStore", "langgraph InMemoryStore", "sqlite floor")


class SQLiteFloor:
    """The least a durable put or delete can cost: one row per item, one fsync'd transaction."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE item (ns TEXT, key TEXT, value TEXT, PRIMARY KEY (ns, key))")

    def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO item VALUES (?, ?, ?)",
                (".".join(namespace), key, json.dumps(value)),
            )

    def get(self, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT value FROM item WHERE ns = ? AND key = ?", (".".join(namespace), key)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        with self._db:
            self._db.execute(
                "DELETE FROM item WHERE ns = ? AND key = ?", (".".join(namespace), key)
            )

    def close(self) -> None:
        self._db.close()


@pytest.fixture(scope="module")
def medians(figures: list[str]) -> Iterator[dict[tuple[str, str], float]]:
    """Median seconds per (store, op); the ratios are added to the summary at the end."""
    found: dict[tuple[str, str], float] = {}
    yield found
    for op in OPS:
        for store in STORES:
            if (store, op) not in found:
                continue
            ms = found[store, op] * 1e3
            ratios = [
                f"{ms / (found[base, op] * 1e3):,.1f} x {base}"
                for base in BASELINES
                if base != store and (base, op) in found
            ]
            figures.append(f"  {op:15} {store:24} {ms:8.3f} ms  ({'; '.join(ratios)})")


def open_store(name: str, folder: Path, embedder: MiniLMEmbedder) -> Any:
    if name.startswith("temporal"):
        index: IndexConfig | None = {"fields": ["text"]} if name == "temporal, index" else None
        return TemporalStore.open(folder, index=index, config=MemoryConfig(embedder=embedder))
    if name == "langgraph SqliteStore":
        sqlite_store = pytest.importorskip(
            "langgraph.store.sqlite", reason="langgraph-checkpoint-sqlite is not installed"
        )
        connection = sqlite3.connect(  # as SqliteStore.from_conn_string opens it
            folder / "store.sqlite", check_same_thread=False, isolation_level=None
        )
        store = sqlite_store.SqliteStore(connection)
        store.setup()
        return store
    if name == "langgraph InMemoryStore":
        return InMemoryStore()
    return SQLiteFloor(folder / "floor.sqlite")


@pytest.fixture(params=STORES)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: MiniLMEmbedder
) -> Iterator[tuple[str, Any]]:
    name = str(request.param)
    opened = open_store(name, tmp_path, embedder)
    for i in range(KEYS):
        opened.put(NAMESPACE, f"k{i}", {"text": f"Ana remembers thing {i}", "n": i})
    yield name, opened
    if isinstance(opened, TemporalStore | SQLiteFloor):
        opened.close()


def test_put(benchmark: Any, store: tuple[str, Any], medians: dict[tuple[str, str], float]) -> None:
    name, opened = store
    serial = count()

    def put() -> None:
        n = next(serial)
        opened.put(NAMESPACE, f"k{n % KEYS}", {"text": f"Ana now says {n} about it", "n": n})

    run(benchmark, medians, name, "put", put)
    value = _value(opened, f"k{(next(serial) - 1) % KEYS}")
    assert value is not None
    assert value["text"].startswith("Ana now says")


def test_get(benchmark: Any, store: tuple[str, Any], medians: dict[tuple[str, str], float]) -> None:
    name, opened = store
    serial = count()
    run(benchmark, medians, name, "get", lambda: _value(opened, f"k{next(serial) % KEYS}"))


def test_delete(
    benchmark: Any, store: tuple[str, Any], medians: dict[tuple[str, str], float]
) -> None:
    name, opened = store
    serial = count()
    keys: list[str] = []

    def setup() -> None:  # the item to delete is put outside the timing
        key = f"d{next(serial)}"
        opened.put(NAMESPACE, key, {"text": f"Ana briefly thought {key}"})
        keys.append(key)

    timed = Timed(lambda: opened.delete(NAMESPACE, keys[-1]))
    if benchmark.disabled:
        setup()
        benchmark(timed)
    else:
        benchmark.pedantic(timed, setup=setup, rounds=ROUNDS, iterations=1)
    medians[name, "delete"] = median_seconds(benchmark, timed)[0]
    assert _value(opened, keys[-1]) is None


def test_puts_then_search(
    benchmark: Any, store: tuple[str, Any], medians: dict[tuple[str, str], float]
) -> None:
    name, opened = store
    serial = count()

    def puts_then_search() -> object:
        for _ in range(5):
            n = next(serial)
            opened.put(NAMESPACE, f"k{n % KEYS}", {"text": f"Ana now says {n} about it", "n": n})
        if isinstance(opened, BaseStore):
            return opened.search(NAMESPACE, query="What did Ana say?", limit=5)
        return [opened.get(NAMESPACE, f"k{i}") for i in range(5)]

    run(benchmark, medians, name, "5 puts + search", puts_then_search)


def run(
    benchmark: Any,
    medians: dict[tuple[str, str], float],
    name: str,
    op: str,
    work: Callable[[], object],
) -> None:
    timed = Timed(work)
    if benchmark.disabled:
        benchmark(timed)
    else:
        benchmark.pedantic(timed, rounds=ROUNDS, iterations=1, warmup_rounds=2)
    medians[name, op] = median_seconds(benchmark, timed)[0]


def _value(store: Any, key: str) -> dict[str, Any] | None:
    if isinstance(store, BaseStore):
        item = store.get(NAMESPACE, key)
        return None if item is None else item.value
    found: dict[str, Any] | None = store.get(NAMESPACE, key)
    return found
