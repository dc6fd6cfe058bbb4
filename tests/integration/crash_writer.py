"""A writer process for the crash-consistency tests (tests/integration/test_crash_consistency.py).

Run as ``python -m tests.integration.crash_writer LOCATION ACK_FILE SEED OPS``: it opens the
embedded TemporalMemory in the folder LOCATION (SQLite ledger + persistent Chroma index,
HashingEmbedder), or one on servers for ``postgresql://...#schema|http://...#prefix``, then
performs OPS seeded random writes (add, add_many, retract, correct) of changing facts. After
each write returns (is acknowledged) it appends one JSON line to ACK_FILE with the acknowledged
statement ids, flushed and fsynced. A ``{"ready": true}`` line is written once the memory is open.

The parent kills it with SIGKILL. To hit precise points it may also set ``CRASH_AT=point:n``: the
child then kills itself the n-th time (counted after opening) it reaches ``point``:

* ``ledger``   inside a ledger transaction, before its COMMIT (a version row is being
  inserted; SQLite or PostgreSQL);
* ``between``  after the ledger committed, before the index is told (IndexSync.catch_up);
* ``index``    inside the index write, before a Chroma upsert (bookkeeping saved, rows not);
* ``cursor``   inside the index write, before the index stores its state (rows written);
* ``ack``      after the write returned, before its acknowledgement is written.

The hooks patch classes in this process only; library code has no crash hooks.

Every text carries a unique note: identical texts have identical vectors, and Chroma's HNSW
search then returns fewer rows than asked for even with k above the row count (a separate
bug, see test_crash_consistency.py::test_history_search_finds_every_version_of_a_repeated_text);
these tests are about crashes, so they keep their vectors distinct.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import TemporalRagError
from shared_core.facts import Decision, Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.postgres.backend import PostgresBackend
from shared_core.ledger.records import KIND_ASSERTION
from shared_core.ledger.results import WriteResult
from shared_core.ledger.sqlite.backend import SQLiteBackend
from shared_core.memory.config import MemoryConfig
from shared_core.memory.index_sync import IndexSync
from shared_core.memory.memory import TemporalMemory

SUBJECTS = ("Maria", "Jonas", "Aiko", "Tom")
CITIES = ("Berlin", "Lisbon", "Oslo", "Porto", "Kyoto")
FOODS = ("tea", "coffee", "rice", "bread")
T0 = datetime(2020, 1, 1, tzinfo=UTC)
EMBEDDER_DIMENSION = 32


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def open_memory(location: str | Path) -> TemporalMemory:
    """The memory the writer and the checker both open (reconcile runs on open): the embedded
    one in a folder, or on servers for ``postgresql://...#schema|http://...#prefix``."""
    embedder = HashingEmbedder(EMBEDDER_DIMENSION)
    if str(location).startswith("postgresql://"):
        ledger, _, index = str(location).partition("|")
        url, _, schema = ledger.partition("#")
        server, _, prefix = index.partition("#")
        memory = TemporalMemory.connect(
            ledger=url,
            index=server,
            schema=schema,
            prefix=prefix,
            config=MemoryConfig(embedder=embedder),
        )
    else:
        memory = TemporalMemory.open(location, config=MemoryConfig(embedder=embedder))
    memory.declare("likes", "many")
    return memory


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install_crash_hook(spec: str) -> Callable[[], None]:
    """Patch the class method behind ``point`` to SIGKILL this process on its n-th call.

    Returns the check for the ``ack`` point (call it between a write and its ack)."""
    point, _, nth = spec.partition(":")
    remaining = [int(nth)]

    def countdown() -> None:
        remaining[0] -= 1
        if remaining[0] <= 0:
            _kill()

    def wrap(owner: type, name: str) -> None:
        original = getattr(owner, name)

        def patched(*args: Any, **kwargs: Any) -> Any:
            countdown()
            return original(*args, **kwargs)

        setattr(owner, name, patched)

    targets = {
        "ledger": [(SQLiteBackend, "insert_version"), (PostgresBackend, "insert_version")],
        "between": [(IndexSync, "catch_up")],
        "index": [(ChromaIndex, "_upsert")],
        "cursor": [(ChromaIndex, "_save_state")],
    }
    if point == "ack":
        return countdown
    if point not in targets:
        raise SystemExit(f"unknown crash point {point!r}")
    for owner, name in targets[point]:
        wrap(owner, name)
    return lambda: None


def stored(results: list[WriteResult]) -> list[str]:
    """The statement ids a write acknowledged as stored: its own id, or for a duplicate (an
    idempotent no-op that stores nothing) the id of the version that already carries it."""
    ids = []
    for result in results:
        if result.decision is not Decision.DUPLICATE:
            ids.append(result.statement_id)
        elif result.fact is not None:
            ids.append(result.fact.id)
    return ids


class Writer:
    def __init__(
        self, memory: TemporalMemory, ack_path: Path, rng: random.Random, tag: str = ""
    ) -> None:
        self.memory = memory
        self.rng = rng
        self.tag = tag
        self.said = 0
        self.ack = ack_path.open("a", encoding="utf-8")
        statements, _ = memory.ledger.export()
        self.targets = [
            s.fact_id for s in statements if s.kind == KIND_ASSERTION and s.key_id is not None
        ]

    def acknowledge(self, record: dict[str, Any]) -> None:
        self.ack.write(json.dumps(record) + "\n")
        self.ack.flush()
        os.fsync(self.ack.fileno())

    def note(self) -> str:
        """A unique suffix: no two texts (so no two vectors) are identical, see the module doc."""
        self.said += 1
        return f"(note {self.tag}-{self.said})"

    def fact(self) -> Fact:
        subject = self.rng.choice(SUBJECTS)
        if self.rng.random() < 0.75:
            city = self.rng.choice(CITIES)
            return Fact(
                text=f"{subject} lives in {city} {self.note()}",
                subject=subject,
                relation="lives in",
                object=city,
                valid_from=day(self.rng.randrange(400)),
            )
        food = self.rng.choice(FOODS)
        return Fact(
            text=f"{subject} likes {food} {self.note()}",
            subject=subject,
            relation="likes",
            object=food,
            valid_from=day(self.rng.randrange(400)),
        )

    def step(self) -> dict[str, Any]:
        roll = self.rng.random()
        if roll < 0.45:
            added = self.memory.add_many([self.fact()])
            ids = stored([w for a in added for w in a.writes])
            op = "add"
        elif roll < 0.7:
            added = self.memory.add_many([self.fact() for _ in range(self.rng.randint(2, 4))])
            ids = stored([w for a in added for w in a.writes])
            op = "add_many"
        elif roll < 0.85:
            subject = self.rng.choice(SUBJECTS)
            relation, obj = ("lives in", None)
            if self.rng.random() < 0.3:
                relation, obj = "likes", self.rng.choice(FOODS)
            at = day(self.rng.randrange(400))
            ids = stored([self.memory.retract(subject, relation, obj, at=at)])
            op = "retract"
        else:
            if not self.targets:
                return {"op": "none", "ids": []}
            target = self.rng.choice(self.targets)
            city = self.rng.choice(CITIES)
            ids = [
                self.memory.correct(
                    target, object=city, text=f"corrected to {city} {self.note()}"
                ).statement_id
            ]
            op = "correct"
        self.targets += ids
        return {"op": op, "ids": ids}

    def run(self, operations: int, before_ack: Callable[[], None]) -> None:
        for _ in range(operations):
            try:
                record = self.step()
            except TemporalRagError as exc:  # e.g. nothing to retract: a documented refusal
                record = {"op": "refused", "ids": [], "error": type(exc).__name__}
            before_ack()
            self.acknowledge(record)


def main(argv: list[str]) -> None:
    location, ack_path, seed, operations = argv[0], Path(argv[1]), int(argv[2]), int(argv[3])
    memory = open_memory(location)
    writer = Writer(memory, ack_path, random.Random(seed), tag=str(seed))
    spec = os.environ.get("CRASH_AT")
    before_ack = install_crash_hook(spec) if spec else (lambda: None)
    writer.acknowledge({"ready": True})
    writer.run(operations, before_ack)
    memory.close()


if __name__ == "__main__":
    main(sys.argv[1:])
