"""A PostgreSQL parallel write's changes, held back until its commit and stamped there.

A parallel write (``WriteReads.parallel``, see :mod:`shared_core.ledger.postgres.backend`)
plans with the record time it read and with provisional seqs and row ids.
:class:`StampedWrite` queues its inserts and updates instead of sending them, keeps every valid
time its plan was made against, and at the commit sends one ``stamp_write`` call
(schema.STAMPING) followed by the changes, stamped on the server. It refuses
(:class:`ParallelWriteRefused`, nothing kept) a write that reads rows after queueing changes;
the server refuses one whose plan or result the stamp would change.
"""

from __future__ import annotations

from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.ledger.backend import ParallelWriteRefused
from shared_core.ledger.postgres import sql
from shared_core.supersession import StreamState


class StampedWrite:
    """The open parallel write's queued changes, the valid times it planned against, and its
    stamp (empty between writes)."""

    def __init__(self) -> None:
        self._queued: list[tuple[str, tuple[Any, ...]]] = []  # (plain SQL, parameters)
        self._bounds: set[Instant] = set()
        self._stamp: Any = None

    def start(self, times: tuple[Instant, ...]) -> None:
        """A new write, whose facts have these explicit valid times."""
        self.clear()
        self._bounds.update(times)

    def clear(self) -> None:
        self._queued.clear()
        self._bounds.clear()
        self._stamp = None

    def queue(self, sql: str, params: tuple[Any, ...]) -> None:
        """Hold back a change (one of sql.STAMPED's plain statements)."""
        self._queued.append((sql, params))

    def loaded(self, state: StreamState) -> None:
        """The write read this state of a stream: its plan depends on these valid times, and
        its result may show these versions as stored (their record times too)."""
        for statement in state.statements:
            self._bounds.add(statement.valid_from)
            if statement.valid_to is not None:
                self._bounds.add(statement.valid_to)
        for version in state.versions:
            self._bounds.update((version.valid_from, version.valid_to))
            if version.recorded_at is not None:  # never after the planned record time
                self._bounds.add(version.recorded_at)

    def reading(self) -> None:
        """Refuse a read after a queued change: the database does not hold the change yet."""
        if self._queued:
            raise ParallelWriteRefused("the write reads rows after changing some")

    def send(self, conn: Any, *, lock: int, planned: Instant, seqs: int, rows: int) -> None:
        """Queue, on ``conn`` before its COMMIT, the stamp (under advisory lock ``lock``) of a
        write planned at record time ``planned`` with ``seqs`` provisional seqs and ``rows``
        provisional row ids, then the changes. Refused at the stamp if it would move past a
        time the write planned against, or move at all when ``planned`` is itself such a time
        (see schema.STAMPING)."""
        limit, exact = OPEN, False
        if self._queued:
            limit = min((bound for bound in self._bounds if bound > planned), default=OPEN)
            exact = planned in self._bounds
        params = (lock, planned, limit, exact, seqs, rows)
        self._stamp = conn.execute(sql.STAMP_WRITE, params)
        for plain, values in self._queued:
            conn.execute(sql.STAMPED[plain], values)

    def stamped_at(self) -> Instant:
        """The record time the committed write was stamped with."""
        return int(self._stamp.fetchone()[0])


__all__ = ["StampedWrite"]
