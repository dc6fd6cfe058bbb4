"""The short-term memory of GC-Mem: the N most recent chunks, unioned with what was retrieved.

Retrieval can miss the newest statement (it may not be similar enough to the query), and then
Phi_T has nothing to dominate the stale chunks with. Keeping the last N chunks at hand and
adding them to every candidate set closes that gap.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Sequence

from shared_core.errors import InvalidInputError
from shared_core.phi_t import Candidate


class RecencyBuffer:
    """A bounded, thread-safe FIFO of the most recently added candidates.

    A memory searched with ``use_recency_buffer=True`` adds the buffered candidates of the
    query's namespace to what the index retrieved, so Phi_T sees the newest statements even
    when they are not similar enough to the query to be retrieved.

    Args:
        capacity: how many candidates it holds; adding one more drops the oldest.

    Raises:
        InvalidInputError: ``capacity`` is not a positive int.
    """

    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise InvalidInputError("capacity", f"{capacity!r} is not a positive int", "use e.g. 8")
        self.capacity = capacity
        self._items: deque[Candidate] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def add(self, candidate: Candidate) -> None:
        """Remember ``candidate``; the oldest one drops out when the buffer is full.

        Adding an id that is already buffered moves it to the most recent position.
        """
        if not isinstance(candidate, Candidate):
            raise InvalidInputError(
                "candidate", f"is a {type(candidate).__name__}", "pass a Candidate"
            )
        with self._lock:
            for index, held in enumerate(self._items):
                if held.id == candidate.id:
                    del self._items[index]
                    break
            self._items.append(candidate)

    def extend(self, candidates: Iterable[Candidate]) -> None:
        """Add several candidates, oldest first."""
        for candidate in candidates:
            self.add(candidate)

    def recent(self, *, namespace: str | None = None, limit: int | None = None) -> list[Candidate]:
        """The buffered candidates, most recent first (of one namespace, if given)."""
        with self._lock:
            items = list(reversed(self._items))
        if namespace is not None:
            items = [c for c in items if c.namespace == namespace]
        return items if limit is None else items[:limit]

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


def merge_candidates(
    retrieved: Sequence[Candidate], buffered: Sequence[Candidate]
) -> list[Candidate]:
    """The retrieved candidates in rank order, then buffered ones not already there (by id).

    Within ``retrieved`` a repeated id keeps its first (best-ranked) occurrence.
    """
    merged: dict[str, Candidate] = {}
    for candidate in (*retrieved, *buffered):
        merged.setdefault(candidate.id, candidate)
    return list(merged.values())
