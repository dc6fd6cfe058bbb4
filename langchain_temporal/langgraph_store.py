"""TemporalStore: LangGraph long-term memory (a ``BaseStore``) on a TemporalMemory.

Needs the ``langgraph`` extra: ``pip install "temporal-rag[langgraph]"``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Self

from shared_core.adapter_toolkit import MemoryOwner, open_owning
from shared_core.errors import InvalidInputError, MissingDependencyError, NothingToRetractError
from shared_core.facts import Fact
from shared_core.memory import MemoryConfig, TemporalMemory

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        tokenize_path,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise MissingDependencyError(
        "langchain_temporal.TemporalStore needs langgraph-checkpoint, which is not installed: "
        'pip install "temporal-rag[langgraph]"'
    ) from exc

from langchain_temporal.langgraph_codec import (
    ITEM_RELATION,
    NAMESPACE_ROOT,
    TextPaths,
    decode_namespace,
    encode_key,
    encode_namespace,
    fixed_prefix,
    item_text,
    namespace_matches,
    placeholder_vector,
    text_digest,
    value_digest,
    value_matches,
)
from langchain_temporal.langgraph_items import (
    Found,
    ItemVersion,
    as_item,
    as_version,
    check_index,
    check_labels,
    check_page,
    checked_value,
    is_item,
)

__all__ = ["ItemVersion", "TemporalStore"]

WIDEN = 4  # a query search that filters out too many hits asks the index again for 4x as many


@dataclass(frozen=True, slots=True)
class _Times:
    """When a read looks: valid at ``valid_at`` as known at ``known_at`` (``None``: now)."""

    valid_at: datetime | None = None
    known_at: datetime | None = None


_NOW = _Times()


class TemporalStore(BaseStore):
    """LangGraph long-term memory on a :class:`~shared_core.TemporalMemory`: a ``put`` of an
    existing item supersedes its value (the old version keeps its valid time in history), a
    ``delete`` retracts it (history kept), reads see the current state; :meth:`history`,
    :meth:`get_as_of` and :meth:`search_as_of` see the past.

    ``index`` is LangGraph's ``IndexConfig``: ``fields`` (default ``["$"]``, the whole value)
    says which text of a value is embedded for ``search(query=...)``, per put overridden by
    ``index=False`` or a list of paths. The memory's embedder embeds: ``embed`` and ``dims``
    may be left out, and if given must be that model. Without ``index`` (as in LangGraph's
    stores) nothing is embedded for search and a query is ignored: searches list and filter.
    See docs/adapters.md#langgraph for the mapping of namespaces, keys and values.

    **Speakers**: a LangGraph namespace (``("memories", user_id)``, as LangGraph apps scope
    memories per user) is one memory namespace (``langgraph.memories.<user_id>``), and nothing
    closes across memory namespaces; each item also names that memory namespace as its speaker
    under the memory's ``speaker_field`` (default ``"user_id"``), so two users' "I live in ..."
    never meet (docs/judging.md#speakers).
    """

    def __init__(self, memory: TemporalMemory, *, index: IndexConfig | None = None) -> None:
        if not isinstance(memory, TemporalMemory):
            raise InvalidInputError(
                "memory", f"is a {type(memory).__name__}", "pass a shared_core TemporalMemory"
            )
        self.memory = memory
        self.index_config = index
        self._fields: TextPaths | None = check_index(index, memory.embedder)
        self.memory_owner = MemoryOwner(memory)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        index: IndexConfig | None = None,
        config: MemoryConfig | None = None,
    ) -> TemporalStore:
        """A store over ``TemporalMemory.open(path, config=config)`` (SQLite + Chroma + MiniLM
        by default); :meth:`close` closes that memory.

        Raises:
            InvalidInputError: ``config.prose_judge`` is set: the store writes only keyed items
                (keyed by namespace and key), so a prose judge would load and never act.
        """
        if isinstance(config, MemoryConfig) and config.prose_judge is not None:
            raise InvalidInputError(
                "config.prose_judge",
                "is set, but a TemporalStore writes only items keyed by (namespace, key), "
                "which are never judged: the judge would load and never act",
                "leave prose_judge out of the MemoryConfig you pass to TemporalStore.open; to "
                "judge prose written beside the store, build the memory yourself and pass it "
                "to TemporalStore(memory)",
            )
        return open_owning(path, config, lambda memory: cls(memory, index=index))

    def close(self) -> None:
        """Close the memory if this store opened it (see :meth:`open`); idempotent."""
        self.memory_owner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's ops: reads first, in order, then the batch's puts and deletes (the
        last op per item wins), as LangGraph's in-memory store does."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = []
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key, _NOW))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, _NOW))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                writes[(op.namespace, op.key)] = op
                results.append(None)
            else:
                raise InvalidInputError(
                    "ops", f"holds a {type(op).__name__}", "pass GetOp, PutOp, SearchOp, ..."
                )
        self._write(list(writes.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` off the event loop (the memory's work blocks: SQLite, Chroma, the
        embedder), as the memory's own ``a*`` methods run."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ------------------------------------------------------------------ the past
    def history(
        self, namespace: tuple[str, ...], key: str, *, known_at: datetime | None = None
    ) -> list[ItemVersion]:
        """Every version of one item in valid-time order, as known at ``known_at`` (default
        now): each put that changed its value, until the next put or the delete."""
        check_labels(namespace)
        facts = self.memory.history(
            encode_key(key),
            ITEM_RELATION,
            namespace=encode_namespace(tuple(namespace)),
            known_at=known_at,
        )
        return [as_version(fact) for fact in facts if is_item(fact)]

    def get_as_of(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> Item | None:
        """The item as it stood at ``valid_at`` as known at ``known_at`` (default now), or
        ``None`` if it did not exist (or was deleted) then."""
        check_labels(namespace)
        return self._get(tuple(namespace), key, _Times(valid_at, known_at))

    def search_as_of(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[SearchItem]:
        """:meth:`search` over the items as they stood at ``valid_at`` as known at
        ``known_at`` (default now)."""
        op = SearchOp(tuple(namespace_prefix), filter, limit, offset, query)
        validate_op_namespace(op)
        return self._search(op, _Times(valid_at, known_at))

    async def ahistory(
        self, namespace: tuple[str, ...], key: str, *, known_at: datetime | None = None
    ) -> list[ItemVersion]:
        """:meth:`history` off the event loop."""
        return await asyncio.to_thread(self.history, namespace, key, known_at=known_at)

    async def aget_as_of(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> Item | None:
        """:meth:`get_as_of` off the event loop."""
        return await asyncio.to_thread(
            self.get_as_of, namespace, key, valid_at=valid_at, known_at=known_at
        )

    async def asearch_as_of(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[SearchItem]:
        """:meth:`search_as_of` off the event loop."""
        return await asyncio.to_thread(
            self.search_as_of,
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            valid_at=valid_at,
            known_at=known_at,
        )

    # ------------------------------------------------------------------ reads
    def _get(self, namespace: tuple[str, ...], key: str, times: _Times) -> Item | None:
        fact = self._current(encode_namespace(namespace), encode_key(key), times)
        return None if fact is None else as_item(fact)

    def _current(self, namespace: str, subject: str, times: _Times) -> Fact | None:
        facts = self.memory.as_of(
            namespace=namespace,
            subject=subject,
            relation=ITEM_RELATION,
            valid_at=times.valid_at,
            known_at=times.known_at,
        )
        found = [fact for fact in facts if is_item(fact)]
        return found[0] if found else None

    def _search(self, op: SearchOp, times: _Times) -> list[SearchItem]:
        check_page(op.limit, op.offset)
        namespaces = self._namespaces(op.namespace_prefix, times)
        wanted = op.offset + op.limit
        ranked: list[Found] = []
        query = op.query if op.query and op.query.strip() else None
        if query is not None and self._fields is not None:
            ranked = self._ranked(query, op.filter, namespaces, wanted, times)
        if len(ranked) < wanted:  # then every unranked item that matches, newest first
            ranked += [
                item
                for item in self._listed(op.filter, namespaces, times)
                if query is None or self._fields is None or not item.indexed
            ]
        return [item.search_item for item in ranked[op.offset : wanted]]

    def _ranked(
        self,
        query: str,
        condition: dict[str, Any] | None,
        namespaces: Sequence[str],
        wanted: int,
        times: _Times,
    ) -> list[Found]:
        """Indexed items nearest to ``query``, best first: at least ``wanted`` of them when the
        namespaces hold that many that match ``condition``."""
        k = max(wanted, 1)
        while True:
            found: list[Found] = []
            more = False
            for namespace in namespaces:
                hits = self.memory.search(
                    query,
                    k=k,
                    namespace=namespace,
                    valid_at=times.valid_at,
                    known_at=times.known_at,
                )
                more = more or len(hits) >= k
                for hit in hits:
                    if is_item(hit.fact):
                        candidate = Found(hit.fact, hit.score)
                        if candidate.indexed and value_matches(candidate.value, condition):
                            found.append(candidate)
            if len(found) >= wanted or not more:
                found.sort(key=lambda f: (-f.score_value, f.order))
                return found
            k *= WIDEN

    def _listed(
        self, condition: dict[str, Any] | None, namespaces: Sequence[str], times: _Times
    ) -> list[Found]:
        """Every item of ``namespaces`` matching ``condition``, most recently updated first."""
        found = [
            Found(fact, None)
            for namespace in namespaces
            for fact in self.memory.as_of(
                namespace=namespace,
                relation=ITEM_RELATION,
                valid_at=times.valid_at,
                known_at=times.known_at,
            )
            if is_item(fact)
        ]
        found = [f for f in found if value_matches(f.value, condition)]
        found.sort(key=lambda f: (-f.updated_at.timestamp(), f.order))
        return found

    def _namespaces(self, prefix: tuple[str, ...], times: _Times) -> list[str]:
        """The memory namespaces of the store's namespaces under ``prefix`` that hold items."""
        base = encode_namespace(prefix)
        names = self.memory.namespaces(
            prefix=base, valid_at=times.valid_at, known_at=times.known_at
        )
        return [n for n in names if n == base or n.startswith(base + ".")]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        check_page(op.limit, op.offset)
        conditions = op.match_conditions or ()
        prefixes = [fixed_prefix(c.path) for c in conditions if c.match_type == "prefix"]
        base = encode_namespace(max(prefixes, key=len)) if prefixes else NAMESPACE_ROOT
        found = [
            labels
            for name in self.memory.namespaces(prefix=base)
            if (labels := decode_namespace(name))
            and all(namespace_matches(c.match_type, c.path, labels) for c in conditions)
        ]
        if op.max_depth is not None:
            found = list({labels[: op.max_depth] for labels in found})
        return sorted(found)[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ writes
    def _write(self, writes: Sequence[PutOp]) -> None:
        facts = [self._fact(op) for op in writes if op.value is not None]
        # Every read but a query search reads the ledger, and a query search brings the index
        # up to date first: so the index catches up on writes then (one batch), not per write.
        if facts:
            # one ledger transaction, one embedding call for the indexed items; the others get
            # a placeholder vector, so a store without ``index`` never calls the embedder
            self.memory.add_many(facts, vectors=self._placeholders(facts), defer_index=True)
        for op in writes:
            if op.value is None:
                self._delete(op.namespace, op.key)

    def _placeholders(self, facts: Sequence[Fact]) -> dict[str, list[float]]:
        """Placeholder vectors for the texts of items that are not indexed (unless an indexed
        item of the batch has the same text: then it is embedded, for both)."""
        embedded = {f.text for f in facts if f.metadata.get("indexed")}
        dimension = self.memory.embedder.dimension
        return {
            f.text: placeholder_vector(f.text, dimension)
            for f in facts
            if not f.metadata.get("indexed") and f.text not in embedded
        }

    def _fact(self, op: PutOp) -> Fact:
        """The fact a put writes: its value verbatim, its text as the index config says."""
        if op.ttl is not None:
            raise NotImplementedError(f"TTL is not supported by {type(self).__name__}")
        value = checked_value(op.value)
        namespace, subject = encode_namespace(op.namespace), encode_key(op.key)
        paths = self._paths(op.index)
        text, indexed = item_text(value, paths, get_text_at_path)
        metadata: dict[str, Any] = {
            "key": op.key,
            "value": value,
            "indexed": indexed,
            "text_digest": text_digest(text),
        }
        if indexed and paths is not None:
            metadata["fields"] = [path for path, _ in paths]
        field = self.memory.speaker_field
        if field is not None and field not in metadata:
            metadata[field] = namespace  # the namespace speaks for its items
        current = self._current(namespace, subject, _NOW)
        if current is not None:  # a new value of an existing item: it was created back then
            metadata["created_at"] = Found(current, None).created_at.isoformat()
        return Fact(
            text=text,
            subject=subject,
            relation=ITEM_RELATION,
            object=value_digest(value, text, indexed),
            namespace=namespace,
            metadata=metadata,
        )

    def _paths(self, index: Literal[False] | list[str] | None) -> TextPaths | None:
        if self._fields is None or index is False:
            return None
        if index is None:
            return self._fields
        return [(path, path if path == "$" else tokenize_path(path)) for path in index]

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        with suppress(NothingToRetractError):  # nothing to delete, as in LangGraph's stores
            self.memory.retract(
                encode_key(key),
                ITEM_RELATION,
                namespace=encode_namespace(namespace),
                defer_index=True,
            )
