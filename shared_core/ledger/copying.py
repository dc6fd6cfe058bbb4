"""Copying a ledger into another store (an embedded SQLite file into PostgreSQL, say), checked.

:func:`copy_ledger` moves every row, history and retired versions included, ids and record
times unchanged, then checks the copy: the same rows, and the same ``as_of`` answers at sampled
(valid_at, known_at) points of every namespace.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from shared_core.clock import OPEN, from_instant
from shared_core.ledger.ledger import Ledger


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy_ledger` copied and checked; ``mismatches`` is empty for a faithful copy."""

    statements: int
    versions: int
    checked: int  # as_of points compared
    mismatches: tuple[str, ...]

    @property
    def faithful(self) -> bool:
        return not self.mismatches


def copy_ledger(source: Ledger, target: Ledger, *, samples: int = 200, seed: int = 0) -> CopyReport:
    """Copy every row of ``source`` into the new, empty ``target`` (one transaction), then
    compare the two: their rows, and ``as_of`` at ``samples`` seeded (namespace, valid_at,
    known_at) points drawn from the times the ledger holds."""
    dump = source.dump()
    target.load(dump)
    mismatches: list[str] = []
    if target.export() != (list(dump.statements), list(dump.versions)):
        mismatches.append("the copied rows differ from the source's")
    namespaces = sorted({row.namespace for row in dump.statements})
    ends = {v.valid_to for v in dump.versions if v.valid_to != OPEN}
    valid = sorted({v.valid_from for v in dump.versions} | ends)
    known = sorted({v.recorded_at for v in dump.versions})
    rng = random.Random(seed)
    checked = 0
    for _ in range(samples if namespaces and known else 0):
        namespace = rng.choice(namespaces)
        valid_at, known_at = from_instant(rng.choice(valid)), from_instant(rng.choice(known))
        asked = (
            ledger.as_of(namespace=namespace, valid_at=valid_at, known_at=known_at)
            for ledger in (source, target)
        )
        if next(asked) != next(asked):
            mismatches.append(
                f"as_of differs in {namespace!r} at {valid_at} as known at {known_at}"
            )
        checked += 1
    return CopyReport(len(dump.statements), len(dump.versions), checked, tuple(mismatches))
