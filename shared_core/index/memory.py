"""An in-memory :class:`~shared_core.index.base.VectorIndex`: exact brute-force cosine search.

The fake for tests and small memories, and the reference the Chroma index is checked against.
The argument checks every index shares live here too. numpy is imported only when used.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shared_core.clock import OPEN, Instant
from shared_core.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidOperationError,
    VectorIndexError,
)
from shared_core.filters import Filter, matches
from shared_core.index.base import IndexMatch, Vector
from shared_core.ledger.results import ChangeCursor, VersionRecord

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]


# ---------------------------------------------------------------- checks shared by the indexes
def check_binding(
    embedder: object, dimension: object, bound: tuple[str, int] | None
) -> tuple[str, int]:
    """The (embedder, dimension) to bind: valid, and equal to ``bound`` if there is one."""
    if not isinstance(embedder, str) or not embedder.strip():
        raise InvalidInputError("embedder", "is empty", "name the embedder, e.g. 'minilm-l6-v2'")
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        raise InvalidInputError("dimension", f"{dimension!r} is not a positive int", "e.g. 384")
    if bound is not None and bound != (embedder, dimension):
        raise EmbedderMismatchError(
            f"this index was built by embedder {bound[0]!r} (dimension {bound[1]}), not by "
            f"{embedder!r} (dimension {dimension}); use the same embedder or a new index"
        )
    return embedder, dimension


def check_cursor(cursor: object) -> ChangeCursor:
    if not isinstance(cursor, ChangeCursor):
        raise InvalidInputError(
            "cursor", f"expected a ChangeCursor, got {type(cursor).__name__}", "pass page.cursor"
        )
    return cursor


def latest_records(records: Iterable[VersionRecord]) -> list[VersionRecord]:
    """One record per row id (the last one given wins), in first-seen order."""
    latest: dict[int, VersionRecord] = {}
    for position, record in enumerate(records):
        if not isinstance(record, VersionRecord):
            raise InvalidInputError(
                f"records[{position}]",
                f"expected a VersionRecord, got {type(record).__name__}",
                "pass the records of ledger.changes()",
            )
        latest[record.row_id] = record
    return list(latest.values())


def as_vector(vector: Vector, dimension: int, field: str) -> Array:
    """``vector`` as a finite float64 array of length ``dimension``, or InvalidInputError."""
    import numpy as np

    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(field, "is not a sequence of numbers", "pass floats") from exc
    if array.shape != (dimension,):
        raise InvalidInputError(
            field,
            f"has dimension {array.shape[0] if array.ndim == 1 else array.shape}, "
            f"the index is bound to {dimension}",
            "embed with the embedder the index was bound to",
        )
    if not np.isfinite(array).all():
        raise InvalidInputError(field, "holds a NaN or infinite value", "pass finite floats")
    return array


def check_search(
    k: object, namespace: object, valid_at: object, known_at: object
) -> tuple[int, str, Instant | None, Instant | None]:
    """The search arguments, checked (instants are ints below OPEN, or None)."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidInputError("k", f"{k!r} is not a positive int", "use e.g. k=5")
    if not isinstance(namespace, str):
        raise InvalidInputError("namespace", "is not a string", "use e.g. 'default'")
    for name, value in (("valid_at", valid_at), ("known_at", known_at)):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or not -OPEN <= value < OPEN
        ):
            raise InvalidInputError(
                name, f"{value!r} is not an instant", "pass epoch microseconds or None"
            )
    return k, namespace, valid_at, known_at  # type: ignore[return-value]


def require_bound(bound: tuple[str, int] | None) -> int:
    """The bound dimension; records cannot be applied before ``bind()``."""
    if bound is None:
        raise InvalidOperationError(
            "the index is not bound to an embedder yet: call bind(embedder=..., dimension=...)"
        )
    return bound[1]


def missing_vector(fact_id: str) -> InvalidInputError:
    return InvalidInputError(
        f"vectors[{fact_id!r}]",
        "no vector given and none stored for this fact id",
        "pass the fact's embedding in vectors",
    )


# ---------------------------------------------------------------- the fake
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
        scores = matrix @ query
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
