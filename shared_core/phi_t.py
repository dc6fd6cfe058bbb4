"""The read-time operator Phi_T (GC-Mem): drop retrieved chunks that a newer one contradicts.

Given the retrieved candidates R_k, :func:`temporal_dominance` keeps c_i unless some c_j in R_k
is strictly newer (tau_j > tau_i) and a :class:`ConflictDetector` says c_j contradicts c_i. It is
a single pass over R_k, not an iteration: c_i goes even when its dominator is itself dominated,
so a chain A -> B -> C keeps only C, and applying the operator twice equals applying it once.

Two choices are deliberate and visible:

- Equal timestamps never dominate each other (neither is newer), whatever a detector says.
- A candidate without a timestamp is never removed and never removes another: without a time,
  "newer" has no meaning, and dropping undated evidence silently would be worse than keeping it.

Candidates in different namespaces are never compared. Nothing here mutates its inputs.

:func:`atemporal_dominance` is the same operator for async callers: a detector may offer a
native async form, ``afind_conflicts`` with the contract of ``find_conflicts`` (the LLM judge
awaits its LLM there; the key detector and :class:`NeverConflicts` answer inline), and any
other detector runs in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from shared_core.clock import require_aware
from shared_core.errors import InvalidInputError
from shared_core.facts import DEFAULT_NAMESPACE, Fact, FactKey, ObjectValue, freeze_metadata


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One retrieved chunk as Phi_T sees it: text, a timestamp tau and, if known, a key."""

    id: str
    text: str
    timestamp: datetime | None  # tau; None: undated (never removed, never removes)
    namespace: str = DEFAULT_NAMESPACE
    key: FactKey | None = None  # normalised (namespace, subject, relation), for keyed facts
    object: ObjectValue | None = None
    score: float | None = None  # the retriever's relevance score, passed through
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInputError("id", "is empty or not a string", "give every candidate an id")
        if not isinstance(self.text, str):
            raise InvalidInputError("text", "is not a string", "pass the chunk's text")
        if self.timestamp is not None:
            require_aware(self.timestamp, "timestamp")
        if self.key is not None and self.key.namespace != self.namespace:
            raise InvalidInputError(
                "key",
                f"is in namespace {self.key.namespace!r}, not {self.namespace!r}",
                "build the candidate with the key's namespace",
            )
        object.__setattr__(self, "metadata", freeze_metadata(self.metadata, "metadata"))

    @classmethod
    def from_fact(cls, fact: Fact, *, score: float | None = None) -> Candidate:
        """A stored fact as a candidate; tau is when it became true (``valid_from``)."""
        return cls(
            id=fact.id,
            text=fact.text,
            timestamp=fact.valid_from,
            namespace=fact.namespace,
            key=fact.key,
            object=fact.object,
            score=score,
            metadata=fact.metadata,
        )

    def is_newer_than(self, other: Candidate) -> bool:
        """Strictly newer, both dated and in the same namespace: the only way to dominate."""
        return (
            self.timestamp is not None
            and other.timestamp is not None
            and self.namespace == other.namespace
            and self.timestamp > other.timestamp
        )


@dataclass(frozen=True, slots=True)
class Conflict:
    """The newer candidate (by index) makes the older one no longer true."""

    older: int
    newer: int
    detector: str
    score: float | None = None


@runtime_checkable
class ConflictDetector(Protocol):
    """kappa: finds (older, newer) pairs among candidates where the newer contradicts the older.

    It may report only one dominator per older candidate (that is all Phi_T needs), may ignore
    the query, and must not report pairs across namespaces. ``name`` labels its verdicts. It
    may also define ``async afind_conflicts(candidates, *, query=None)``, the same verdicts for
    async callers (see :func:`atemporal_dominance`).
    """

    name: str

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]: ...


@dataclass(frozen=True, slots=True)
class Shadow:
    """A removed candidate and why: which candidate dominated it, by which detector, how sure."""

    candidate: Candidate
    dominated_by: str
    detector: str
    score: float | None = None


@dataclass(frozen=True, slots=True)
class DominanceResult:
    """The kept candidates in their input (rank) order, and the removed shadows."""

    kept: tuple[Candidate, ...]
    shadows: tuple[Shadow, ...]


def shadows_by_survivor(result: DominanceResult) -> dict[str, tuple[Shadow, ...]]:
    """Each removed candidate under the kept candidate its dominator chain ends at (A -> B -> C:
    A and B both under C), keyed by the survivor's id. Readers attach shadows this way."""
    dominator = {shadow.candidate.id: shadow.dominated_by for shadow in result.shadows}
    groups: dict[str, list[Shadow]] = {}
    for shadow in result.shadows:
        root = shadow.dominated_by
        while root in dominator:  # strictly newer at each step, so this ends
            root = dominator[root]
        groups.setdefault(root, []).append(shadow)
    return {survivor: tuple(found) for survivor, found in groups.items()}


def temporal_dominance(
    candidates: Iterable[Candidate], detector: ConflictDetector, *, query: str | None = None
) -> DominanceResult:
    """Phi_T: remove every candidate that a strictly newer candidate contradicts."""
    pool = tuple(candidates)
    _check_unique_ids(pool)
    return _dominance(pool, detector.find_conflicts(pool, query=query))


async def atemporal_dominance(
    candidates: Iterable[Candidate], detector: ConflictDetector, *, query: str | None = None
) -> DominanceResult:
    """:func:`temporal_dominance` for async callers, with :func:`afind_conflicts`."""
    pool = tuple(candidates)
    _check_unique_ids(pool)
    return _dominance(pool, await afind_conflicts(detector, pool, query=query))


async def afind_conflicts(
    detector: ConflictDetector, candidates: Sequence[Candidate], *, query: str | None = None
) -> list[Conflict]:
    """The detector's verdicts for an async caller: its ``afind_conflicts`` awaited when it has
    one (on the running loop), else ``find_conflicts`` in a worker thread (a model's work)."""
    native = getattr(detector, "afind_conflicts", None)
    if native is not None:
        found: list[Conflict] = await native(candidates, query=query)
        return found
    return await asyncio.to_thread(detector.find_conflicts, candidates, query=query)


def _dominance(pool: Sequence[Candidate], conflicts: Iterable[Conflict]) -> DominanceResult:
    dominated: dict[int, Conflict] = {}
    for conflict in conflicts:
        if not _honoured(conflict, pool):
            continue  # e.g. equal or missing timestamps: the operator's rules win
        previous = dominated.get(conflict.older)
        if previous is None or _prefer(conflict, previous, pool):
            dominated[conflict.older] = conflict
    kept = tuple(c for i, c in enumerate(pool) if i not in dominated)
    shadows = tuple(
        Shadow(pool[i], pool[c.newer].id, c.detector, c.score) for i, c in sorted(dominated.items())
    )
    return DominanceResult(kept, shadows)


def _check_unique_ids(pool: Sequence[Candidate]) -> None:
    seen: set[str] = set()
    for index, candidate in enumerate(pool):
        if not isinstance(candidate, Candidate):
            raise InvalidInputError(
                f"candidates[{index}]", f"is a {type(candidate).__name__}", "pass Candidate objects"
            )
        if candidate.id in seen:
            raise InvalidInputError(
                f"candidates[{index}].id",
                f"{candidate.id!r} appears twice",
                "remove duplicates first (see merge_candidates)",
            )
        seen.add(candidate.id)


def _honoured(conflict: Conflict, pool: Sequence[Candidate]) -> bool:
    in_range = 0 <= conflict.older < len(pool) and 0 <= conflict.newer < len(pool)
    return in_range and pool[conflict.newer].is_newer_than(pool[conflict.older])


def _prefer(new: Conflict, old: Conflict, pool: Sequence[Candidate]) -> bool:
    """The newest dominator is reported; at equal times, the surer verdict."""
    new_time, old_time = pool[new.newer].timestamp, pool[old.newer].timestamp
    assert new_time is not None
    assert old_time is not None
    if new_time != old_time:
        return new_time > old_time
    return (new.score or 0.0) > (old.score or 0.0)


def ordered_pairs(
    candidates: Sequence[Candidate],
    *,
    keep: Callable[[Candidate, Candidate], bool] | None = None,
) -> list[tuple[int, int]]:
    """Every (older, newer) index pair Phi_T could act on, optionally narrowed by ``keep``.

    For detectors that judge pairs one by one (NLI, LLM); quadratic in k by nature.
    """
    pairs = []
    for older, first in enumerate(candidates):
        for newer, second in enumerate(candidates):
            if second.is_newer_than(first) and (keep is None or keep(first, second)):
                pairs.append((older, newer))
    return pairs


class AnyConflict:
    """Fires when any of several detectors fires (e.g. the key rule, then a model for prose)."""

    def __init__(self, *detectors: ConflictDetector) -> None:
        if not detectors:
            raise InvalidInputError("detectors", "is empty", "pass at least one detector")
        self.detectors = detectors
        self.name = "any(" + ",".join(d.name for d in detectors) + ")"

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        found: list[Conflict] = []
        for detector in self.detectors:
            found.extend(detector.find_conflicts(candidates, query=query))
        return found

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """:meth:`find_conflicts` for async callers (each detector as
        :func:`afind_conflicts` runs it)."""
        found: list[Conflict] = []
        for detector in self.detectors:
            found.extend(await afind_conflicts(detector, candidates, query=query))
        return found


class NeverConflicts:
    """A detector that never fires: Phi_T with it changes nothing (a baseline and a test fake)."""

    name = "never"

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        return []

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        return []
