"""The default :class:`~shared_core.index.base.VectorIndex`: Chroma, laid out for fast reads.

A filtered Chroma query costs tens to hundreds of milliseconds on 100k records, an unfiltered
one a few. So each namespace has two collections: ``live`` holds the records that are believed
and open-ended (nearly everything a current-state search can see), ``all`` every record. A
search "valid now, as known now" is an unfiltered query of ``live`` (over-fetching only the few
future-dated rows, which are tracked). Any other search asks ``all`` for a few times k nearest
rows unfiltered and keeps the visible ones when that provably yields the exact top k; otherwise
it asks again with a ``where`` that encodes visibility. A retirement deletes the row from
``live`` and updates its metadata in ``all`` (no vector moves). Version 1 of this layout kept
``hist`` (every row not live) instead of ``all``; it is converted when opened.

A small ``{prefix}_state`` collection keeps, in its metadata, the change cursor, the bound
embedder and the bookkeeping that proves the fast path exact (per namespace: the latest
``recorded_at``, the latest end of validity of believed rows that are not live, and the future-dated
``live`` rows). Each ChromaIndex caches that bookkeeping and the collections' counts, and reads
them again with the cursor, before it applies changes: several processes may share one index on
a Chroma server as long as they mirror one ledger, whose mirror lock makes them apply the change
feed one at a time (TemporalMemory does). An embedded folder is for one process at a time
(Chroma's own limit). chromadb is imported only when used.

The class runs every collection call, the searches included. How a record is laid out (its
metadata, the collections' names, the ``where`` clauses) is
:mod:`shared_core.index.chroma_records`; the bookkeeping that proves the fast path exact is
:mod:`shared_core.index.chroma_fast_path`; opening the client is
:mod:`shared_core.index.chroma_client`.
"""

from __future__ import annotations

import math
import os
import re
import threading
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from shared_core.clock import Instant
from shared_core.errors import InvalidInputError, VectorIndexError
from shared_core.filters import Filter, matches
from shared_core.index.base import IndexMatch, RowCheck, RowLister, Vector
from shared_core.index.checks import (
    as_vector,
    check_binding,
    check_cursor,
    check_search,
    latest_records,
    missing_vector,
    require_bound,
)
from shared_core.index.chroma_client import (
    PAGE,
    chromadb_module,
    close_client,
    forget_folder,
    hnsw_config,
    persistent_client,
    precomputed_embedding_function,
    set_aside,
    translated,
)
from shared_core.index.chroma_fast_path import Book
from shared_core.index.chroma_records import (
    both,
    filter_where,
    from_metadata,
    is_live,
    namespace_key,
    to_metadata,
    visibility_where,
)
from shared_core.ledger.results import ChangeCursor, VersionRecord
from shared_core.products import row_dots

LAYOUT = 2
"""The layout version kept in the state collection (1: ``live`` and ``hist``)."""
ROLES = ("live", "all")
_PREFIX = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,400}[a-zA-Z0-9])?")
OVERFETCH = 5
"""A search other than a current one first asks ``all`` for this many times k rows, unfiltered."""
WIDER = 8
"""When those rows do not settle the answer, it asks for this many times more, unfiltered."""
LISTING_SHARE = 10
"""A past search whose unfiltered answers settle nothing asks a caller that can list the
visible rows for them when they are at most a tenth of the collection, and computes their
distances: reading a vector by id costs about ten times what Chroma's filtered query spends
per record it scans (25-60 us against about 3 us, measured at a million records)."""
EXACT_PAGE = 5_000
ID_PAGE = 5_000  # ids per get: Chroma's SQLite refuses a few tens of thousands of variables

ScoredRow = tuple[float, Mapping[str, Any]]
"""A raw query result: (cosine distance, record metadata)."""


class ChromaIndex:
    """Version records in Chroma, two collections per namespace (see the module docstring).

    ``path``: a folder for a ``chromadb.PersistentClient``; or ``client``: any
    Chroma client (``EphemeralClient``, ``HttpClient``, ...). ``prefix`` names the collections.
    ``search_ef`` sets HNSW's search breadth (higher: closer to exact, slower), also on
    existing collections; ``construction_ef`` and ``max_neighbors`` apply to new collections.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        client: Any = None,
        prefix: str = "temporal_rag",
        search_ef: int | None = None,
        construction_ef: int | None = None,
        max_neighbors: int | None = None,
    ) -> None:
        if (path is None) == (client is None):
            raise InvalidInputError(
                "path", "give exactly one of path and client", "e.g. ChromaIndex('index/')"
            )
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix) or ".." in prefix:
            raise InvalidInputError(
                "prefix", f"{prefix!r} cannot start a Chroma collection name", "use [a-zA-Z0-9._-]"
            )
        self._hnsw = hnsw_config(
            ef_search=search_ef, ef_construction=construction_ef, max_neighbors=max_neighbors
        )
        self._prefix = prefix
        self._owns_client = client is None
        self._lock = threading.RLock()
        self._handles: dict[str, tuple[Any, Any]] = {}
        self._counts: dict[str, int] = {}
        self._closed = False
        self._bound: tuple[str, int] | None = None
        self._cursor = ChangeCursor()
        self._books: dict[str, Book] = {}
        self._path = None if path is None else Path(path)
        try:
            with translated("open the index"):
                self._client = persistent_client(path) if client is None else client
                try:
                    self._start()
                except BaseException:
                    self.close()
                    raise
        except BaseException:
            if self._path is not None:  # chromadb would reuse the failed client's system
                forget_folder(self._path)
            raise

    @classmethod
    def connect(cls, url: str, *, prefix: str = "temporal_rag", **options: Any) -> ChromaIndex:
        """An index on a Chroma server (``chroma run``), e.g. ``http://chroma.internal:8000``,
        over an HTTP client of its own (closed with the index). Several processes may share
        it when they mirror one ledger (see the module doc). ``options``: as for the class."""
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInputError(
                "index", f"is {url!r}", "pass a Chroma server URL such as http://localhost:8000"
            )
        chromadb = chromadb_module()
        with translated(f"connect to {parts.scheme}://{parts.hostname}:{parts.port or 8000}"):
            client = chromadb.HttpClient(
                host=parts.hostname,
                port=parts.port or (443 if parts.scheme == "https" else 8000),
                ssl=parts.scheme == "https",
            )
        try:
            index = cls(client=client, prefix=prefix, **options)
        except BaseException:
            close_client(client)
            raise
        index._owns_client = True
        return index

    # ------------------------------------------------------------------ the port
    def bind(self, *, embedder: str, dimension: int) -> None:
        with self._lock, translated("bind the embedder"):
            self._open()
            bound = check_binding(embedder, dimension, self._bound)
            if self._bound is None:
                self._bound = bound
                self._save_state()

    def cursor(self) -> ChangeCursor:
        """The change cursor as stored now: the bookkeeping and counts are read again, since
        another process may have applied changes to the same collections (a Chroma server)."""
        with self._lock, translated("read the cursor"):
            self._open()
            self._state = self._client.get_collection(
                f"{self._prefix}_state", embedding_function=precomputed_embedding_function()
            )
            self._load_state(self._state.metadata or {})
            self._counts.clear()
            return self._cursor

    def apply(
        self,
        records: Sequence[VersionRecord],
        vectors: Mapping[str, Vector],
        cursor: ChangeCursor,
    ) -> None:
        check_cursor(cursor)
        rows = latest_records(records)
        with self._lock, translated("apply records"):
            self._open()
            if rows:
                self._write(rows, vectors)
            self._cursor = cursor
            self._save_state()

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        with self._lock, translated("read vectors"):
            self._open()
            return self._stored(fact_ids, list(self._books))

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
        k, namespace, valid_at, known_at = check_search(k, namespace, valid_at, known_at)
        key = namespace_key(namespace)
        with self._lock:
            self._open()
            book = self._books.get(key)
            if self._bound is None or book is None or book.namespace != namespace:
                return []
            query = as_vector(vector, self._bound[1], "vector").astype("float32")[None, :]
            with translated("search"):
                live, every = self._collections(key)
                counts = self._count(live), self._count(every)
        pending = book.pending(valid_at, known_at)
        condition = None if where is None else filter_where(where)
        with translated("search"):
            if rows_only:
                hidden = None if pending is None or valid_at is None else book.hidden(valid_at)
                rows = self._rows_alone(
                    (live, every),
                    counts,
                    query,
                    k,
                    hidden=hidden,
                    condition=condition,
                    visible=(visible_rows, valid_at, known_at),
                )
                if rows is not None:
                    return rows
            if pending is not None:  # the fast path: live only, no visibility terms
                found = self._query_nearest(live, query, min(k + pending, counts[0]), condition)
            else:
                found = self._search_past(every, counts[1], query, k, (valid_at, known_at), where)
        return best_matches(found, k, valid_at, known_at, where)

    def row_ids(self) -> set[int]:
        """Every row id in either collection: a crash between the two writes of a new live
        row leaves it in ``live`` alone, and a full reconcile must see it there too."""
        with self._lock, translated("list row ids"):
            self._open()
            return {
                int(row_id)
                for key in list(self._books)
                for collection in self._collections(key)
                for row_id in self._all_ids(collection)
            }

    def remove(self, row_ids: Sequence[int]) -> None:
        gone = {int(r) for r in row_ids}
        with self._lock, translated("remove rows"):
            self._open()
            for key, book in list(self._books.items()):
                for collection in self._collections(key):
                    self._delete_existing(collection, [str(r) for r in sorted(gone)])
                self._books[key] = book.without(gone)
            self._save_state()

    def count(self) -> int:
        with self._lock, translated("count records"):
            self._open()
            self._counts.clear()
            return sum(self._count(self._every(key)) for key in self._books)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._handles.clear()
            client = getattr(self, "_client", None)
            if self._owns_client and client is not None and hasattr(client, "close"):
                with translated("close the client"):
                    close_client(client)

    # ------------------------------------------------------------------ more than the port
    def check(self) -> None:
        """Read every collection once (its count, one record with its vector, and a nearest
        neighbour of it): VectorIndexError when the storage cannot be read (a damaged folder)."""
        import numpy as np

        with self._lock, translated("read the index"):
            self.cursor()
            for key in list(self._books):
                for collection in self._collections(key):
                    if not collection.count():
                        continue
                    page = collection.get(limit=1, include=["embeddings"])
                    query = np.asarray(page["embeddings"][:1], dtype=np.float32)
                    collection.query(query_embeddings=query, n_results=1, include=["distances"])

    def set_aside(self, *, now: datetime) -> Path:
        """Move this index's folder aside, as ``<folder>.damaged-<UTC time>`` (never deleted),
        and open a new, empty index in its place (no records, cursor or binding): for a damaged
        folder, before rebuilding it from the ledger. Returns where the old folder went.
        VectorIndexError for an index over a client (a server's collections stay where they
        are)."""
        with self._lock:
            self._open()
            if self._path is None:
                raise VectorIndexError(
                    "only an index in a folder can be set aside (this one is over a client)"
                )
            _close_quietly(self._client)
            with translated("move the damaged index aside"):
                moved = set_aside(self._path, now=now)
            self._handles.clear()
            self._counts.clear()
            self._books = {}
            self._bound = None
            self._cursor = ChangeCursor()
            with translated("open a new index"):
                self._client = persistent_client(self._path)
                self._start()
            return moved

    def drop(self) -> None:
        """Delete every collection of this index (its records, cursor and binding), then close."""
        with self._lock, translated("drop the index"):
            self._open()
            ours = {self._name(key, role) for key in self._books for role in (*ROLES, "hist")}
            ours.add(f"{self._prefix}_state")
            for collection in self._client.list_collections():
                if collection.name in ours:
                    self._client.delete_collection(collection.name)
        self.close()

    # ------------------------------------------------------------------ searching
    def _rows_alone(
        self,
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
        current one (``hidden``: the future-dated live rows to skip) without a filter, or any
        other whose caller checks visibility (``visible``: its row check, ``valid_at``,
        ``known_at``). ``collections``: (live, all). None: read the records instead."""
        (live, every), (live_count, every_count) = collections, counts
        if hidden is not None:
            if condition is not None:
                return None
            return self._nearest_rows(live, query, min(k + len(hidden), live_count), hidden, k)
        visible_rows, valid_at, known_at = visible
        if visible_rows is None:
            return None
        where = both(visibility_where(valid_at, known_at, live=False), condition)
        return self._past_rows(every, every_count, query, k, (visible_rows, where))

    def _search_past(
        self,
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
            hits = self._query_nearest(every, query, asked, None)
            kth = kth_visible(hits, k, valid_at, known_at, condition)
            if settles(hits[-1][0] if hits else None, asked, count, kth):
                return hits
        where = visibility_where(valid_at, known_at, live=False)
        if condition is not None:
            where = both(where, filter_where(condition))
        return self._query_nearest(every, query, filtered_size(k, count), where)

    def _query_nearest(self, collection: Any, query: Any, n: int, where: Any) -> list[ScoredRow]:
        """(distance, metadata) of the ``n`` nearest records matching ``where``, nearest first."""
        if n < 1:
            return []
        found = collection.query(
            query_embeddings=query, n_results=n, where=where, include=["metadatas", "distances"]
        )
        hits = list(zip(found["distances"][0], found["metadatas"][0], strict=True))
        if len(hits) < n:  # HNSW is approximate: with identical vectors it can return too few
            return self._exact_nearest(collection, query, n, where)
        return hits

    def _nearest_ids(
        self, collection: Any, query: Any, n: int, where: Any = None
    ) -> list[tuple[float, int]] | None:
        """(distance, row id) of the ``n`` nearest records matching ``where``, nearest first, by
        id and distance alone (reading no metadata, which costs more than the search itself:
        Chroma ids are row ids). None when Chroma returned fewer than ``n`` rows (HNSW can come
        up short, see :meth:`_query_nearest`; the caller then reads the records)."""
        if n < 1:
            return []
        found = collection.query(
            query_embeddings=query, n_results=n, where=where, include=["distances"]
        )
        ids, distances = found["ids"][0], found["distances"][0]
        if len(ids) < n:
            return None
        return sorted(zip(map(float, distances), map(int, ids), strict=True))

    def _nearest_rows(
        self, live: Any, query: Any, n: int, hidden: set[int], k: int
    ) -> list[IndexMatch] | None:
        """The fast path of a current search for callers that need rows only: the ``n`` nearest
        live records (:meth:`_nearest_ids`), the ``hidden`` rows skipped, the first ``k`` kept.
        None when HNSW came up short."""
        found = self._nearest_ids(live, query, n)
        if found is None:
            return None
        kept = [(distance, row) for distance, row in found if row not in hidden]
        return [IndexMatch(row, None, 1.0 - distance) for distance, row in kept[:k]]

    def _past_rows(
        self,
        every: Any,
        count: int,
        query: Any,
        k: int,
        checks: tuple[RowCheck, Any],
    ) -> list[IndexMatch] | None:
        """:meth:`_search_past` for callers that need rows only and say which rows are visible
        (``checks``: the caller's row check, and the visibility ``where``), read by ids and
        distances alone: the nearest ``OVERFETCH * k`` rows of ``all`` unfiltered, the visible
        ones kept nearest first; when that answer does not settle the top k (:func:`settles`),
        the distances of the visible rows are computed when a :class:`RowLister` lists few of
        them, else ``all`` is asked again with the ``where``. None when the unfiltered answer
        came up short (the caller reads the records)."""
        visible_rows, where = checks
        nearest: dict[int, float] = {}
        for asked in _widening(k, count):
            answer = self._nearest_ids(every, query, asked)
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
            _pool(nearest, self._distances_by_id(every, query, listed))
        else:
            wanted = filtered_size(k, count)
            refined = self._nearest_ids(every, query, wanted, where)
            if refined is None:  # fewer rows match, or HNSW came up short: count them all
                refined = self._exact_nearest_ids(every, query, wanted, where)
            _pool(nearest, refined)
        kept = _nearest_visible(nearest, k, visible_rows)
        return [IndexMatch(row, None, 1.0 - distance) for row, distance in kept[:k]]

    def _exact_nearest(self, collection: Any, query: Any, n: int, where: Any) -> list[ScoredRow]:
        """The ``n`` nearest records matching ``where`` by brute force over every such record
        (Chroma's metadata filter in ``get`` is exact). Used when HNSW returned fewer rows than
        were asked for, so it only runs when the approximate answer is known to be short."""
        _, metadatas, matrix = self._scan(collection, where, ["embeddings", "metadatas"])
        return [(distance, metadatas[i]) for distance, i in _brute_force(matrix, query, n)]

    def _exact_nearest_ids(
        self, collection: Any, query: Any, n: int, where: Any
    ) -> list[tuple[float, int]]:
        """:meth:`_exact_nearest` by ids and distances alone."""
        ids, _, matrix = self._scan(collection, where, ["embeddings"])
        return [(distance, int(ids[i])) for distance, i in _brute_force(matrix, query, n)]

    def _distances_by_id(
        self, collection: Any, query: Any, row_ids: Sequence[int]
    ) -> list[tuple[float, int]]:
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

    def _scan(
        self, collection: Any, where: Any, include: list[str]
    ) -> tuple[list[str], list[Any], Any]:
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

    # ------------------------------------------------------------------ state
    def _start(self) -> None:
        """Open (or create) the state collection and load the bookkeeping it keeps."""
        self._batch = min(int(self._client.get_max_batch_size()), PAGE)
        self._state = self._client.get_or_create_collection(
            f"{self._prefix}_state",
            metadata={"version": LAYOUT},
            embedding_function=precomputed_embedding_function(),
        )
        self._load_state(self._state.metadata or {})
        if int((self._state.metadata or {}).get("version", 1)) < LAYOUT:
            self._convert_from_hist()

    def _load_state(self, metadata: Mapping[str, Any]) -> None:
        embedder, dimension = metadata.get("embedder"), metadata.get("dimension")
        self._bound = None if embedder is None else (str(embedder), int(dimension or 0))
        self._cursor = ChangeCursor(
            int(metadata.get("after_row", 0)),
            int(metadata.get("retired_from", 0)),
            int(metadata.get("retired_at_from", 0)),
        )
        self._books = {
            name[3:]: Book.load(str(text))
            for name, text in metadata.items()
            if name.startswith("ns.")
        }

    def _save_state(self) -> None:
        metadata: dict[str, Any] = {
            "version": LAYOUT,
            "after_row": self._cursor.after_row,
            "retired_from": self._cursor.retired_from,
            "retired_at_from": self._cursor.retired_at_from,
        }
        if self._bound is not None:
            metadata["embedder"], metadata["dimension"] = self._bound
        metadata.update((f"ns.{key}", book.dump()) for key, book in self._books.items())
        self._state.modify(metadata=metadata)

    # ------------------------------------------------------------------ writing
    def _write(self, rows: Sequence[VersionRecord], given: Mapping[str, Vector]) -> None:
        """Every vector found and checked first; then the bookkeeping (it only errs on the
        safe side); then per namespace: rows that are no longer live leave ``live`` (a crash
        leaves a row absent from current searches, never stale), live rows are upserted
        there, new rows are added to ``all`` and the others updated in place."""
        groups: dict[str, list[VersionRecord]] = {}
        for row in rows:
            groups.setdefault(row.namespace, []).append(row)
        present: dict[str, set[str]] = {}
        needed: list[VersionRecord] = []
        for namespace, group in groups.items():
            key = namespace_key(namespace)
            book = self._books.get(key, Book(namespace))
            if book.namespace != namespace:
                raise VectorIndexError(f"namespaces {namespace!r} and {book.namespace!r} collide")
            held = (
                self._present(key, [str(r.row_id) for r in group]) if key in self._books else set()
            )
            present[namespace] = held
            needed += [r for r in group if is_live(r) or str(r.row_id) not in held]
        arrays = self._vectors_for(needed, given)
        for namespace, group in groups.items():
            key = namespace_key(namespace)
            self._books[key] = self._books.get(key, Book(namespace)).after(group)
        self._save_state()
        for namespace, group in groups.items():
            live, every = self._collections(namespace_key(namespace))
            held = present[namespace]
            self._delete_existing(live, [str(r.row_id) for r in group if not is_live(r)])
            self._upsert(live, [r for r in group if is_live(r)], arrays)
            self._upsert(every, [r for r in group if str(r.row_id) not in held], arrays)
            self._update(every, [r for r in group if str(r.row_id) in held])

    def _present(self, key: str, ids: Sequence[str]) -> set[str]:
        """Which of these row ids ``all`` holds."""
        every = self._every(key)
        if not ids or self._count(every) == 0:
            return set()
        held: set[str] = set()
        for start in range(0, len(ids), PAGE):
            held.update(every.get(ids=list(ids[start : start + PAGE]), include=[])["ids"])
        return held

    def _vectors_for(
        self, rows: Sequence[VersionRecord], given: Mapping[str, Vector]
    ) -> dict[str, Any]:
        """These rows' vectors by fact id (given, else stored), checked before any change."""
        dimension = require_bound(self._bound)
        fact_ids = list(dict.fromkeys(r.fact_id for r in rows))
        arrays = {
            f: as_vector(given[f], dimension, f"vectors[{f!r}]").astype("float32")
            for f in fact_ids
            if f in given
        }
        missing = [f for f in fact_ids if f not in arrays]
        keys = [
            k for k in dict.fromkeys(namespace_key(r.namespace) for r in rows) if k in self._books
        ]
        stored = self._stored(missing, keys) if missing else {}
        for fact_id in missing:
            if fact_id not in stored:
                raise missing_vector(fact_id)
            arrays[fact_id] = as_vector(stored[fact_id], dimension, fact_id).astype("float32")
        return arrays

    def _stored(self, fact_ids: Sequence[str], keys: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of these fact ids, looked up in these namespaces."""
        found: dict[str, list[float]] = {}
        for key in keys:
            every = self._every(key)
            wanted = [f for f in dict.fromkeys(fact_ids) if f not in found]
            if wanted and self._count(every):
                self._stored_vectors(every, wanted, found)
        return found

    def _upsert(self, collection: Any, rows: Sequence[VersionRecord], arrays: Any) -> None:
        import numpy as np

        for start in range(0, len(rows), self._batch):
            chunk = rows[start : start + self._batch]
            collection.upsert(
                ids=[str(r.row_id) for r in chunk],
                embeddings=np.stack([arrays[r.fact_id] for r in chunk]),
                documents=[r.text for r in chunk],
                metadatas=[to_metadata(r) for r in chunk],
            )
        if rows:
            self._counts.pop(collection.name, None)

    def _update(self, collection: Any, rows: Sequence[VersionRecord]) -> None:
        """New metadata for rows the collection holds (a row's text and vector never change;
        Chroma would embed new documents)."""
        for start in range(0, len(rows), self._batch):
            chunk = rows[start : start + self._batch]
            collection.update(
                ids=[str(r.row_id) for r in chunk], metadatas=[to_metadata(r) for r in chunk]
            )

    def _delete_existing(self, collection: Any, ids: Sequence[str]) -> None:
        """Delete these ids where present (looking first is cheaper than deleting blindly)."""
        if not ids or self._count(collection) == 0:
            return
        for start in range(0, len(ids), PAGE):
            present = collection.get(ids=list(ids[start : start + PAGE]), include=[])["ids"]
            if present:
                collection.delete(ids=present)
                self._counts.pop(collection.name, None)

    def _convert_from_hist(self) -> None:
        """Layout 1 -> 2: each namespace's ``all`` filled from its ``live`` and ``hist``
        collections, the state marked, then ``hist`` deleted. A crash before the mark redoes
        the copy (upserts); after it, leaves an unused ``hist`` that :meth:`drop` removes."""
        names = {c.name for c in self._client.list_collections()}
        for key in self._books:
            every = self._every(key)
            for role in ("live", "hist"):
                if self._name(key, role) in names:
                    old = self._client.get_collection(
                        self._name(key, role), embedding_function=precomputed_embedding_function()
                    )
                    self._copy_records(old, every)
            self._counts.pop(every.name, None)
        self._save_state()
        for key in self._books:
            if self._name(key, "hist") in names:
                self._client.delete_collection(self._name(key, "hist"))

    # ------------------------------------------------------------------ collections
    def _collections(self, key: str) -> tuple[Any, Any]:
        """The (live, all) collections of a namespace key, created when missing."""
        if key not in self._handles:
            namespace = self._books[key].namespace
            live, every = (
                self._client.get_or_create_collection(
                    self._name(key, role),
                    configuration={"hnsw": dict(self._hnsw)},
                    metadata={"namespace": namespace, "role": role},
                    embedding_function=precomputed_embedding_function(),
                )
                for role in ROLES
            )
            search_ef = self._hnsw.get("ef_search")
            for collection in (live, every):
                hnsw = (collection.configuration_json or {}).get("hnsw") or {}
                if search_ef is not None and hnsw.get("ef_search") != search_ef:
                    collection.modify(configuration={"hnsw": {"ef_search": search_ef}})
            self._handles[key] = (live, every)
        return self._handles[key]

    def _every(self, key: str) -> Any:
        """The ``all`` collection of a namespace key (every record)."""
        return self._collections(key)[1]

    def _name(self, key: str, role: str) -> str:
        return f"{self._prefix}_{key}_{role}"

    def _count(self, collection: Any) -> int:
        name = collection.name
        if name not in self._counts:
            self._counts[name] = int(collection.count())
        return self._counts[name]

    def _open(self) -> None:
        if self._closed:
            raise VectorIndexError("the index is closed")

    # ------------------------------------------------------------------ paged reads
    def _all_ids(self, collection: Any) -> Iterator[str]:
        """Every id ``collection`` holds, ``PAGE`` at a time."""
        offset = 0
        while True:
            ids = collection.get(include=[], limit=PAGE, offset=offset)["ids"]
            yield from ids
            if len(ids) < PAGE:
                return
            offset += PAGE

    def _stored_vectors(
        self, collection: Any, fact_ids: list[str], found: dict[str, list[float]]
    ) -> None:
        """Add to ``found`` the vector of each of these fact ids that has a row in
        ``collection``."""
        for start in range(0, len(fact_ids), PAGE):
            where = {"fact_id": {"$in": fact_ids[start : start + PAGE]}}
            offset = 0
            while True:
                page = collection.get(
                    where=where, include=["embeddings", "metadatas"], limit=PAGE, offset=offset
                )
                for meta, vector in zip(page["metadatas"], page["embeddings"], strict=True):
                    found.setdefault(str(meta["fact_id"]), [float(x) for x in vector])
                if len(page["ids"]) < PAGE:
                    break
                offset += PAGE

    def _copy_records(self, source: Any, target: Any) -> None:
        """Every record of ``source`` upserted into ``target`` as it is (vector, text,
        metadata)."""
        offset = 0
        while True:
            page = source.get(
                include=["embeddings", "documents", "metadatas"], limit=PAGE, offset=offset
            )
            for start in range(0, len(page["ids"]), self._batch):
                end = start + self._batch
                target.upsert(
                    ids=page["ids"][start:end],
                    embeddings=page["embeddings"][start:end],
                    documents=page["documents"][start:end],
                    metadatas=page["metadatas"][start:end],
                )
            if len(page["ids"]) < PAGE:
                return
            offset += PAGE


def _close_quietly(client: Any) -> None:
    """Close a client whose storage may be damaged: its failure, or panic, is not news."""
    try:
        close_client(client)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise


# ---------------------------------------------------------------------- the searches' arithmetic
# (pure: what the searching methods above decide from Chroma's answers)
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


def _brute_force(matrix: Any, query: Any, n: int) -> list[tuple[float, int]]:
    """(cosine distance, position) of the ``n`` rows of ``matrix`` nearest ``query``."""
    import numpy as np

    if matrix is None:
        return []
    vector = np.asarray(query, dtype=np.float64).reshape(-1)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(vector) or 1.0)
    distances = 1.0 - row_dots(matrix, vector) / np.where(norms == 0.0, 1.0, norms)
    order = np.argsort(distances, kind="stable")[:n]
    return [(float(distances[i]), int(i)) for i in order]
