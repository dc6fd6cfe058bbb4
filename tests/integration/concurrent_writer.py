"""One writer of conflicting facts, run in a process or a thread by test_concurrent_writers.py.

``python -m tests.integration.concurrent_writer LEDGER WORKER OPERATIONS SEED GO [INDEX]`` opens
the ledger LEDGER (an SQLite file, or ``postgresql://...#schema``: see :func:`open_ledger`) and,
with INDEX (``http://host:port#prefix``), a TemporalMemory over it and that Chroma server index,
waits until the file GO exists (so all writers start together), performs OPERATIONS seeded
writes on a few shared keys and prints its log as one JSON document. Every log entry is an
operation with what the ledger acknowledged (decisions and statement ids) or the documented
error it raised; the parent replays the acknowledged ones through the oracle in the order the
ledger recorded them.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import TemporalRagError
from shared_core.facts import Decision, Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres.ledger import PostgresLedger
from shared_core.ledger.results import WriteResult
from shared_core.ledger.sqlite.ledger import SQLiteLedger
from shared_core.memory.config import MemoryConfig
from shared_core.memory.memory import TemporalMemory

SUBJECTS = ("Maria", "Jonas", "Aiko")
CITIES = ("Berlin", "Lisbon", "Oslo", "Porto")
FOODS = ("tea", "coffee", "rice")
CARDINALITIES = {"lives_in": "one", "likes": "many"}
BASE = datetime(2020, 1, 1, tzinfo=UTC)
DAYS = 40  # few valid times: writers collide on the same key and the same valid_from


def day(n: int) -> datetime:
    return BASE + timedelta(days=n)


def fact_fields(rng: random.Random, fact_id: str) -> dict[str, Any]:
    subject = rng.choice(SUBJECTS)
    if rng.random() < 0.75:
        relation, obj = "lives in", rng.choice(CITIES)
    else:
        relation, obj = "likes", rng.choice(FOODS)
    return {
        "id": fact_id,
        "text": f"{subject} {relation} {obj} ({fact_id})",  # unique: see crash_writer.py
        "subject": subject,
        "relation": relation,
        "object": obj,
        "valid_from": rng.randrange(DAYS),
    }


def as_fact(fields: dict[str, Any]) -> Fact:
    return Fact(**{**fields, "valid_from": day(fields["valid_from"])})


class Target:
    """What a writer writes through: a ledger, or a TemporalMemory (same results)."""

    def __init__(
        self,
        write_many: Callable[[list[Fact]], list[WriteResult]],
        retract: Callable[..., WriteResult],
        correct: Callable[..., WriteResult],
    ) -> None:
        self.write_many = write_many
        self.retract = retract
        self.correct = correct

    @classmethod
    def of_ledger(cls, ledger: Any) -> Target:
        return cls(ledger.write_many, ledger.retract, ledger.correct)

    @classmethod
    def of_memory(cls, memory: Any) -> Target:
        def write_many(facts: list[Fact]) -> list[WriteResult]:
            return [w for added in memory.add_many(facts) for w in added.writes]

        return cls(write_many, memory.retract, memory.correct)


def perform(target: Target, entry: dict[str, Any]) -> list[WriteResult]:
    if entry["op"] == "write_many":
        return target.write_many([as_fact(f) for f in entry["facts"]])
    if entry["op"] == "retract":
        e = entry
        return [target.retract(e["subject"], e["relation"], e["object"], at=day(e["at"]))]
    return [target.correct(entry["target"], **entry["changes"])]


def run(target: Target, worker: int, operations: int, seed: int) -> list[dict[str, Any]]:
    """Perform the writes; return the log (one entry per operation, in this writer's order)."""
    rng = random.Random(seed * 100 + worker)
    log: list[dict[str, Any]] = []
    mine: list[str] = []  # this writer's stored statement ids (targets for corrections)
    counter = 0
    for _ in range(operations):
        roll = rng.random()
        entry: dict[str, Any]
        if roll < 0.6:
            batch = []
            for _ in range(1 if roll < 0.4 else rng.randint(2, 3)):
                counter += 1
                batch.append(fact_fields(rng, f"w{worker}-{counter}"))
            entry = {"op": "write_many", "facts": batch}
        elif roll < 0.8:
            subject = rng.choice(SUBJECTS)
            relation, obj = ("lives in", None)
            if rng.random() < 0.4:
                relation, obj = "likes", rng.choice(FOODS)
            at = rng.randrange(DAYS)
            entry = {"op": "retract", "subject": subject, "relation": relation, "object": obj}
            entry["at"] = at
        else:
            if not mine:
                continue
            counter += 1  # a unique text: the corrected copy is never a duplicate
            changes = {"object": rng.choice(CITIES), "text": f"corrected by w{worker}-{counter}"}
            entry = {"op": "correct", "target": rng.choice(mine), "changes": changes}
        try:
            results = perform(target, entry)
        except TemporalRagError as exc:  # documented refusals: nothing to retract, busy, ...
            entry["error"] = type(exc).__name__
        else:
            entry["decisions"] = [str(r.decision) for r in results]
            entry["ids"] = [r.statement_id for r in results]
            if entry["op"] != "retract":
                mine += [r.statement_id for r in results if r.decision is not Decision.DUPLICATE]
        log.append(entry)
    return log


def open_ledger(location: str, **options: Any) -> Ledger:
    """An existing ledger: ``postgresql://...#schema`` on a server, else an SQLite file."""
    if location.startswith("postgresql://"):
        url, _, schema = location.partition("#")
        return PostgresLedger(url, schema=schema, create=False, **options)
    return SQLiteLedger(location, durability="normal", create=False, **options)


def open_memory(ledger: Ledger, index_location: str) -> TemporalMemory:
    """A TemporalMemory over ``ledger`` and the Chroma server index ``http://host:port#prefix``."""
    url, _, prefix = index_location.partition("#")
    index = ChromaIndex.connect(url, prefix=prefix)
    return TemporalMemory(
        ledger=ledger, index=index, config=MemoryConfig(embedder=HashingEmbedder(32))
    )


def http_client(url: str) -> Any:
    """A chromadb.HttpClient for ``http://host:port``."""
    import chromadb

    host, _, port = url.removeprefix("http://").partition(":")
    return chromadb.HttpClient(host=host, port=int(port))


def main(argv: list[str]) -> None:
    path, worker, operations, seed, go, *index = argv
    ledger = open_ledger(path)
    memory = open_memory(ledger, index[0]) if index else None
    started = time.monotonic()
    while not Path(go).exists():
        if time.monotonic() - started > 60:
            raise SystemExit("never told to go")
        time.sleep(0.005)
    target = Target.of_ledger(ledger) if memory is None else Target.of_memory(memory)
    log = run(target, int(worker), int(operations), int(seed))
    (ledger if memory is None else memory).close()
    print(json.dumps(log))


if __name__ == "__main__":
    main(sys.argv[1:])
