"""A memory's index kept up with its ledger (the source of truth).

:class:`~shared_core.memory.index_sync.IndexSync` applies the change feed;
:class:`IndexMirror` is a memory's side of it: when to catch up and what a failure becomes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from shared_core.embedders.base import Embedder
from shared_core.errors import IndexSyncError
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.protocol import LedgerStore
from shared_core.memory.hits import ReconcileReport
from shared_core.memory.index_sync import IndexSync


class IndexMirror:
    """A memory's index kept up with its ledger: catches up only when the ledger committed
    something since, and turns any index failure into IndexSyncError. Not locked itself: the
    memory's reader and writer call it under the memory's lock."""

    def __init__(self, ledger: LedgerStore, index: VectorIndex, embedder: Embedder) -> None:
        self._ledger = ledger
        self._sync = IndexSync(ledger, index, embedder)
        self._synced_at: tuple[int, int] | None = None  # ledger revision the index mirrors

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The embedder's vectors for new statements' ``texts`` (see :meth:`IndexSync.embed`)."""
        return self._sync.embed(texts)

    def catch_up(self, vectors: Mapping[str, Vector] | None = None) -> None:
        """Apply the ledger's changes to the index, unless nothing committed since the last
        successful catch-up (the ledger's revision is unchanged: then there is nothing to do).
        ``vectors`` maps texts just embedded to their vectors (they are not embedded again)."""
        revision = self._ledger.revision()
        if revision == self._synced_at:
            return
        self._synced(lambda: self._sync.catch_up(vectors))
        self._synced_at = revision

    def reconcile(self, *, full: bool) -> ReconcileReport:
        """Catch up (``full``: rebuild) whatever the revision says."""
        return self._synced(self._sync.rebuild if full else self._sync.catch_up)

    def _synced(self, operation: Callable[[], ReconcileReport]) -> ReconcileReport:
        """Run an index update; any failure becomes IndexSyncError (the ledger is intact)."""
        try:
            return operation()
        except IndexSyncError:
            raise
        except Exception as exc:
            raise IndexSyncError(
                f"the ledger holds the write but the index could not take it ({exc}); "
                "reconcile() brings the index up to date"
            ) from exc
