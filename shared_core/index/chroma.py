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
"""

from __future__ import annotations

import os
import re
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from shared_core.clock import Instant
from shared_core.errors import InvalidInputError, VectorIndexError
from shared_core.filters import Filter
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
from shared_core.index.chroma_client import (
    PAGE,
    all_ids,
    chromadb_module,
    close_client,
    copy_records,
    hnsw_config,
    persistent_client,
    precomputed_embedding_function,
    stored_vectors,
    translated,
)
from shared_core.index.chroma_layout import (
    Book,
    best_matches,
    filter_where,
    is_live,
    namespace_key,
    query_nearest,
    rows_alone,
    search_past,
    to_metadata,
)
from shared_core.ledger.results import ChangeCursor, VersionRecord

LAYOUT = 2
"""The layout version kept in the state collection (1: ``live`` and ``hist``)."""
ROLES = ("live", "all")
_PREFIX = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,400}[a-zA-Z0-9])?")


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
        with translated("open the index"):
            self._client = persistent_client(path) if client is None else client
            try:
                self._batch = min(int(self._client.get_max_batch_size()), PAGE)
                self._state = self._client.get_or_create_collection(
                    f"{prefix}_state",
                    metadata={"version": LAYOUT},
                    embedding_function=precomputed_embedding_function(),
                )
                self._load_state(self._state.metadata or {})
                if int((self._state.metadata or {}).get("version", 1)) < LAYOUT:
                    self._convert_from_hist()
            except BaseException:
                self.close()
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
                rows = rows_alone(
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
                found = query_nearest(live, query, min(k + pending, counts[0]), condition)
            else:
                found = search_past(every, counts[1], query, k, (valid_at, known_at), where)
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
                for row_id in all_ids(collection)
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

    # ------------------------------------------------------------------ state
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
                stored_vectors(every, wanted, found)
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
                    copy_records(old, every, self._batch)
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
