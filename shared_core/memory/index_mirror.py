"""A memory's index kept up with its ledger (the source of truth).

:class:`~shared_core.memory.index_sync.IndexSync` applies the change feed;
:class:`IndexMirror` is a memory's side of it: when to catch up and what a failure becomes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from shared_core.embedders.base import Embedder
from shared_core.errors import IndexSyncError, TemporalRagError, VectorIndexError
from shared_core.index.base import SetAsideIndex, Vector, VectorIndex
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import WriteResult
from shared_core.memory.hits import ReconcileReport
from shared_core.memory.index_sync import IndexSync

logger = logging.getLogger(__name__)

DEFERRED_WRITES = 256
"""Writes whose index catch-up may wait for the next read (:meth:`IndexMirror.defer`); the
next deferred write then catches up (one batch for all of them)."""


class IndexMirror:
    """A memory's index kept up with its ledger: catches up only when the ledger committed
    something since, and turns any index failure into IndexSyncError. Not locked itself: the
    memory's reader and writer call it under the memory's lock."""

    def __init__(self, ledger: LedgerStore, index: VectorIndex, embedder: Embedder) -> None:
        self._ledger = ledger
        self._index = index
        self._embedder = embedder
        self._sync = IndexSync(ledger, index, embedder)
        self._synced_at: tuple[int, int] | None = None  # ledger revision the index mirrors
        self._pending: dict[str, Vector] = {}  # deferred writes' vectors, by fact id
        self._deferred = 0  # writes deferred since the last catch-up

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The embedder's vectors for new statements' ``texts`` (see :meth:`IndexSync.embed`)."""
        return self._sync.embed(texts)

    def catch_up(self, vectors: Mapping[str, Vector] | None = None) -> None:
        """Apply the ledger's changes to the index, unless nothing committed since the last
        successful catch-up (the ledger's revision is unchanged: then there is nothing to do).
        ``vectors`` maps texts just embedded to their vectors (they are not embedded again,
        nor are those of deferred writes)."""
        revision = self._ledger.revision()
        if revision == self._synced_at:
            return
        self._synced(lambda: self._sync.catch_up(vectors, known=self._pending))
        self._synced_at = revision
        self._pending.clear()
        self._deferred = 0

    def defer(self, vectors: Mapping[str, Vector], results: Sequence[WriteResult]) -> None:
        """Leave a committed write's catch-up to the next read, write or close: the vectors of
        its facts' texts (``vectors``) are kept until then, by fact id (two writes' equal texts
        may have different vectors); once :data:`DEFERRED_WRITES` writes wait, catch up now,
        all of them in one batch."""
        for result in results:
            fact = result.fact
            if fact is not None and fact.text in vectors:
                self._pending[fact.id] = vectors[fact.text]
        self._deferred += 1
        if self._deferred >= DEFERRED_WRITES:
            self.catch_up()

    def flush(self) -> None:
        """Catch up on deferred writes, if any (on close): a failure is logged, not raised (the
        ledger holds the writes; the next open or search applies them)."""
        if not self._deferred:
            return
        try:
            self.catch_up()
        except TemporalRagError as exc:
            self._pending.clear()
            self._deferred = 0
            logger.warning("deferred index writes were not applied on close: %s", exc)

    def reconcile(self, *, full: bool) -> ReconcileReport:
        """Catch up (``full``: rebuild, then check the storage) whatever the revision says.

        When a full rebuild finds the storage of a :class:`SetAsideIndex` unreadable (a
        damaged folder), the index is moved aside, never deleted (logged, and named in
        ``ReconcileReport.moved_to``), and rebuilt from the ledger in a new one."""
        if not full:
            report = self._synced(lambda: self._sync.catch_up(known=self._pending))
            self._pending.clear()
            self._deferred = 0
            return report
        index = self._index
        self._pending.clear()  # a rebuild reads every vector from the index (or embeds it)
        self._deferred = 0
        try:
            report = self._sync.rebuild()
            if isinstance(index, SetAsideIndex):
                index.check()
            return report
        except Exception as exc:
            if not (isinstance(index, SetAsideIndex) and storage_failure(exc)):
                raise IndexSyncError(
                    f"the index could not be rebuilt from the ledger ({exc}); the ledger is "
                    "intact: reconcile(full=True) again once the cause is fixed"
                ) from exc
            damage = exc
        self._synced_at = None
        try:
            moved = index.set_aside(now=datetime.now(UTC))
        except Exception as exc:
            raise IndexSyncError(
                f"the index cannot be read ({damage}) and could not be moved aside ({exc}); "
                "the ledger is intact: free the index's folder (permissions, disk space), then "
                "reconcile(full=True) again"
            ) from exc
        logger.warning(
            "the index could not be read (%s); moved it to %s and rebuilding it from the ledger",
            damage,
            moved,
        )
        try:
            self._index.bind(embedder=self._embedder.name, dimension=self._embedder.dimension)
            report = self._sync.rebuild()
        except Exception as exc:
            raise IndexSyncError(
                f"the damaged index was moved to {moved}, but rebuilding it from the ledger "
                f"failed ({exc}); the ledger is intact: reconcile(full=True) again once the "
                "cause is fixed"
            ) from exc
        return replace(report, moved_to=str(moved))

    def _synced(self, operation: Callable[[], ReconcileReport]) -> ReconcileReport:
        """Run an index update; any failure becomes IndexSyncError (the ledger is intact), whose
        advice is one that can work: a rebuild when the index's storage failed and can be set
        aside, else a retry."""
        try:
            return operation()
        except IndexSyncError:
            raise
        except Exception as exc:
            if isinstance(self._index, SetAsideIndex) and storage_failure(exc):
                advice = (
                    "if it stays so, reconcile(full=True) moves the damaged index aside and "
                    "rebuilds it from the ledger"
                )
            else:
                advice = "reconcile() applies it (so do the next search and open) once fixed"
            raise IndexSyncError(
                f"the ledger holds the write but the index could not take it ({exc}); {advice}"
            ) from exc


def storage_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a failure of the index's storage: a
    VectorIndexError translated from the storage's own error (an embedder's failure, bad input
    or a closed index is not one)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        cause = current.__cause__
        if (
            isinstance(current, VectorIndexError)
            and cause is not None
            and not isinstance(cause, TemporalRagError)
        ):
            return True
        current = cause
    return False
