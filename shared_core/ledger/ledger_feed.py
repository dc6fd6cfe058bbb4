"""The ledger as a source of rows: the change feed a vector index mirrors, and copies.

:class:`LedgerFeed` is that side of :class:`~shared_core.ledger.ledger.Ledger` (a mixin: it
reads through the ledger's backend, under its lock): ``changes`` since a cursor, the
``revision`` that says whether to ask, the ``mirror_lock`` that lets one mirror apply them at a
time; ``export`` and ``dump`` of every row, and ``load`` of a dump into a new ledger (what
:func:`~shared_core.ledger.copying.copy_ledger` uses).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager

from shared_core.errors import InvalidInputError, InvalidOperationError
from shared_core.ledger.backend import Backend
from shared_core.ledger.records import LedgerDump, StatementRow, VersionRow
from shared_core.ledger.results import ChangeCursor, ChangeSet
from shared_core.ledger.views import version_record

__all__ = ["LedgerFeed"]


class LedgerFeed:
    """A :class:`~shared_core.ledger.ledger.Ledger`'s rows for mirrors and copies."""

    _backend: Backend
    _lock: threading.RLock

    # ----------------------------------------------------------------- change feed
    def changes(self, since: ChangeCursor | None = None, *, limit: int = 10_000) -> ChangeSet:
        """Version rows inserted or retired since ``since`` (everything when None), as they
        stand now, with the cursor to continue from; ``more`` says a page limit was reached.

        This is how a vector index mirrors the ledger: apply the records, store the cursor.
        A returned cursor behind ``since`` means ``since`` came from another ledger (or a
        newer copy of this one): rebuild the mirror from ``ChangeCursor()``.
        """
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInputError("limit", f"{limit!r} is not a positive int", "use e.g. 10000")
        since = since if since is not None else ChangeCursor()
        with self._lock, self._backend.snapshot():
            last_time, _ = self._backend.last_record()
            seen = self._backend.count_retired_at(since.retired_from) == since.retired_at_from
            rows = self._backend.changed_versions(
                since.after_row, since.retired_from, strict=seen, limit=limit
            )
            last_row = self._backend.last_row_id()
            at_last = self._backend.count_retired_at(last_time)
        records = tuple(version_record(row) for row in rows)
        inserted = [r.row_id for r in records if r.row_id > since.after_row]
        if len(inserted) == limit and inserted[-1] < last_row:
            # every row up to inserted[-1] was sent as it stands now: the next page starts
            # from now, or each page would send the retirements of every page before it again
            return ChangeSet(records, ChangeCursor(inserted[-1], last_time, at_last), more=True)
        return ChangeSet(records, ChangeCursor(last_row, last_time, at_last))

    def revision(self) -> tuple[int, int]:
        """A value that changes whenever a write commits (here or in another process): equal
        revisions mean nothing changed in between, so a mirror need not ask for changes."""
        with self._lock:
            return self._backend.revision()

    def mirror_lock(self) -> AbstractContextManager[None]:
        """Held while a vector index applies this ledger's change feed, so that mirrors in
        several threads or processes apply it one at a time (writers do not wait for it)."""
        return self._backend.mirror_lock()

    # ----------------------------------------------------------------- copies
    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        """Every statement and version record ever stored (nothing is ever deleted)."""
        with self._lock, self._backend.snapshot():
            return self._backend.export()

    def dump(self) -> LedgerDump:
        """Every row as it stands (relations, keys, statements, versions, the record clock),
        read in one consistent view: what :meth:`load` stores into another ledger."""
        with self._lock, self._backend.snapshot():
            statements, versions = self._backend.export()
            return LedgerDump(
                relations=tuple(sorted(self._backend.relations().items())),
                keys=tuple(sorted(self._backend.keys().items())),
                statements=tuple(statements),
                versions=tuple(versions),
                last_record=self._backend.last_record(),
            )

    def load(self, dump: LedgerDump) -> None:
        """Store ``dump`` (of another ledger) into this new, empty ledger, all or nothing;
        InvalidOperationError, with nothing changed, when this ledger holds anything."""
        with self._lock, self._backend.transaction():
            if (
                self._backend.last_record() != (0, 0)
                or self._backend.last_row_id()
                or self._backend.relations()
            ):
                raise InvalidOperationError(
                    "this ledger is not empty: load a dump only into a new ledger "
                    "(nothing was changed)"
                )
            self._backend.restore(dump)
