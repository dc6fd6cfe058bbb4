"""An in-memory :class:`~shared_core.index.base.VectorIndex`: exact brute-force cosine search.

The fake for tests and small memories, and the reference the Chroma index is checked against.
numpy is imported only when used.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shared_core.clock import Instant
from shared_core.errors import VectorIndexError
from shared_core.filters import Filter, matches
from shared_core.index.base import IndexMatch, RowCheck, Vector
from shared_core.index.checks import (
    as_vector,
    check_binding,
    check_cursor,
    check_search,
    latest_records,
    missing_vector,
    require_bound,
)
from shared_core.ledger.results import ChangeCursor, VersionRecord
from shared_core.products import row_dots

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]


class NumpyIndex:
    """Every record and vector in memory; exact cosine search over the visible records."""

    def __init__(self) -> None:
        self._records: dict[int, VersionRecord] = {}
        self._vectors: dict[str, Array] = {}
        self._bound: tuple[str, int] | None = None
        self._cursor = ChangeCursor()
        self._lock = threading.RLock()
        self._closed = False

    def bind(self, *, embedder: str, dimension: int) -> None:
        with self._lock:
            self._open()
            self._bound = check_binding(embedder, dimension, self._bound)

    def cursor(self) -> ChangeCursor:
        with self._lock:
            self._open()
            return self._cursor

    def apply(
        self,
        records: Sequence[VersionRecord],
        vectors: Mapping[str, Vector],
        cursor: ChangeCursor,
    ) -> None:
        with self._lock:
            self._open()
            check_cursor(cursor)
            rows = latest_records(records)
            fresh: dict[str, Array] = {}
            if rows:
                dimension = require_bound(self._bound)
                for fact_id in dict.fromkeys(r.fact_id for r in rows):
                    if fact_id in vectors:
                        field = f"vectors[{fact_id!r}]"
                        fresh[fact_id] = as_vector(vectors[fact_id], dimension, field)
                    elif fact_id not in self._vectors:
                        raise missing_vector(fact_id)
            self._vectors.update(fresh)
            self._records.update((r.row_id, r) for r in rows)
            self._cursor = cursor

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        with self._lock:
            self._open()
            return {f: self._vectors[f].tolist() for f in fact_ids if f in self._vectors}

    def search(
        self,
        vector: Vector,
        *,
        k: int,
        namespace: str,
        valid_at: Instant | None,
        known_at: Instant | None,
        where: Filter | None = None,
        rows_only: bool = False,  # fact ids are at hand: always given
        visible_rows: RowCheck | None = None,  # its records are at hand: not needed
    ) -> list[IndexMatch]:
        import numpy as np

        k, namespace, valid_at, known_at = check_search(k, namespace, valid_at, known_at)
        with self._lock:
            self._open()
            if self._bound is None:
                return []
            query = _unit(as_vector(vector, self._bound[1], "vector"))
            rows = [
                r
                for r in self._records.values()
                if r.namespace == namespace
                and r.visible(valid_at, known_at)
                and matches(where, r.attributes)
            ]
            if not rows:
                return []
            matrix = np.stack([_unit(self._vectors[r.fact_id]) for r in rows])
        scores = row_dots(matrix, query)
        order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i].row_id))[:k]
        return [IndexMatch(rows[i].row_id, rows[i].fact_id, float(scores[i])) for i in order]

    def row_ids(self) -> set[int]:
        with self._lock:
            self._open()
            return set(self._records)

    def remove(self, row_ids: Sequence[int]) -> None:
        with self._lock:
            self._open()
            for row_id in row_ids:
                self._records.pop(row_id, None)
            used = {r.fact_id for r in self._records.values()}
            self._vectors = {f: v for f, v in self._vectors.items() if f in used}

    def count(self) -> int:
        with self._lock:
            self._open()
            return len(self._records)

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def _open(self) -> None:
        if self._closed:
            raise VectorIndexError("the index is closed")


def _unit(vector: Any) -> Any:
    """``vector`` scaled to length 1 (a zero vector stays zero: it is similar to nothing)."""
    import numpy as np

    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0.0 else vector
