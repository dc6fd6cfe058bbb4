"""Applies the ledger's change feed to a vector index (the index mirrors the ledger).

The index stores the ledger's change-feed cursor with the records it applied, so catching up
is "read the changes since the index's cursor, apply them, store the new cursor": idempotent,
cheap when nothing changed, and correct after any crash between a ledger write and an index
write (the ledger committed, the index did not store the new cursor, so the changes come again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shared_core.embedders.base import Embedder, check_vectors, embedding_call
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import ChangeCursor, VersionRecord
from shared_core.memory.hits import ReconcileReport

PAGE = 5_000
"""Version rows per change-feed page (bounds memory when a large ledger is indexed anew)."""


class IndexSync:
    """Applies the ledger's change feed to an index, finding or computing each fact's vector."""

    def __init__(
        self, ledger: LedgerStore, index: VectorIndex, embedder: Embedder, *, batch: int = 64
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._embedder = embedder
        self._batch = batch

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The embedder's vectors for ``texts``, checked for count, dimension and finiteness."""
        vectors = embedding_call(self._name, lambda: self._embedder.embed_documents(list(texts)))
        return check_vectors(
            vectors, count=len(texts), dimension=self._embedder.dimension, source=self._name
        )

    def catch_up(
        self,
        fresh: Mapping[str, Vector] | None = None,
        *,
        start: ChangeCursor | None = None,
        known: Mapping[str, Vector] | None = None,
    ) -> ReconcileReport:
        """Apply every change since ``start`` (default: the index's cursor), holding the
        ledger's mirror lock (other processes mirroring the same ledger into the same index
        wait, then find the cursor moved on).

        ``fresh`` maps texts to vectors the caller just computed, so new statements are not
        embedded twice, and ``known`` maps fact ids to theirs (deferred writes': it wins over
        ``fresh``); other vectors come from the index, and only then from the embedder.
        """
        with self._ledger.mirror_lock():
            return self._catch_up(fresh or {}, start, known or {})

    def _catch_up(
        self,
        fresh: Mapping[str, Vector],
        start: ChangeCursor | None,
        known: Mapping[str, Vector] | None = None,
    ) -> ReconcileReport:
        cursor = self._index.cursor() if start is None else start
        applied = embedded = 0
        while True:
            page = self._ledger.changes(cursor, limit=PAGE)
            if _behind(page.cursor, cursor):  # the index mirrors another ledger: start over
                return self._rebuild()
            if page.records or page.cursor != cursor:
                vectors, computed = self._vectors(page.records, fresh, known or {})
                self._index.apply(page.records, vectors, page.cursor)
                applied += len(page.records)
                embedded += computed
            cursor = page.cursor
            if not page.more:
                return ReconcileReport(applied=applied, embedded=embedded)

    def rebuild(self) -> ReconcileReport:
        """Re-apply every version row and drop index rows the ledger does not have."""
        with self._ledger.mirror_lock():
            return self._rebuild()

    def _rebuild(self) -> ReconcileReport:
        report = self._catch_up({}, ChangeCursor())
        _, versions = self._ledger.export()
        known = {row.row_id for row in versions}
        orphans = sorted(self._index.row_ids() - known)
        if orphans:
            self._index.remove(orphans)
        return ReconcileReport(report.applied, report.embedded, removed=len(orphans))

    def _vectors(
        self,
        records: Sequence[VersionRecord],
        fresh: Mapping[str, Vector],
        known: Mapping[str, Vector],
    ) -> tuple[dict[str, Vector], int]:
        texts = {record.fact_id: record.text for record in records}
        vectors: dict[str, Vector] = {
            fact_id: known[fact_id] if fact_id in known else fresh[text]
            for fact_id, text in texts.items()
            if fact_id in known or text in fresh
        }
        missing = [fact_id for fact_id in texts if fact_id not in vectors]
        if missing:
            vectors.update(self._index.vectors(missing))
        missing = [fact_id for fact_id in texts if fact_id not in vectors]
        for start in range(0, len(missing), self._batch):
            chunk = missing[start : start + self._batch]
            vectors.update(zip(chunk, self.embed([texts[f] for f in chunk]), strict=True))
        return vectors, len(missing)

    @property
    def _name(self) -> str:
        return f"embedder {self._embedder.name!r}"


def _behind(ledger: ChangeCursor, index: ChangeCursor) -> bool:
    return ledger.after_row < index.after_row or ledger.retired_from < index.retired_from
