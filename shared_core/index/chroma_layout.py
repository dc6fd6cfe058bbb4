"""The pure half of :mod:`shared_core.index.chroma`: which collection a record lives in, what
the fast path relies on, the ``where`` clauses, and how raw results become matches.

No chromadb import here (collections arrive as objects). Each namespace has a ``live``
collection (records believed and open-ended) and an ``all`` collection (every record).
Record metadata holds the row id, fact id, namespace and the four instants as ints, an open end
as OPEN (never a missing key), and the record's filterable attributes under ``m.<name>``
(numbers as floats, so that ``1 == 1.0`` as in :mod:`shared_core.filters`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.filters import AllOf, AnyOf, Condition, Filter, Op, Scalar, matches
from shared_core.index.base import IndexMatch, RowCheck, RowLister
from shared_core.ledger.results import VersionRecord

EARLIEST = -(2**63)
OVERFETCH = 5
"""A search other than a current one first asks ``all`` for this many times k rows, unfiltered."""
WIDER = 8
"""When those rows do not settle the answer, it asks for this many times more, unfiltered."""
FUTURE_LIMIT = 1_000
"""Beyond this many pending future-dated rows, a current search takes the filtered path."""

ScoredRow = tuple[float, Mapping[str, Any]]
"""A raw query result: (cosine distance, record metadata)."""


def is_live(record: VersionRecord) -> bool:
    """Believed and open-ended: the records a current search can see (bar future-dated ones)."""
    return record.believed and record.valid_to == OPEN


def namespace_key(namespace: str) -> str:
    """A short, name-safe stand-in for a namespace in collection names."""
    return hashlib.sha256(namespace.encode()).hexdigest()[:16]


ATTRIBUTE = "m."
"""The prefix of attribute keys in Chroma metadata (system keys never start with it)."""


def to_metadata(record: VersionRecord) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "row_id": record.row_id,
        "fact_id": record.fact_id,
        "namespace": record.namespace,
        "valid_from": record.valid_from,
        "valid_to": record.valid_to,
        "recorded_at": record.recorded_at,
        "retired_at": record.retired_at,
    }
    meta.update((ATTRIBUTE + name, _stored(v)) for name, v in record.attributes.items())
    return meta


def _stored(value: Scalar) -> Scalar:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def filter_where(condition: Filter) -> dict[str, Any]:
    """Chroma's ``where`` for a metadata filter (same semantics, see shared_core.filters)."""
    if isinstance(condition, AllOf | AnyOf):
        parts = [filter_where(f) for f in condition.filters]
        if len(parts) == 1:
            return parts[0]
        return {"$and" if isinstance(condition, AllOf) else "$or": parts}
    assert isinstance(condition, Condition)
    value: Any = condition.value
    value = [_stored(v) for v in value] if isinstance(value, tuple) else _stored(value)
    return {ATTRIBUTE + condition.field: {_CHROMA_OPS[condition.op]: value}}


_CHROMA_OPS = {
    Op.EQ: "$eq",
    Op.NE: "$ne",
    Op.GT: "$gt",
    Op.GTE: "$gte",
    Op.LT: "$lt",
    Op.LTE: "$lte",
    Op.IN: "$in",
    Op.NIN: "$nin",
}


def both(first: Any, second: Any) -> Any:
    """Two ``where`` clauses (either may be None) that must both hold."""
    if first is None or second is None:
        return first if second is None else second
    return {"$and": [first, second]}


def from_metadata(meta: Mapping[str, Any]) -> VersionRecord:
    """The record a result's metadata describes (without its text)."""
    return VersionRecord(
        int(meta["row_id"]),
        str(meta["fact_id"]),
        str(meta["namespace"]),
        "",
        int(meta["valid_from"]),
        int(meta["valid_to"]),
        int(meta["recorded_at"]),
        int(meta["retired_at"]),
        {k[len(ATTRIBUTE) :]: v for k, v in meta.items() if k.startswith(ATTRIBUTE)},
    )


@dataclass(frozen=True)
class Book:
    """What one namespace's fast path relies on; every field errs only on the safe side.

    A search valid at T as known now sees exactly the live rows with ``valid_from <= T`` when
    T is at or after every ``recorded_at`` (so a live row that is not future-dated started by
    then) and after the end of every believed row that is not live (so none of them is visible).
    """

    namespace: str
    max_recorded_at: Instant = EARLIEST
    max_valid_to: Instant = EARLIEST  # of believed rows that are not live (all have an end)
    future: Mapping[int, Instant] = field(default_factory=dict)  # live row id -> valid_from

    def after(self, rows: Sequence[VersionRecord]) -> Book:
        """This book once ``rows`` (of this namespace) are applied."""
        recorded = max([self.max_recorded_at, *(r.recorded_at for r in rows)])
        ended = [r.valid_to for r in rows if r.believed and r.valid_to != OPEN]
        future = dict(self.future)
        for r in rows:
            future.pop(r.row_id, None)
            if is_live(r) and r.valid_from > r.recorded_at:
                future[r.row_id] = r.valid_from
        future = {row: start for row, start in future.items() if start > recorded}
        return Book(self.namespace, recorded, max([self.max_valid_to, *ended]), future)

    def without(self, row_ids: set[int]) -> Book:
        future = {r: v for r, v in self.future.items() if r not in row_ids}
        return Book(self.namespace, self.max_recorded_at, self.max_valid_to, future)

    def pending(self, valid_at: Instant | None, known_at: Instant | None) -> int | None:
        """How many live rows a current search at ``valid_at`` must skip, or None when the
        fast path would not be exact (a past time, another record time, history)."""
        if known_at is not None or valid_at is None:
            return None
        if valid_at < self.max_recorded_at or valid_at < self.max_valid_to:
            return None
        pending = len(self.hidden(valid_at))
        return pending if pending <= FUTURE_LIMIT else None

    def hidden(self, valid_at: Instant) -> set[int]:
        """The live rows a current search at ``valid_at`` must skip (not yet valid then)."""
        return {row for row, start in self.future.items() if start > valid_at}

    def dump(self) -> str:
        state = [self.namespace, self.max_recorded_at, self.max_valid_to, [*self.future.items()]]
        return json.dumps(state)

    @staticmethod
    def load(text: str) -> Book:
        namespace, recorded, ended, future = json.loads(text)
        return Book(namespace, recorded, ended, {int(r): int(v) for r, v in future})


def visibility_where(valid_at: Instant | None, known_at: Instant | None, *, live: bool) -> Any:
    """Chroma's ``where`` for the records visible at (valid_at, known_at), among the ``live``
    rows or among every row. Live rows end at OPEN, above every instant a search takes, so
    their ends need no terms."""
    terms: list[dict[str, Any]] = []
    if known_at is not None:
        terms.append({"recorded_at": {"$lte": known_at}})
    if not live:
        terms.append({"retired_at": {"$gt": known_at} if known_at is not None else {"$eq": OPEN}})
    if valid_at is not None:
        terms.append({"valid_from": {"$lte": valid_at}})
        if not live:
            terms.append({"valid_to": {"$gt": valid_at}})
    return {"$and": terms} if len(terms) > 1 else (terms[0] if terms else None)


def kth_visible(
    hits: Sequence[ScoredRow],
    k: int,
    valid_at: Instant | None,
    known_at: Instant | None,
    condition: Filter | None = None,
) -> float:
    """The distance of the k-th nearest visible, matching hit among ``hits`` (inf if fewer)."""
    distances = sorted(
        d for d, meta in hits if _wanted(from_metadata(meta), valid_at, known_at, condition)
    )
    return distances[k - 1] if len(distances) >= k else math.inf


def settles(farthest: float | None, asked: int, count: int, kth: float) -> bool:
    """Whether an unfiltered answer of ``asked`` rows from a collection of ``count``, whose
    farthest row lies at ``farthest`` (None: no rows), misses no row nearer than ``kth``: it
    holds them all, or it reaches beyond ``kth``."""
    return asked >= count or (farthest is not None and farthest >= kth)


def best_matches(
    found: Sequence[ScoredRow],
    k: int,
    valid_at: Instant | None,
    known_at: Instant | None,
    condition: Filter | None = None,
) -> list[IndexMatch]:
    """The ``k`` nearest visible hits, each row once, as matches (score = 1 - distance).
    Visibility is checked here too: Chroma's filter is not the contract, and the unfiltered
    queries over-fetch."""
    out: list[IndexMatch] = []
    seen: set[int] = set()
    for distance, meta in sorted(found, key=lambda hit: hit[0]):
        row = from_metadata(meta)
        if row.row_id in seen or not _wanted(row, valid_at, known_at, condition):
            continue
        seen.add(row.row_id)
        out.append(IndexMatch(row.row_id, row.fact_id, 1.0 - float(distance)))
        if len(out) == k:
            break
    return out


def _wanted(
    row: VersionRecord, valid_at: Instant | None, known_at: Instant | None, condition: Filter | None
) -> bool:
    return row.visible(valid_at, known_at) and matches(condition, row.attributes)


# ---------------------------------------------------------------------- querying
def search_past(
    every: Any,
    count: int,
    query: Any,
    k: int,
    times: tuple[Instant | None, Instant | None],
    condition: Filter | None,
) -> list[ScoredRow]:
    """Hits for any search but a current one, from ``all`` (``count`` rows). Its nearest
    ``OVERFETCH * k`` rows, unfiltered, usually prove the answer (see ``settles``); when they
    do not, it is asked again with a ``where`` that encodes visibility (exact, but tens to
    hundreds of milliseconds at 100k records)."""
    valid_at, known_at = times
    for asked in _widening(k, count):
        hits = query_nearest(every, query, asked, None)
        kth = kth_visible(hits, k, valid_at, known_at, condition)
        if settles(hits[-1][0] if hits else None, asked, count, kth):
            return hits
    where = visibility_where(valid_at, known_at, live=False)
    if condition is not None:
        where = both(where, filter_where(condition))
    return query_nearest(every, query, filtered_size(k, count), where)


def query_nearest(collection: Any, query: Any, n: int, where: Any) -> list[ScoredRow]:
    """(distance, metadata) of the ``n`` nearest records matching ``where``, nearest first."""
    if n < 1:
        return []
    found = collection.query(
        query_embeddings=query, n_results=n, where=where, include=["metadatas", "distances"]
    )
    hits = list(zip(found["distances"][0], found["metadatas"][0], strict=True))
    if len(hits) < n:  # HNSW is approximate: with identical vectors it can return too few
        return exact_nearest(collection, query, n, where)
    return hits


def nearest_ids(
    collection: Any, query: Any, n: int, where: Any = None
) -> list[tuple[float, int]] | None:
    """(distance, row id) of the ``n`` nearest records matching ``where``, nearest first, by
    id and distance alone (reading no metadata, which costs more than the search itself:
    Chroma ids are row ids). None when Chroma returned fewer than ``n`` rows (HNSW can come up
    short, see :func:`query_nearest`; the caller then reads the records)."""
    if n < 1:
        return []
    found = collection.query(
        query_embeddings=query, n_results=n, where=where, include=["distances"]
    )
    ids, distances = found["ids"][0], found["distances"][0]
    if len(ids) < n:
        return None
    return sorted(zip(map(float, distances), map(int, ids), strict=True))


def nearest_rows(
    live: Any, query: Any, n: int, hidden: set[int], k: int
) -> list[IndexMatch] | None:
    """The fast path of a current search for callers that need rows only: the ``n`` nearest
    live records (:func:`nearest_ids`), the ``hidden`` rows skipped, the first ``k`` kept.
    None when HNSW came up short."""
    found = nearest_ids(live, query, n)
    if found is None:
        return None
    kept = [(distance, row) for distance, row in found if row not in hidden]
    return [IndexMatch(row, None, 1.0 - distance) for distance, row in kept[:k]]


def past_rows(
    every: Any,
    count: int,
    query: Any,
    k: int,
    checks: tuple[RowCheck, Any],
) -> list[IndexMatch] | None:
    """:func:`search_past` for callers that need rows only and say which rows are visible
    (``checks``: the caller's row check, and the visibility ``where``), read by ids and
    distances alone: the nearest ``OVERFETCH * k`` rows of ``all`` unfiltered, the visible ones
    kept nearest first; when that answer does not settle the top k (:func:`settles`), the
    distances of the visible rows are computed when a :class:`RowLister` lists few of them,
    else ``all`` is asked again with the ``where``. None when the unfiltered answer came up
    short (the caller reads the records)."""
    visible_rows, where = checks
    nearest: dict[int, float] = {}
    for asked in _widening(k, count):
        answer = nearest_ids(every, query, asked)
        if answer is None:
            return None
        _pool(nearest, answer)
        kept = _nearest_visible(nearest, k, visible_rows)
        kth = kept[k - 1][1] if len(kept) >= k else math.inf
        if settles(answer[-1][0] if answer else None, asked, count, kth):
            return [IndexMatch(row, None, 1.0 - distance) for row, distance in kept[:k]]
    listed = None
    if isinstance(visible_rows, RowLister):
        listed = visible_rows.list_rows(count // LISTING_SHARE)
    if listed is not None:  # few rows are visible: their distances cost less than a filter
        _pool(nearest, distances_by_id(every, query, listed))
    else:
        wanted = filtered_size(k, count)
        refined = nearest_ids(every, query, wanted, where)
        if refined is None:  # fewer rows match, or HNSW came up short: count them all
            refined = exact_nearest_ids(every, query, wanted, where)
        _pool(nearest, refined)
    kept = _nearest_visible(nearest, k, visible_rows)
    return [IndexMatch(row, None, 1.0 - distance) for row, distance in kept[:k]]


LISTING_SHARE = 10
"""A past search whose unfiltered answers settle nothing asks a caller that can list the
visible rows for them when they are at most a tenth of the collection, and computes their
distances: reading a vector by id costs about ten times what Chroma's filtered query spends
per record it scans (25-60 us against about 3 us, measured at a million records)."""


def filtered_size(k: int, count: int) -> int:
    """How many rows a filtered query asks for: ``OVERFETCH * k``, not ``k``. Its cost is
    the metadata scan, not ``n``; a larger ``n`` widens HNSW's filtered search, which with
    ``k`` alone can miss the nearest matching row in a graph crowded by near-duplicates that
    the filter hides, and when fewer rows match than asked they are counted exactly."""
    return min(OVERFETCH * k, count)


def _widening(k: int, count: int) -> list[int]:
    """How many rows the unfiltered queries ask for, in turn, before a filtered one: a wider
    unfiltered query costs far less than a filtered one, which scans metadata."""
    first = min(OVERFETCH * k, count)
    wider = min(WIDER * OVERFETCH * k, count)
    return [first] if wider == first else [first, wider]


def rows_alone(
    collections: tuple[Any, Any],
    counts: tuple[int, int],
    query: Any,
    k: int,
    *,
    hidden: set[int] | None,
    condition: Any,
    visible: tuple[RowCheck | None, Instant | None, Instant | None],
) -> list[IndexMatch] | None:
    """A rows-only search read by ids and distances alone, where that is provably exact: a
    current one (``hidden``: the future-dated live rows to skip) without a filter, or any other
    whose caller checks visibility (``visible``: its row check, ``valid_at``, ``known_at``).
    ``collections``: (live, all). None: read the records instead."""
    (live, every), (live_count, every_count) = collections, counts
    if hidden is not None:
        if condition is not None:
            return None
        return nearest_rows(live, query, min(k + len(hidden), live_count), hidden, k)
    visible_rows, valid_at, known_at = visible
    if visible_rows is None:
        return None
    where = both(visibility_where(valid_at, known_at, live=False), condition)
    return past_rows(every, every_count, query, k, (visible_rows, where))


def _pool(nearest: dict[int, float], answer: Sequence[tuple[float, int]]) -> None:
    for distance, row in answer:
        nearest[row] = min(distance, nearest.get(row, math.inf))


def _nearest_visible(
    nearest: Mapping[int, float], k: int, visible_rows: RowCheck
) -> list[tuple[int, float]]:
    """The nearest visible (row, distance) pairs, at least ``k`` when there are: the rows are
    checked nearest first, ``2 * k`` at a time."""
    merged = sorted(nearest.items(), key=_by_distance)
    kept: list[tuple[int, float]] = []
    for start in range(0, len(merged), 2 * k):
        part = merged[start : start + 2 * k]
        visible = visible_rows([row for row, _ in part])
        kept += [(row, distance) for row, distance in part if row in visible]
        if len(kept) >= k:
            break
    return kept


def _by_distance(pair: tuple[int, float]) -> float:
    return pair[1]


EXACT_PAGE = 5_000


def exact_nearest(collection: Any, query: Any, n: int, where: Any) -> list[ScoredRow]:
    """The ``n`` nearest records matching ``where`` by brute force over every such record
    (Chroma's metadata filter in ``get`` is exact). Used when HNSW returned fewer rows than
    were asked for, so it only runs when the approximate answer is known to be short."""
    _, metadatas, matrix = _scan(collection, where, ["embeddings", "metadatas"])
    return [(distance, metadatas[i]) for distance, i in _brute_force(matrix, query, n)]


def exact_nearest_ids(collection: Any, query: Any, n: int, where: Any) -> list[tuple[float, int]]:
    """:func:`exact_nearest` by ids and distances alone."""
    ids, _, matrix = _scan(collection, where, ["embeddings"])
    return [(distance, int(ids[i])) for distance, i in _brute_force(matrix, query, n)]


ID_PAGE = 5_000  # ids per get: Chroma's SQLite refuses a few tens of thousands of variables


def distances_by_id(collection: Any, query: Any, row_ids: Sequence[int]) -> list[tuple[float, int]]:
    """(cosine distance, row id) of each of these rows the collection holds (exact), nearest
    first; rows it lacks (an index behind its ledger) are left out."""
    import numpy as np

    ids: list[str] = []
    blocks = []
    for start in range(0, len(row_ids), ID_PAGE):
        page = collection.get(
            ids=[str(row) for row in row_ids[start : start + ID_PAGE]], include=["embeddings"]
        )
        if page["ids"]:
            ids += page["ids"]
            blocks.append(np.asarray(page["embeddings"], dtype=np.float64))
    matrix = np.vstack(blocks) if blocks else None
    return [(distance, int(ids[i])) for distance, i in _brute_force(matrix, query, len(ids))]


def _scan(collection: Any, where: Any, include: list[str]) -> tuple[list[str], list[Any], Any]:
    """(ids, metadatas, embedding matrix) of every record matching ``where``, paged."""
    import numpy as np

    ids: list[str] = []
    metadatas: list[Any] = []
    blocks = []
    offset = 0
    while True:
        page = collection.get(where=where, include=include, limit=EXACT_PAGE, offset=offset)
        if page["ids"]:
            ids += page["ids"]
            metadatas += page["metadatas"] or []
            blocks.append(np.asarray(page["embeddings"], dtype=np.float64))
        if len(page["ids"]) < EXACT_PAGE:
            break
        offset += EXACT_PAGE
    return ids, metadatas, np.vstack(blocks) if blocks else None


def _brute_force(matrix: Any, query: Any, n: int) -> list[tuple[float, int]]:
    """(cosine distance, position) of the ``n`` rows of ``matrix`` nearest ``query``."""
    import numpy as np

    if matrix is None:
        return []
    vector = np.asarray(query, dtype=np.float64).reshape(-1)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(vector) or 1.0)
    distances = 1.0 - (matrix @ vector) / np.where(norms == 0.0, 1.0, norms)
    order = np.argsort(distances, kind="stable")[:n]
    return [(float(distances[i]), int(i)) for i in order]
