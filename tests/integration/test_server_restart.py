"""A PostgreSQL restart in the middle of writes (issue 17): acknowledged writes survive,
refused ones are whole or absent, writing goes on once the server is back, and the index on a
Chroma server catches up by itself."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from shared_core import (
    ChromaIndex,
    Fact,
    HashingEmbedder,
    MemoryConfig,
    PostgresLedger,
    TemporalMemory,
)
from shared_core.errors import TemporalRagError
from tests.integration.ledger_checks import index_disagreements, overlapping_versions
from tests.servers import PostgresCluster, ServerUnavailableError, postgres_cluster, unavailable

BATCH = 3
SUBJECTS = ("Maria", "Jonas", "Aiko", "Lena")
CITIES = ("Berlin", "Lisbon", "Oslo", "Porto", "Kyoto")


@pytest.fixture
def cluster() -> Iterator[PostgresCluster]:
    """A cluster of this test's own: restarting it must not disturb the other tests."""
    try:
        with postgres_cluster() as started:
            yield started
    except ServerUnavailableError as exc:
        unavailable(f"no PostgreSQL server: {exc}")


def batch(rng: random.Random, n: int) -> list[Fact]:
    facts = []
    for j in range(BATCH):
        subject, city = rng.choice(SUBJECTS), rng.choice(CITIES)
        facts.append(
            Fact(
                id=f"b{n}-{j}",
                text=f"{subject} lives in {city} (b{n}-{j})",
                subject=subject,
                relation="lives in",
                object=city,
                valid_from=datetime(2000 + n % 20, 1 + j, 1, tzinfo=UTC),
            )
        )
    return facts


def write_until(memory: TemporalMemory, stop: threading.Event, log: list[dict[str, Any]]) -> None:
    rng = random.Random(17)
    n = 0
    while not stop.is_set():
        n += 1
        facts = batch(rng, n)
        entry: dict[str, Any] = {"ids": [f.id for f in facts], "at": time.monotonic()}
        try:
            memory.add_many(facts)
        except TemporalRagError as exc:  # unreachable server, or the index could not follow
            entry["error"] = type(exc).__name__
            time.sleep(0.05)
        log.append(entry)


def test_a_restart_mid_writes_keeps_acknowledged_writes_and_the_index_catches_up(
    cluster: PostgresCluster, chroma_url: str
) -> None:
    name = f"r{uuid.uuid4().hex[:12]}"
    memory = TemporalMemory(
        ledger=PostgresLedger(cluster.url, schema=name, connect_timeout=2, lock_timeout=2),
        index=ChromaIndex.connect(chroma_url, prefix=name),
        config=MemoryConfig(embedder=HashingEmbedder(32)),
    )
    log: list[dict[str, Any]] = []
    stop = threading.Event()
    writer = threading.Thread(target=write_until, args=(memory, stop, log))
    try:
        writer.start()
        time.sleep(1.0)
        cluster.stop("immediate")  # as a crash: no checkpoint, connections cut
        time.sleep(1.0)
        cluster.start()
        restarted = time.monotonic()
        deadline = restarted + 60  # the pool reconnects with a backoff: wait for it, bounded
        while time.monotonic() < deadline and not any(
            "error" not in e and e["at"] > restarted + 0.5 for e in list(log)
        ):
            time.sleep(0.1)
        stop.set()
        writer.join(timeout=120)
        assert not writer.is_alive()

        refused = [e for e in log if "error" in e]
        acked = [e for e in log if "error" not in e]
        assert refused, "the restart refused no write: it did not happen mid-writes"
        assert any(e["at"] > restarted for e in acked), "writing did not go on after the restart"
        statements, versions = memory.ledger.export()
        stored = {row.fact_id for row in statements}
        for entry in acked:
            assert set(entry["ids"]) <= stored, f"an acknowledged write was lost: {entry}"
        for entry in refused:  # all of a batch or none of it
            assert len(set(entry["ids"]) & stored) in (0, BATCH), f"a partial batch: {entry}"
        assert stored <= {i for e in log for i in e["ids"]}
        assert overlapping_versions(versions) == []

        assert memory.ledger.changes(memory.index.cursor()).records == ()  # caught up already
        assert index_disagreements(memory, versions, random.Random(3)) == []
    finally:
        stop.set()
        writer.join(timeout=120)
        memory.close()
        ChromaIndex.connect(chroma_url, prefix=name).drop()
