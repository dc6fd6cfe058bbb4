"""What the framed detector keeps between calls: statement readings and pair verdicts.

A *reading* is what the detector needs to know of one statement text to decide whether a pair
may be compared at all: its subject (:func:`~shared_core.judging.subjects.statement_subject`)
and its :class:`~shared_core.detectors.frames.FrameProfile`. It depends on the text only, so it
is read once (at write time when the caller remembers its statements) and kept by a digest of
the text. A *verdict* is the scorer's probability that the newer text ends the older one; for
fixed weights it never changes, so it is kept by the digests of both texts.

Each store is a small Protocol with an in-memory default (bounded, least recently used first
out), which is also the fake tests use.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from shared_core.detectors.frames import FrameProfile
from shared_core.errors import InvalidInputError

Digest = bytes
PairDigest = tuple[Digest, Digest]
K = TypeVar("K")
V = TypeVar("V")


def text_digest(text: str) -> Digest:
    """The key a text's reading and verdicts are kept under (16 bytes of BLAKE2b)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class Reading:
    """One statement text as the pair rule sees it: its subject (None: the rule cannot tell)
    and its frame profile (None: no vector was available to read it)."""

    subject: str | None
    profile: FrameProfile | None


@runtime_checkable
class ReadingStore(Protocol):
    """Readings by text digest."""

    def get_many(self, digests: Sequence[Digest]) -> dict[Digest, Reading]: ...

    def put_many(self, readings: Mapping[Digest, Reading]) -> None: ...


@runtime_checkable
class VerdictStore(Protocol):
    """Pair verdicts (P(newer ends older)) by (older digest, newer digest)."""

    def get_many(self, pairs: Sequence[PairDigest]) -> dict[PairDigest, float]: ...

    def put_many(self, verdicts: Mapping[PairDigest, float]) -> None: ...


class _LRU(Generic[K, V]):
    """A thread-safe mapping that forgets the least recently used entries beyond ``size``."""

    def __init__(self, size: int, field: str) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidInputError(field, f"is {size!r}", "pass a positive integer")
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, keys: Iterable[K]) -> dict[K, V]:
        found: dict[K, V] = {}
        with self._lock:
            for key in keys:
                if key in self._items:
                    self._items.move_to_end(key)
                    found[key] = self._items[key]
        return found

    def put_many(self, items: Mapping[K, V]) -> None:
        with self._lock:
            for key, value in items.items():
                self._items[key] = value
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class InMemoryReadings(_LRU[Digest, Reading]):
    """The default :class:`ReadingStore`: the ``size`` most recently used readings."""

    def __init__(self, *, size: int = 200_000) -> None:
        super().__init__(size, "size")


class InMemoryVerdicts(_LRU[PairDigest, float]):
    """The default :class:`VerdictStore`: the ``size`` most recently used pair verdicts."""

    def __init__(self, *, size: int = 1_000_000) -> None:
        super().__init__(size, "size")
