"""The default :class:`~shared_core.index.base.VectorIndex`: Chroma, laid out for fast reads.

A filtered Chroma query costs tens to hundreds of milliseconds on 100k records, an unfiltered
one a few. So each namespace has two collections: ``live`` holds the records that are believed
and open-ended (nearly everything a current-state search can see), ``hist`` every other record.
A search "valid now, as known now" is an unfiltered query of ``live`` (over-fetching only the
few future-dated rows, which are tracked). Any other search asks both collections for a few
times k nearest rows unfiltered and keeps the visible ones when that provably yields the exact
top k; otherwise it queries them with a ``where`` that encodes visibility, and merges.

A small ``{prefix}_state`` collection keeps, in its metadata, the change cursor, the bound
embedder and the bookkeeping that proves the fast path exact (per namespace: the latest
``recorded_at``, the latest end of validity of believed ``hist`` rows, and the future-dated
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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

from shared_core.clock import Instant
from shared_core.errors import (
    InvalidInputError,
    MissingDependencyError,
    TemporalRagError,
    VectorIndexError,
)
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

PAGE = 5_000
"""Rows per Chroma ``get`` (large gets with metadata fail) and fact ids per ``$in``."""
"""A search other than a current one first asks each collection for this many times k rows."""
_PREFIX = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,400}[a-zA-Z0-9])?")
_EF_NAME = "temporal_rag_precomputed"


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
        self._hnsw = _hnsw(
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
        with _translated("open the index"):
            self._client = _persistent_client(path) if client is None else client
            try:
                self._batch = min(int(self._client.get_max_batch_size()), PAGE)
                self._state = self._client.get_or_create_collection(
                    f"{prefix}_state",
                    metadata={"version": 1},
                    embedding_function=precomputed_embedding_function(),
                )
                self._load_state(self._state.metadata or {})
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
        chromadb = _chromadb()
        with _translated(f"connect to {parts.scheme}://{parts.hostname}:{parts.port or 8000}"):
            client = chromadb.HttpClient(
                host=parts.hostname,
                port=parts.port or (443 if parts.scheme == "https" else 8000),
                ssl=parts.scheme == "https",
            )
        try:
            index = cls(client=client, prefix=prefix, **options)
        except BaseException:
            _close_client(client)
            raise
        index._owns_client = True
        return index

    # ------------------------------------------------------------------ the port
    def bind(self, *, embedder: str, dimension: int) -> None:
        with self._lock, _translated("bind the embedder"):
            self._open()
            bound = check_binding(embedder, dimension, self._bound)
            if self._bound is None:
                self._bound = bound
                self._save_state()

    def cursor(self) -> ChangeCursor:
        """The change cursor as stored now: the bookkeeping and counts are read again, since
        another process may have applied changes to the same collections (a Chroma server)."""
        with self._lock, _translated("read the cursor"):
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
        with self._lock, _translated("apply records"):
            self._open()
            if rows:
                self._write(rows, self._vectors_for(rows, vectors))
            self._cursor = cursor
            self._save_state()

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        with self._lock, _translated("read vectors"):
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
            with _translated("search"):
                live, hist = self._collections(key)
                counts = self._count(live), self._count(hist)
        pending = book.pending(valid_at, known_at)
        condition = None if where is None else filter_where(where)
        with _translated("search"):
            if rows_only:
                hidden = None if pending is None or valid_at is None else book.hidden(valid_at)
                rows = rows_alone(
                    (live, hist),
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
                found = search_past(
                    (hist, live), (counts[1], counts[0]), query, k, (valid_at, known_at), where
                )
        return best_matches(found, k, valid_at, known_at, where)

    def row_ids(self) -> set[int]:
        with self._lock, _translated("list row ids"):
            self._open()
            return {
                int(row_id)
                for key in list(self._books)
                for collection in self._collections(key)
                for row_id in _all_ids(collection)
            }

    def remove(self, row_ids: Sequence[int]) -> None:
        gone = {int(r) for r in row_ids}
        with self._lock, _translated("remove rows"):
            self._open()
            for key, book in list(self._books.items()):
                for collection in self._collections(key):
                    self._delete_existing(collection, [str(r) for r in sorted(gone)])
                self._books[key] = book.without(gone)
            self._save_state()

    def count(self) -> int:
        with self._lock, _translated("count records"):
            self._open()
            self._counts.clear()
            return sum(self._count(c) for key in self._books for c in self._collections(key))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._handles.clear()
            client = getattr(self, "_client", None)
            if self._owns_client and client is not None and hasattr(client, "close"):
                with _translated("close the client"):
                    _close_client(client)

    # ------------------------------------------------------------------ more than the port
    def drop(self) -> None:
        """Delete every collection of this index (its records, cursor and binding), then close."""
        with self._lock, _translated("drop the index"):
            self._open()
            ours = {self._name(key, role) for key in self._books for role in ("live", "hist")}
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
            "version": 1,
            "after_row": self._cursor.after_row,
            "retired_from": self._cursor.retired_from,
            "retired_at_from": self._cursor.retired_at_from,
        }
        if self._bound is not None:
            metadata["embedder"], metadata["dimension"] = self._bound
        metadata.update((f"ns.{key}", book.dump()) for key, book in self._books.items())
        self._state.modify(metadata=metadata)

    # ------------------------------------------------------------------ writing
    def _vectors_for(
        self, rows: Sequence[VersionRecord], given: Mapping[str, Vector]
    ) -> dict[str, Any]:
        """Every row's vector by fact id (given, else stored), checked before any change."""
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
            for collection in self._collections(key):
                wanted = [f for f in dict.fromkeys(fact_ids) if f not in found]
                if wanted and self._count(collection):
                    _stored_vectors(collection, wanted, found)
        return found

    def _write(self, rows: Sequence[VersionRecord], arrays: Mapping[str, Any]) -> None:
        """Bookkeeping first (it only errs on the safe side), then each row into its
        collection, deleted from the other one first (a crash leaves it absent, never stale)."""
        groups: dict[str, list[VersionRecord]] = {}
        for row in rows:
            groups.setdefault(row.namespace, []).append(row)
        for namespace, group in groups.items():
            key = namespace_key(namespace)
            book = self._books.get(key, Book(namespace))
            if book.namespace != namespace:
                raise VectorIndexError(f"namespaces {namespace!r} and {book.namespace!r} collide")
            self._books[key] = book.after(group)
        self._save_state()
        for namespace, group in groups.items():
            live, hist = self._collections(namespace_key(namespace))
            to_live = [r for r in group if is_live(r)]
            to_hist = [r for r in group if not is_live(r)]
            self._delete_existing(hist, [str(r.row_id) for r in to_live])
            self._delete_existing(live, [str(r.row_id) for r in to_hist])
            self._upsert(live, to_live, arrays)
            self._upsert(hist, to_hist, arrays)

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

    def _delete_existing(self, collection: Any, ids: Sequence[str]) -> None:
        """Delete these ids where present (looking first is cheaper than deleting blindly)."""
        if not ids or self._count(collection) == 0:
            return
        for start in range(0, len(ids), PAGE):
            present = collection.get(ids=list(ids[start : start + PAGE]), include=[])["ids"]
            if present:
                collection.delete(ids=present)
                self._counts.pop(collection.name, None)

    # ------------------------------------------------------------------ collections
    def _collections(self, key: str) -> tuple[Any, Any]:
        """The (live, hist) collections of a namespace key, created when missing."""
        if key not in self._handles:
            namespace = self._books[key].namespace
            live, hist = (
                self._client.get_or_create_collection(
                    self._name(key, role),
                    configuration={"hnsw": dict(self._hnsw)},
                    metadata={"namespace": namespace, "role": role},
                    embedding_function=precomputed_embedding_function(),
                )
                for role in ("live", "hist")
            )
            search_ef = self._hnsw.get("ef_search")
            for collection in (live, hist):
                hnsw = (collection.configuration_json or {}).get("hnsw") or {}
                if search_ef is not None and hnsw.get("ef_search") != search_ef:
                    collection.modify(configuration={"hnsw": {"ef_search": search_ef}})
            self._handles[key] = (live, hist)
        return self._handles[key]

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


# ---------------------------------------------------------------------- helpers
def _all_ids(collection: Any) -> Iterator[str]:
    offset = 0
    while True:
        ids = collection.get(include=[], limit=PAGE, offset=offset)["ids"]
        yield from ids
        if len(ids) < PAGE:
            return
        offset += PAGE


def _stored_vectors(collection: Any, fact_ids: list[str], found: dict[str, list[float]]) -> None:
    """Add to ``found`` the vector of each of these fact ids that has a row in ``collection``."""
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


def _hnsw(**options: int | None) -> dict[str, Any]:
    """Chroma's HNSW configuration: cosine space and the options given (positive ints)."""
    config: dict[str, Any] = {"space": "cosine"}
    for name, value in options.items():
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInputError(name, f"{value!r} is not a positive int", "e.g. 100")
            config[name] = value
    return config


@contextmanager
def _translated(action: str) -> Iterator[None]:
    """Chroma's exceptions become VectorIndexError (the original kept as the cause)."""
    try:
        yield
    except TemporalRagError:
        raise
    except Exception as exc:
        raise VectorIndexError(f"Chroma could not {action}: {exc}") from exc


def _close_client(client: Any) -> None:
    """Close a Chroma client for good. chromadb 1.5's ``close()`` leaves the httpx sessions of
    an HttpClient and of its admin client open (unclosed sockets): close those too."""
    sessions = [
        getattr(getattr(owner, "_server", None), "_session", None)
        for owner in (client, getattr(client, "_admin_client", None))
    ]
    client.close()
    for session in sessions:
        if session is not None and hasattr(session, "close"):
            session.close()


def _chromadb() -> Any:
    try:
        import chromadb
    except ImportError as exc:
        raise MissingDependencyError(
            'ChromaIndex needs chromadb: pip install "temporal-rag[embedded]"'
        ) from exc
    return chromadb


def _persistent_client(path: str | os.PathLike[str] | None) -> Any:
    """Chroma's default settings: another client of the same folder in this process must
    have equal settings (and chromadb 1.5's product telemetry sends nothing)."""
    return _chromadb().PersistentClient(path=os.fspath(path or "."))


def precomputed_embedding_function() -> Any:
    """An embedding function for Chroma collections that are always given vectors: it refuses
    to embed, so Chroma never builds its default (which downloads a model)."""
    return _precomputed_class()()


@cache
def _precomputed_class() -> type:
    """Chroma's embedding-function slot, filled so that Chroma never builds its default (which
    downloads a model): this index always passes vectors, and this function refuses to embed."""
    _chromadb()
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
    from chromadb.utils.embedding_functions import register_embedding_function

    class PrecomputedOnly(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            raise VectorIndexError("temporal-rag gives Chroma vectors; it never embeds text")

        @staticmethod
        def name() -> str:
            return _EF_NAME

        def get_config(self) -> dict[str, Any]:
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> PrecomputedOnly:
            return PrecomputedOnly()

        def default_space(self) -> Space:
            return "cosine"

        def supported_spaces(self) -> list[Space]:
            return ["cosine"]

    register_embedding_function(PrecomputedOnly)  # type: ignore[no-untyped-call]
    return PrecomputedOnly
