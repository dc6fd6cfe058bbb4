"""The recency buffer: bounded, FIFO, thread-safe; merged with retrieval without duplicates."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from shared_core.errors import InvalidInputError
from shared_core.phi_t import Candidate
from shared_core.recency import RecencyBuffer, merge_candidates

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def chunk(id_: str, namespace: str = "default") -> Candidate:
    return Candidate(
        id=id_, text=id_, timestamp=T0 + timedelta(minutes=len(id_)), namespace=namespace
    )


def test_it_keeps_the_most_recent_n_newest_first() -> None:
    buffer = RecencyBuffer(3)
    buffer.extend(chunk(f"c{i}") for i in range(5))
    assert [c.id for c in buffer.recent()] == ["c4", "c3", "c2"]
    assert len(buffer) == 3
    buffer.add(chunk("c2"))  # seen again: most recent now, not twice
    assert [c.id for c in buffer.recent()] == ["c2", "c4", "c3"]
    assert [c.id for c in buffer.recent(limit=1)] == ["c2"]
    buffer.clear()
    assert buffer.recent() == []


def test_namespaces_are_kept_apart_on_the_way_out() -> None:
    buffer = RecencyBuffer(4)
    buffer.extend([chunk("a1", "alice"), chunk("b1", "bob"), chunk("a2", "alice")])
    assert [c.id for c in buffer.recent(namespace="alice")] == ["a2", "a1"]
    assert [c.id for c in buffer.recent(namespace="bob")] == ["b1"]


def test_bad_input_is_refused() -> None:
    for capacity in (0, -1, 1.5, True):
        with pytest.raises(InvalidInputError, match="capacity"):
            RecencyBuffer(capacity)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="candidate"):
        RecencyBuffer(2).add("text")  # type: ignore[arg-type]


def test_concurrent_writers_never_overflow_it() -> None:
    buffer = RecencyBuffer(16)
    failures: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for n in range(300):
                buffer.add(chunk(f"w{offset}-{n}"))
                buffer.recent()
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(buffer) == 16
    assert len({c.id for c in buffer.recent()}) == 16


def test_merge_keeps_rank_order_then_adds_unseen_buffered_chunks() -> None:
    retrieved = [chunk("r1"), chunk("b2"), chunk("r1")]
    buffered = [chunk("b1"), chunk("b2")]
    assert [c.id for c in merge_candidates(retrieved, buffered)] == ["r1", "b2", "b1"]
