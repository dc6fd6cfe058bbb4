"""The vector index port: a searchable mirror of the ledger's version rows.

The ledger is the source of truth. An index holds one record per version row
(:class:`~shared_core.ledger.results.VersionRecord`: row id, fact id, namespace, text and the
four instants) with the embedding of its text, and the :class:`ChangeCursor` up to which it
has applied the ledger's change feed. Visibility at (valid_at, known_at) is applied inside the
index, so that ``k`` results are ``k`` visible results.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from shared_core.clock import Instant
from shared_core.filters import Filter
from shared_core.ledger.results import ChangeCursor, VersionRecord

Vector = Sequence[float]
RowCheck = Callable[[Sequence[int]], Collection[int]]
"""The caller's account of visibility: given row ids, the ones a search may return."""


@runtime_checkable
class RowLister(Protocol):
    """A :data:`RowCheck` that can also list, unasked, the rows it may keep."""

    def __call__(self, row_ids: Sequence[int]) -> Collection[int]: ...

    def list_rows(self, limit: int) -> Sequence[int] | None:
        """Every row the check may keep (a superset of what it keeps is allowed), when there
        are at most ``limit``; None when there are more."""
        ...


@dataclass(frozen=True, slots=True)
class IndexMatch:
    """One search result: the version row, its fact id and the cosine similarity to the query.

    ``fact_id`` is None only when the search asked for rows alone (``rows_only=True``) and the
    index found the row without reading its record (the caller resolves rows in the ledger).
    """

    row_id: int
    fact_id: str | None
    score: float


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour search over version records, filtered by bi-temporal visibility.

    Scores are cosine similarities (higher is closer). Namespaces never see each other.
    """

    def bind(self, *, embedder: str, dimension: int) -> None:
        """Record which embedder fills this index, or check it matches the one that did.

        An index that already holds another embedder's name or dimension raises
        :class:`~shared_core.errors.EmbedderMismatchError` and changes nothing.
        """
        ...

    def cursor(self) -> ChangeCursor:
        """How far this index has applied the ledger's change feed (``ChangeCursor()`` when new)."""
        ...

    def apply(
        self,
        records: Sequence[VersionRecord],
        vectors: Mapping[str, Vector],
        cursor: ChangeCursor,
    ) -> None:
        """Upsert every record (its state replaces any earlier state of the same row id) with
        the vector of its fact id, then store ``cursor``. Idempotent. A record whose fact id has
        no vector in ``vectors`` (and none stored) raises InvalidInputError before any change.
        """
        ...

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of these fact ids (those the index holds; others are absent)."""
        ...

    def search(
        self,
        vector: Vector,
        *,
        k: int,
        namespace: str,
        valid_at: Instant | None,
        known_at: Instant | None,
        where: Filter | None = None,
        rows_only: bool = False,
        visible_rows: RowCheck | None = None,
    ) -> list[IndexMatch]:
        """The ``k`` records nearest to ``vector`` among those visible, best first.

        Visible: in ``namespace``; believed at ``known_at`` (``recorded_at <= known_at <
        retired_at``; ``None``: believed now, i.e. not retired) and valid at ``valid_at``
        (``valid_from <= valid_at < valid_to``; ``None``: at any time, i.e. history included);
        and, if given, matching the metadata filter ``where`` (``shared_core.filters``) on the
        record's attributes. ``rows_only``: the caller needs row ids and scores only, so an
        index may leave ``fact_id`` None where reading it would cost (the same rows and scores
        either way). ``visible_rows`` (with ``rows_only``): the caller's own check of which
        rows are visible and match ``where`` (the ledger, the source of truth); an index may
        call it instead of reading its records' metadata (the same rows when both agree). A
        :class:`RowLister` may also be asked for the visible rows outright, where few are
        visible and a filtered search would cost more than their distances.
        """
        ...

    def row_ids(self) -> set[int]:
        """Every row id the index holds (for a full reconcile)."""
        ...

    def remove(self, row_ids: Sequence[int]) -> None:
        """Forget these rows (a full reconcile drops rows the ledger does not have)."""
        ...

    def count(self) -> int:
        """How many version records the index holds."""
        ...

    def close(self) -> None:
        """Release resources (idempotent)."""
        ...


@runtime_checkable
class SetAsideIndex(Protocol):
    """An index whose storage can be found damaged and replaced: a full reconcile checks it,
    and when it cannot be read moves it aside (never deleting it) and rebuilds it from the
    ledger (:class:`~shared_core.index.chroma.ChromaIndex` in a folder)."""

    def check(self) -> None:
        """Read every part of the storage once; VectorIndexError when it cannot be read."""
        ...

    def set_aside(self, *, now: datetime) -> Path:
        """Move the storage aside, open a new, empty one in its place; where it went."""
        ...
