"""The ledger's side of one search: which rows it may return, each row asked once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared_core.clock import from_instant
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import StoredVersion
from shared_core.memory.query import Query


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranked row's ledger version, its best score and whether only the buffer found it."""

    version: StoredVersion
    score: float  # the best cosine similarity over the query variants
    from_buffer: bool


class SearchRows:
    """The ledger's answers for the rows one search reads, each row asked once: the index may
    ask which of its candidates are visible (the ledger is the source of truth), and the
    ranked rows are then resolved from what was read."""

    def __init__(
        self, ledger: LedgerStore, query: Query, read: Sequence[StoredVersion] = ()
    ) -> None:
        self._ledger = ledger
        self._query = query
        self._known = None if query.known_at is None else from_instant(query.known_at)
        self._versions: dict[int, StoredVersion | None] = {v.record.row_id: v for v in read}
        self._shown: dict[int, bool] = {}
        self._listed: set[int] | None = None  # every visible row, once listed
        self._listing: tuple[int, list[int] | None] | None = None  # (limit, the ledger's answer)

    def __call__(self, row_ids: Sequence[int]) -> set[int]:
        return self.visible(row_ids)

    def list_rows(self, limit: int) -> list[int] | None:
        """Every row visible at the query's times (before its ``where``), when at most
        ``limit`` (:class:`~shared_core.index.base.RowLister`)."""
        if self._listing is not None:  # one scan of the ledger per search, however many vectors
            asked, answer = self._listing
            if answer is not None and len(answer) <= limit:
                return answer
            if answer is None and asked >= limit:
                return None
        query = self._query
        listed = self._ledger.list_visible_rows(
            namespace=query.options.namespace,
            valid_at=None if query.valid_at is None else from_instant(query.valid_at),
            known_at=self._known,
            limit=limit,
        )
        self._listing = limit, listed
        if listed is not None:
            self._listed = set(listed)
        return listed

    def versions(self, row_ids: Sequence[int]) -> dict[int, StoredVersion | None]:
        """Each row's version (None: the ledger does not show it, an index that lags behind)."""
        missing = [r for r in dict.fromkeys(row_ids) if r not in self._versions]
        if missing:
            self._versions.update(dict.fromkeys(missing))
            read = self._ledger.versions(
                row_ids=missing,
                known_at=self._known,
                attributes=self._query.options.where is not None,
            )
            self._versions.update((v.record.row_id, v) for v in read)
        return {r: self._versions[r] for r in row_ids}

    def visible(self, row_ids: Sequence[int]) -> set[int]:
        """The rows among ``row_ids`` that the query may return. Without a ``where`` the ledger
        answers without decoding the rows; a filter needs their attributes."""
        query = self._query
        if query.options.where is not None:
            found = self.versions(row_ids).items()
            return {row for row, v in found if v is not None and query.shows(v)}
        if self._listed is not None:
            return {r for r in row_ids if r in self._listed}
        missing = [r for r in dict.fromkeys(row_ids) if r not in self._shown]
        if missing:
            valid = None if query.valid_at is None else from_instant(query.valid_at)
            shown = self._ledger.visible_rows(
                missing, namespace=query.options.namespace, valid_at=valid, known_at=self._known
            )
            self._shown.update((r, r in shown) for r in missing)
        return {r for r in row_ids if self._shown[r]}

    def ranked(self, order: list[int], best: dict[int, float], retrieved: set[int]) -> list[Ranked]:
        """Ledger versions of the ranked rows; rows the ledger does not show (an index that
        lags behind) are dropped, and a fact id appears once."""
        found = self.versions(order)
        out: list[Ranked] = []
        seen: set[str] = set()
        for row_id in order:
            version = found[row_id]
            if version is None or not self._query.shows(version) or version.fact.id in seen:
                continue
            seen.add(version.fact.id)
            out.append(Ranked(version, best[row_id], row_id not in retrieved))
        return out
