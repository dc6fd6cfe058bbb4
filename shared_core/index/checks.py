"""The argument checks every :class:`~shared_core.index.base.VectorIndex` implementation shares
(bindings, cursors, records, vectors, search arguments): one wording of each error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from shared_core.clock import OPEN, Instant
from shared_core.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidOperationError,
)
from shared_core.index.base import Vector
from shared_core.ledger.results import ChangeCursor, VersionRecord

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]


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
