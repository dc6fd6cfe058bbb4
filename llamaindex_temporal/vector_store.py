"""TemporalVectorStore: a LlamaIndex vector store over a TemporalMemory."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from pydantic import InstanceOf

from llamaindex_temporal.filters import translate_filters
from llamaindex_temporal.nodes import (
    NODE_ID,
    REF_DOC_ID,
    fact_node,
    hit_node,
    name_the_node,
    node_id_of,
    node_items,
)
from shared_core.adapter_toolkit import MemoryOwner, check_keywords, open_owning, search_changes
from shared_core.errors import InvalidInputError, NotPicklableError
from shared_core.extractors.metadata import to_datetime
from shared_core.facts import Fact, check_namespace, thaw_metadata
from shared_core.filters import Filter, Op, all_of, any_of, where
from shared_core.memory import Added, Hit, MemoryConfig, SearchOptions, TemporalMemory
from shared_core.memory.options import OPTION_NAMES

logger = logging.getLogger(__name__)

QUERY_OPTIONS = tuple(name for name in OPTION_NAMES if name not in ("k", "where"))
"""The search options a query takes as keywords (``vector_store_kwargs``): every option but
``k`` (the query's ``similarity_top_k``) and ``where`` (its ``filters``, ``doc_ids`` and
``node_ids``)."""
ADD_OPTIONS = ("namespace", "valid_from", "speaker")
"""The keywords ``add`` / ``async_add`` use; any other is ignored (see the class)."""
IGNORED_QUERY_FIELDS = (
    "query_embedding",
    "alpha",
    "sparse_top_k",
    "hybrid_top_k",
    "mmr_threshold",
    "output_fields",
    "embedding_field",
)
"""``VectorStoreQuery`` fields a query does not read: the memory embeds ``query_str`` itself, and
the rest serve modes other than ``DEFAULT`` (refused) or stores that pick returned fields."""


class TemporalVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store whose every read and write goes through a
    :class:`~shared_core.TemporalMemory` (the ledger decides, the store translates).

    - **Writes** (``add`` / ``async_add``): each node's text and metadata go through the
      memory's extractor, so ``subject`` / ``relation`` / ``object`` / ``valid_from`` metadata
      make a keyed fact that supersedes the older value; anything else stays prose. Every node
      is a statement of its own under its node id, so identical text in two nodes (a chunk
      repeated in two documents) stays two statements, each found, filtered and deleted by its
      own node id and document. Adding a node id again with other text or metadata replaces
      it in the same transaction (the old statement is withdrawn, unless the new one
      superseded it by key: then it stays as history); adding it unchanged does nothing. The
      node id and its source document id are kept in the fact's metadata (``node_id``,
      ``ref_doc_id``); ``add`` returns the node ids, except that a keyed node restating
      exactly the value, valid time and text another node holds is that node's statement
      (the ledger keeps one; its id is returned). **Speakers**: a node's metadata names who
      wrote it under the memory's ``speaker_field`` (default ``"user_id"``), or ``speaker=``
      names it for every node of the call (and is written there): first person is that
      speaker's and nothing closes across speakers (docs/judging.md#speakers). Keywords:
      ``namespace=``, ``valid_from=``, ``speaker=``; every other keyword is ignored, as
      LlamaIndex's own stores do, because ``VectorStoreIndex(...)``,
      ``from_documents``, ``insert`` and ``insert_nodes`` pass on to ``add`` every keyword they
      do not take themselves (``async_concurrency``, a node parser's options, ...).
    - **Embeddings**: the memory's embedder is authoritative. It embeds each node's text and
      each ``query_str``; the vectors LlamaIndex computed with its ``embed_model`` are ignored
      (``is_embedding_query`` is False, so retrievers do not embed queries). Give LlamaIndex the
      same model, e.g. ``embed_model=CoreEmbedding(memory.embedder)``.
    - **Reads** (``query`` / ``aquery``): what ``search_options`` (a
      :class:`~shared_core.memory.SearchOptions`, default the current state) asks, with ``k``
      from ``similarity_top_k``. Every other search option may be changed per query as a
      keyword (also through ``index.as_retriever(vector_store_kwargs={...})``): ``valid_at`` /
      ``known_at`` (aware datetime, ISO-8601 string with an offset, or epoch seconds),
      ``namespace``, ``include_history``, ``detector`` (Phi_T inside the memory; shadows land
      in the surviving node's ``metadata["shadows"]``), ``use_recency_buffer`` and
      ``expand``; any other keyword is refused by name (only the caller's
      ``vector_store_kwargs`` reach it). ``MetadataFilters`` (EQ, NE, GT, GTE, LT,
      LTE, IN, NIN; AND / OR; nested) run inside the index on the node's metadata,
      ``node_id``, ``ref_doc_id`` and the key fields (times are not metadata: use
      ``valid_at`` / ``known_at``); ``doc_ids`` and non-empty ``node_ids`` restrict the search
      too (``doc_ids=[]`` matches nothing; ``node_ids=[]`` is what ``as_retriever()`` passes
      for stores that keep text, and restricts nothing). Only
      ``VectorStoreQueryMode.DEFAULT`` is served; the fields of :data:`IGNORED_QUERY_FIELDS`
      are not read.
    - **Deletes retire, never destroy**: ``delete(ref_doc_id)``, ``delete_nodes`` and
      ``clear`` withdraw every matching fact, current versions and history, in record time.
      Queries as of now no longer see them; queries with a ``known_at`` before the delete
      still do. Withdrawing a fact that superseded another makes the older value current
      again (the withdrawn statement counts as never made). They take ``namespace=``; any
      other keyword is refused by name.
    - **Pickling**: a store made by :meth:`open` pickles as its folder, its ``MemoryConfig`` and
      ``search_options``, and is reopened from them on unpickling (the folder is still for
      one process at a time); an option that does not pickle (a ``ManualClock``, a lambda)
      makes pickling fail with pickle's own ``TypeError``. A store over a memory built by hand
      holds open storage that no pickle can carry: pickling it raises
      :class:`~shared_core.errors.NotPicklableError` (a ``TypeError``) naming the fix.

    Returned nodes are ``TextNode`` objects with the node id, the fact's text and metadata
    (see :mod:`llamaindex_temporal.nodes`); ``similarities`` are cosine similarities.
    """

    stores_text: bool = True
    is_embedding_query: bool = False
    search_options: InstanceOf[SearchOptions] = Field(default_factory=SearchOptions)

    _memory: TemporalMemory = PrivateAttr()
    _memory_owner: MemoryOwner = PrivateAttr()
    _opened: tuple[str, MemoryConfig | None] | None = PrivateAttr(default=None)  # open()'s args

    def __init__(
        self,
        memory: TemporalMemory,
        *,
        namespace: str | None = None,
        search_options: SearchOptions | None = None,
    ) -> None:
        """``namespace`` (default that of ``search_options``, else the default namespace) is
        where nodes are written and searched."""
        if not isinstance(memory, TemporalMemory):
            raise InvalidInputError(
                "memory", f"is a {type(memory).__name__}", "pass a shared_core.TemporalMemory"
            )
        if search_options is not None and not isinstance(search_options, SearchOptions):
            raise InvalidInputError(
                "search_options",
                f"is a {type(search_options).__name__}",
                "pass shared_core.memory.SearchOptions(...) or None",
            )
        options = (search_options or SearchOptions()).merged(namespace=namespace)
        # pydantic's generated __init__ takes the fields; mypy (no pydantic plugin) cannot see it
        super().__init__(search_options=options)  # type: ignore[call-arg]
        self._memory = memory
        self._memory_owner = MemoryOwner(memory)

    @property
    def namespace(self) -> str:
        """Where this store writes and searches (``search_options.namespace``)."""
        namespace: str = self.search_options.namespace
        return namespace

    @property
    def memory_owner(self) -> MemoryOwner:
        """Whether this store opened its memory (then :meth:`close` closes it)."""
        return self._memory_owner

    @classmethod
    def open(
        cls, path: str | Path, *, namespace: str | None = None, config: MemoryConfig | None = None
    ) -> TemporalVectorStore:
        """A store over ``TemporalMemory.open(path, config=config)`` (SQLite + Chroma + MiniLM
        by default); :meth:`close` closes that memory. Such a store can be pickled: it is
        reopened from ``path`` and ``config`` (see the class)."""
        store = open_owning(path, config, lambda memory: cls(memory, namespace=namespace))
        store._opened = (str(path), config)
        return store

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as what :meth:`open` was given, or refused (see the class)."""
        if self._opened is None:
            raise NotPicklableError(
                "TemporalVectorStore(memory)",
                "its TemporalMemory was built by hand and holds open storage (a ledger "
                "connection, an index, locks) that cannot be copied into a pickle",
                "build the store with TemporalVectorStore.open(path, ...): it is pickled as "
                "that folder and reopened; or pickle your own settings and build the store "
                "again where you load them",
            )
        path, config = self._opened
        return (_reopened, (path, config, self.search_options))

    def close(self) -> None:
        """Close the memory if this store opened it (see :meth:`open`); idempotent."""
        self._memory_owner.close()

    @classmethod
    def class_name(cls) -> str:
        return "TemporalVectorStore"

    @property
    def client(self) -> TemporalMemory:
        """The memory behind the store."""
        return self._memory

    @property
    def memory(self) -> TemporalMemory:
        """The memory behind the store."""
        return self._memory

    # ------------------------------------------------------------------ writes
    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Remember ``nodes`` in one ledger transaction; returns their node ids (see the
        class)."""
        write = self._write(nodes, kwargs)
        if not write.node_ids:
            return []
        stored = self._memory.select(write.named, namespace=write.namespace)
        todo, options = write.changed(stored)
        if not todo:
            return write.ids([], [])
        try:
            added = self._memory.add_many([write.texts[i] for i in todo], **options)
        except InvalidInputError as exc:
            raise name_the_node(exc, nodes, todo) from exc
        return write.ids(todo, added)

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """:meth:`add` without blocking the event loop."""
        write = self._write(nodes, kwargs)
        if not write.node_ids:
            return []
        stored = await self._memory.aselect(write.named, namespace=write.namespace)
        todo, options = write.changed(stored)
        if not todo:
            return write.ids([], [])
        try:
            added = await self._memory.aadd_many([write.texts[i] for i in todo], **options)
        except InvalidInputError as exc:
            raise name_the_node(exc, nodes, todo) from exc
        return write.ids(todo, added)

    def _write(self, nodes: Sequence[BaseNode], options: Mapping[str, Any]) -> NodeWrite:
        ignored = sorted(set(options) - set(ADD_OPTIONS))
        if ignored:  # LlamaIndex passes on what the index did not take (see the class)
            logger.debug("TemporalVectorStore.add ignores the keywords %s", ", ".join(ignored))
        texts, metadatas = node_items(list(nodes))
        return NodeWrite(
            node_ids=[node.node_id for node in nodes],
            texts=texts,
            metadatas=metadatas,
            namespace=self._namespace(options.get("namespace")),
            valid_from=to_datetime(options.get("valid_from"), "valid_from"),
            speaker=options.get("speaker"),
        )

    # ------------------------------------------------------------------ reads
    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The ``similarity_top_k`` facts nearest to ``query.query_str`` (see the class)."""
        text, options = self._search(query, kwargs)
        if options is None:
            return _result([])
        return _result(self._memory.search(text, options))

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """:meth:`query` without blocking the event loop."""
        text, options = self._search(query, kwargs)
        if options is None:
            return _result([])
        return _result(await self._memory.asearch(text, options))

    def get_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        *,
        namespace: str | None = None,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
        include_history: bool = False,
    ) -> list[BaseNode]:
        """The facts of these nodes (or all) matching ``filters``, valid at ``valid_at`` as
        known at ``known_at`` (default now; ``include_history``: at any valid time)."""
        facts = self._memory.select(
            translate_filters(filters),
            namespace=self._namespace(namespace),
            valid_at=to_datetime(valid_at, "valid_at"),
            known_at=to_datetime(known_at, "known_at"),
            include_history=include_history,
        )
        return [fact_node(fact) for fact in _of_nodes(facts, node_ids)]

    async def aget_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **options: Any,
    ) -> list[BaseNode]:
        """:meth:`get_nodes` without blocking the event loop."""
        return await asyncio.to_thread(self.get_nodes, node_ids, filters, **options)

    def _search(
        self, query: VectorStoreQuery, options: Mapping[str, Any]
    ) -> tuple[str, SearchOptions | None]:
        """The text and options of a search; ``None`` options: nothing can match."""
        changes = search_changes(options, allowed=QUERY_OPTIONS, call="query")
        if query.mode != VectorStoreQueryMode.DEFAULT:
            raise InvalidInputError(
                "query.mode",
                f"{query.mode.value!r} is not supported",
                "use VectorStoreQueryMode.DEFAULT (nearest neighbours among visible facts)",
            )
        if not isinstance(query.query_str, str) or not query.query_str.strip():
            raise InvalidInputError(
                "query.query_str",
                "is empty (the memory embeds the query text itself; query_embedding is unused)",
                "pass the query text",
            )
        asked = self.search_options.merged(**changes)
        if query.doc_ids is not None and not query.doc_ids:
            _where(query)  # a bad filter or node_ids is still an error
            return query.query_str, None  # no document is allowed, so no fact is
        return query.query_str, replace(asked, k=query.similarity_top_k, where=_where(query))

    # ------------------------------------------------------------------ deletes (retire)
    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Retire every fact the document contributed (current and history)."""
        check_keywords(delete_kwargs, allowed=("namespace",), call="delete")
        if not isinstance(ref_doc_id, str) or not ref_doc_id:
            raise InvalidInputError("ref_doc_id", f"is {ref_doc_id!r}", "pass a document id")
        self._retire(where(REF_DOC_ID, Op.EQ, ref_doc_id), None, delete_kwargs.get("namespace"))

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """:meth:`delete` without blocking the event loop."""
        await asyncio.to_thread(self.delete, ref_doc_id, **delete_kwargs)

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Retire every fact of these nodes that matches ``filters`` (one of them needed)."""
        check_keywords(delete_kwargs, allowed=("namespace",), call="delete_nodes")
        condition = translate_filters(filters)
        if node_ids is None and condition is None:
            raise InvalidInputError(
                "node_ids", "and filters are both empty", "name nodes or filters; clear() for all"
            )
        self._retire(condition, node_ids, delete_kwargs.get("namespace"))

    async def adelete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """:meth:`delete_nodes` without blocking the event loop."""
        await asyncio.to_thread(self.delete_nodes, node_ids, filters, **delete_kwargs)

    def clear(self, *, namespace: str | None = None) -> None:
        """Retire every fact of the namespace (history stays queryable with ``known_at``)."""
        self._retire(None, None, namespace)

    async def aclear(self, *, namespace: str | None = None) -> None:
        """:meth:`clear` without blocking the event loop."""
        await asyncio.to_thread(self.clear, namespace=namespace)

    def _retire(self, condition: Filter | None, node_ids: list[str] | None, namespace: Any) -> None:
        """One transaction: every statement the nodes or documents contributed, history too."""
        if node_ids is not None:
            if not node_ids:
                return
            named = any_of(  # facts written without the store answer to their fact id
                _listed("node_id", node_ids, "node_ids"), _listed("fact_id", node_ids, "node_ids")
            )
            condition = named if condition is None else all_of(condition, named)
        self._memory.retire_where(condition, namespace=self._namespace(namespace))

    def _namespace(self, value: object) -> str:
        return self.namespace if value is None else check_namespace(value)


@dataclass(frozen=True, slots=True)
class NodeWrite:
    """What one ``add`` asks: each node's id, text and metadata, and the write's options."""

    node_ids: list[str]
    texts: list[str]
    metadatas: list[dict[str, Any]]
    namespace: str
    valid_from: datetime | None
    speaker: str | None

    @property
    def named(self) -> Filter:
        """The stored facts of these node ids."""
        return where(NODE_ID, Op.IN, list(dict.fromkeys(self.node_ids)))

    def changed(self, stored: Sequence[Fact]) -> tuple[list[int], dict[str, Any]]:
        """Which nodes to write (a node stored with the same text and metadata is unchanged)
        and ``add_many``'s options: the stored facts of the others' ids are replaced in the
        same transaction, and each node is a statement of its own, whatever another node
        says (identical prose under two node ids stays two statements, each reachable by its
        node id and document)."""
        by_id: dict[str, list[Fact]] = {}
        for fact in stored:
            by_id.setdefault(node_id_of(fact.id, fact.metadata), []).append(fact)
        todo: list[int] = []
        replacing: list[str] = []
        for index, node_id in enumerate(self.node_ids):
            held = by_id.get(node_id, [])
            text, metadata = self.texts[index], self.metadatas[index]
            if any(f.text == text and thaw_metadata(f.metadata) == metadata for f in held):
                continue
            todo.append(index)
            replacing += [fact.id for fact in held]
        return todo, {
            "metadatas": [self.metadatas[i] for i in todo],
            "namespace": self.namespace,
            "valid_from": self.valid_from,
            "speaker": self.speaker,
            "replacing": list(dict.fromkeys(replacing)),
            "merge_prose": False,
        }

    def ids(self, todo: Sequence[int], added: Sequence[Added]) -> list[str]:
        """Each node's id: that of the node whose fact now carries it (its own, unless it was
        keyed and restated exactly the value another node holds)."""
        ids = list(self.node_ids)
        for index, item in zip(todo, added, strict=True):
            fact = next((w.fact for w in item.writes if w.fact is not None), None)
            if fact is not None:
                ids[index] = node_id_of(fact.id, fact.metadata)
        return ids


def _reopened(
    path: str, config: MemoryConfig | None, search_options: SearchOptions
) -> TemporalVectorStore:
    """A pickled store, reopened (see ``TemporalVectorStore.__reduce__``)."""
    store = TemporalVectorStore.open(path, config=config)
    store.search_options = search_options
    return store


def _where(query: VectorStoreQuery) -> Filter | None:
    parts = [translate_filters(query.filters, "query.filters")]
    if query.doc_ids:
        parts.append(_listed(REF_DOC_ID, query.doc_ids, "query.doc_ids"))
    if query.node_ids:  # an empty list is what as_retriever() passes for text-storing stores
        parts.append(_listed("node_id", query.node_ids, "query.node_ids"))
    found = [part for part in parts if part is not None]
    if not found:
        return None
    return found[0] if len(found) == 1 else all_of(*found)


def _listed(field: str, values: Sequence[str], name: str) -> Filter:
    if not values:
        raise InvalidInputError(name, "is an empty list", "name ids, or pass None")
    try:
        return where(field, Op.IN, list(values))
    except InvalidInputError as exc:
        raise InvalidInputError(name, exc.problem, "pass a list of id strings") from exc


def _of_nodes(facts: Sequence[Fact], node_ids: Sequence[str] | None) -> list[Fact]:
    if node_ids is None:
        return list(facts)
    wanted = set(node_ids)
    return [fact for fact in facts if node_id_of(fact.id, fact.metadata) in wanted]


def _result(hits: Sequence[Hit]) -> VectorStoreQueryResult:
    nodes = [hit_node(hit) for hit in hits]
    return VectorStoreQueryResult(
        nodes=nodes,
        similarities=[hit.score for hit in hits],
        ids=[node.node_id for node in nodes],
    )
