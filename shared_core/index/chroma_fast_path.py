"""What proves a current search of :class:`~shared_core.index.chroma.ChromaIndex` exact when it
asks the ``live`` collection alone, unfiltered: one :class:`Book` per namespace, kept in the
state collection's metadata. Pure (no collection is called here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shared_core.clock import OPEN, Instant
from shared_core.index.chroma_records import is_live
from shared_core.ledger.results import VersionRecord

EARLIEST = -(2**63)
FUTURE_LIMIT = 1_000
"""Beyond this many pending future-dated rows, a current search takes the filtered path."""


@dataclass(frozen=True)
class Book:
    """What one namespace's fast path relies on; every field errs only on the safe side.

    A search valid at T as known now sees exactly the live rows with ``valid_from <= T`` when
    T is at or after every ``recorded_at`` (so a live row that is not future-dated started by
    then) and after the end of every believed row that is not live (so none of them is visible).
    """

    namespace: str
    max_recorded_at: Instant = EARLIEST
    max_valid_to: Instant = EARLIEST  # of believed rows that are not live (all have an end)
    future: Mapping[int, Instant] = field(default_factory=dict)  # live row id -> valid_from

    def after(self, rows: Sequence[VersionRecord]) -> Book:
        """This book once ``rows`` (of this namespace) are applied."""
        recorded = max([self.max_recorded_at, *(r.recorded_at for r in rows)])
        ended = [r.valid_to for r in rows if r.believed and r.valid_to != OPEN]
        future = dict(self.future)
        for r in rows:
            future.pop(r.row_id, None)
            if is_live(r) and r.valid_from > r.recorded_at:
                future[r.row_id] = r.valid_from
        future = {row: start for row, start in future.items() if start > recorded}
        return Book(self.namespace, recorded, max([self.max_valid_to, *ended]), future)

    def without(self, row_ids: set[int]) -> Book:
        """This book once these rows are removed from the index."""
        future = {r: v for r, v in self.future.items() if r not in row_ids}
        return Book(self.namespace, self.max_recorded_at, self.max_valid_to, future)

    def pending(self, valid_at: Instant | None, known_at: Instant | None) -> int | None:
        """How many live rows a current search at ``valid_at`` must skip, or None when the
        fast path would not be exact (a past time, another record time, history)."""
        if known_at is not None or valid_at is None:
            return None
        if valid_at < self.max_recorded_at or valid_at < self.max_valid_to:
            return None
        pending = len(self.hidden(valid_at))
        return pending if pending <= FUTURE_LIMIT else None

    def hidden(self, valid_at: Instant) -> set[int]:
        """The live rows a current search at ``valid_at`` must skip (not yet valid then)."""
        return {row for row, start in self.future.items() if start > valid_at}

    def dump(self) -> str:
        """The book as kept in the state collection's metadata (JSON)."""
        state = [self.namespace, self.max_recorded_at, self.max_valid_to, [*self.future.items()]]
        return json.dumps(state)

    @staticmethod
    def load(text: str) -> Book:
        """The book :meth:`dump` wrote."""
        namespace, recorded, ended, future = json.loads(text)
        return Book(namespace, recorded, ended, {int(r): int(v) for r, v in future})
