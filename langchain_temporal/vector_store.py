"""TemporalVectorStore: a LangChain vector store over a TemporalMemory (the current state
by default)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore, VectorStoreRetriever

from langchain_temporal.bridges import CoreEmbeddings, LangChainEmbedder
from langchain_temporal.documents import (
    DOCUMENT_DIGEST,
    DOCUMENT_ID,
    checked_documents,
    document_id_of,
    name_the_document,
    stored_document,
    written_metadata,
)
from langchain_temporal.filters import translate_filter
from langchain_temporal.retriever import DEFAULT_K
from shared_core.adapter_toolkit import (
    MemoryOwner,
    check_keywords,
    open_owning,
    owning,
    read_times,
)
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import to_datetime
from shared_core.facts import Fact, check_namespace, new_fact_id
from shared_core.filters import Filter, Op, any_of, as_filter, where
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import Added, Hit, MemoryConfig, SearchOptions, TemporalMemory
from shared_core.memory.config import memory_config
from shared_core.memory.options import OPTION_NAMES
from shared_core.memory.selection import Withdrawals

RETRIEVER_KWARGS = {
    "similarity_score_threshold": ("score_threshold",),
    "mmr": ("fetch_k", "lambda_mult"),
}
"""The keywords LangChain's VectorStoreRetriever itself reads, by search type."""
WRITE_KWARGS = ("ids", "namespace", "valid_from", "batch_size", "speaker")
"""What a write takes: ``batch_size`` is accepted for LangChain's indexing API, which passes
it; a call is one ledger transaction whatever it says."""
SEARCH_KWARGS = (*(name for name in OPTION_NAMES if name != "k"), "filter", "search_options")
"""What a search takes besides ``k``: every other search option (``filter``, the name Chroma,
PGVector and generic callers use, meaning ``where``), or ``search_options``."""


@dataclass(frozen=True, slots=True)
class Writes:
    """What one ``add_documents`` call asks: the Documents, their ids, what to write."""

    documents: list[Document]
    ids: list[str]
    metadatas: list[dict[str, Any]]
    named: list[str]  # the ids the caller gave (those may already name stored Documents)
    namespace: str
    valid_from: datetime | None
    speaker: str | None = None


class TemporalVectorStore(VectorStore):
    """A LangChain ``VectorStore`` whose every read and write goes through a
    :class:`~shared_core.TemporalMemory` (the ledger decides, the store translates).

    - **Writes** (``add_documents`` / ``add_texts``, async twins): each Document's text and
      metadata go through the memory's extractor, as :class:`TemporalRetriever` does:
      ``subject`` / ``relation`` / ``object`` / ``valid_from`` metadata make a keyed fact that
      supersedes the older value; anything else is prose. Every Document is a statement of its
      own under its id (the given one, ``Document.id``, else a new one): adding an id again
      with other content replaces that Document in one transaction (the old statement is
      withdrawn, unless the new one superseded it by key: then it stays as history), and
      adding it unchanged does nothing. ``namespace=`` and ``valid_from=`` (for Documents
      without one of their own) may be given; ``batch_size`` (LangChain's indexing API passes
      it) is accepted, and a call is one transaction whatever it says. Returns the ids; a
      keyed Document restating the value another Document holds reinforces it, and its id is
      that Document's.
    - **Speakers**: a Document's metadata names who wrote it under the memory's
      ``speaker_field`` (default ``"user_id"``), or ``speaker=`` names it for every Document
      of the call (and is written into their metadata there, so ``where={"user_id": ...}``
      finds them): first person ("I live in Berlin") is that speaker's, and nothing one
      speaker writes closes another's statement (docs/judging.md#speakers).
    - **Reads** (``similarity_search``, ``..._with_score``, ``..._by_vector``,
      ``max_marginal_relevance_search``, ``get_by_ids``): the current state unless the search
      options say otherwise. ``search_options`` (a
      :class:`~shared_core.memory.SearchOptions`, default ``k=4``, the current state) holds
      them; a search takes ``k`` and any other option as a keyword (``valid_at`` /
      ``known_at`` as aware datetimes, ISO-8601 strings with an offset or epoch seconds,
      ``namespace``, ``include_history``, ``where`` (or ``filter``, its LangChain name, which
      also reads the Chroma / PGVector operators ``$eq`` ... ``$nin``, ``$and``, ``$or``; a
      callable filter is refused), ``detector``, ``use_recency_buffer``,
      ``expand``), or ``search_options=`` to replace them for one call; ``as_retriever``
      checks its ``search_kwargs`` up front. Documents come back as written (their id, text and
      metadata; a keyed fact's key and valid time in the metadata); scores are cosine
      similarities.
    - **Deletes withdraw, never destroy**: ``delete(ids)`` withdraws every statement of those
      Documents (``None``: of the namespace), history included, as of now; a search with
      ``known_at`` before it still sees them, and a value they had superseded is current again.
      ``restore(ids)`` undoes it: the Documents are current again, as they were (history keeps
      the delete).
    - **Embeddings**: the memory's embedder embeds texts and queries; ``embeddings`` is it as
      LangChain ``Embeddings`` (for ``..._by_vector``).
    """

    def __init__(
        self,
        memory: TemporalMemory,
        *,
        namespace: str | None = None,
        search_options: SearchOptions | None = None,
    ) -> None:
        """``namespace`` (default that of ``search_options``) is where Documents are written
        and searched."""
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
        base = search_options if search_options is not None else SearchOptions(k=DEFAULT_K)
        self.memory = memory
        self.search_options = base.merged(namespace=namespace)
        self.memory_owner = MemoryOwner(memory)
        embedder = memory.embedder
        self._embeddings = (
            embedder.embeddings
            if isinstance(embedder, LangChainEmbedder)
            else CoreEmbeddings(embedder)
        )

    def __repr__(self) -> str:
        return f"TemporalVectorStore(namespace={self.namespace!r})"

    @property
    def namespace(self) -> str:
        """Where this store writes and searches (``search_options.namespace``)."""
        return self.search_options.namespace

    @property
    def embeddings(self) -> Embeddings:
        """The memory's embedder as LangChain ``Embeddings`` (the caller's own object when the
        memory embeds with a :class:`LangChainEmbedder`)."""
        return self._embeddings

    def close(self) -> None:
        """Close the memory if this store opened it (``from_texts``); idempotent."""
        self.memory_owner.close()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        memory: TemporalMemory | None = None,
        path: str | Path | None = None,
        config: MemoryConfig | None = None,
        namespace: str | None = None,
        embedding_name: str | None = None,
        **kwargs: Any,
    ) -> TemporalVectorStore:
        """A store holding ``texts``: over ``memory`` (``embedding`` must be its embedder),
        over ``TemporalMemory.open(path, config=config)`` embedded by ``embedding``, or, with
        neither, over an in-memory ledger and index built as ``config`` says (its ``embedder``
        stays ``None``: ``embedding`` is the embedder). ``embedding_name`` names the model for
        the index (it refuses another model's vectors; default: the class and its ``model``); a
        :class:`CoreEmbeddings` brings its core embedder and name. ``close()`` closes a memory
        the store opened. Other keywords go to :meth:`add_texts`."""
        store = cls._over(embedding, memory, path, config, namespace, embedding_name)
        try:
            store.add_texts(texts, metadatas, ids=ids, **kwargs)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _over(
        cls,
        embedding: Embeddings,
        memory: TemporalMemory | None,
        path: str | Path | None,
        config: MemoryConfig | None,
        namespace: str | None,
        name: str | None,
    ) -> TemporalVectorStore:
        if memory is not None:
            for given, value in (("path", path), ("config", config)):
                if value is not None:
                    raise InvalidInputError(given, "is given with memory", "pass one of them")
            if not _embeds_with(embedding, memory.embedder):
                raise InvalidInputError(
                    "embedding",
                    "is not the memory's embedder",
                    "pass the memory's embeddings (TemporalVectorStore(memory).embeddings)",
                )
            return cls(memory, namespace=namespace)
        asked = memory_config(config)
        if asked.embedder is not None:
            raise InvalidInputError(
                "config.embedder", "is given with embedding", "leave it None: embedding embeds"
            )
        built = replace(asked, embedder=core_embedder(embedding, name))

        def build(opened: TemporalMemory) -> TemporalVectorStore:
            return cls(opened, namespace=namespace)

        if path is not None:
            return open_owning(path, built, build)
        return owning(
            TemporalMemory(ledger=InMemoryLedger(), index=NumpyIndex(), config=built), build
        )

    # ------------------------------------------------------------------ writes
    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Remember texts as Documents (see :meth:`add_documents`)."""
        return self.add_documents(self._as_documents(texts, metadatas), ids=ids, **kwargs)

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """:meth:`add_texts` without blocking the event loop."""
        return await self.aadd_documents(self._as_documents(texts, metadatas), ids=ids, **kwargs)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Remember Documents in one ledger transaction and return their ids (see the class).
        ``ids=`` takes precedence over ``Document.id``; bad input stores nothing."""
        writes = self._writes(documents, kwargs)
        stored = (
            self.memory.select(self._named(writes.named), namespace=writes.namespace)
            if writes.named
            else []
        )
        todo, replacing = self._unchanged_and_replaced(writes, stored)
        added = self._add(writes, todo, replacing)
        return self._stored_ids(writes, todo, added)

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """:meth:`add_documents` on the memory's async path."""
        writes = self._writes(documents, kwargs)
        stored = (
            await self.memory.aselect(self._named(writes.named), namespace=writes.namespace)
            if writes.named
            else []
        )
        todo, replacing = self._unchanged_and_replaced(writes, stored)
        added = await self._aadd(writes, todo, replacing)
        return self._stored_ids(writes, todo, added)

    def _writes(self, documents: Sequence[Document], options: Mapping[str, Any]) -> Writes:
        """What to write for ``documents``: ids (``ids=`` first, then ``Document.id``, else
        new), each Document's metadata with the bookkeeping fields."""
        check_keywords(options, allowed=WRITE_KWARGS, call="add_documents")
        batch_size = options.get("batch_size", 1)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise InvalidInputError("batch_size", f"is {batch_size!r}", "pass an int >= 1")
        namespace = self._namespace(options.get("namespace"))
        valid_from = to_datetime(options.get("valid_from"), "valid_from")
        docs = checked_documents(documents)
        asked = self._given_ids(docs, options.get("ids"))
        ids = [found if found is not None else new_fact_id() for found in asked]
        return Writes(
            documents=docs,
            ids=ids,
            metadatas=[written_metadata(i, d, ids[i], valid_from) for i, d in enumerate(docs)],
            named=[found for found in asked if found is not None],
            namespace=namespace,
            valid_from=valid_from,
            speaker=options.get("speaker"),
        )

    def _add(self, writes: Writes, todo: list[int], replacing: list[str]) -> list[Added]:
        if not todo:
            return []
        texts, options = self._add_arguments(writes, todo, replacing)
        try:
            return self.memory.add_many(texts, **options)
        except InvalidInputError as exc:
            raise name_the_document(exc, writes.documents, todo) from exc

    async def _aadd(self, writes: Writes, todo: list[int], replacing: list[str]) -> list[Added]:
        if not todo:
            return []
        texts, options = self._add_arguments(writes, todo, replacing)
        try:
            return await self.memory.aadd_many(texts, **options)
        except InvalidInputError as exc:
            raise name_the_document(exc, writes.documents, todo) from exc

    @staticmethod
    def _as_documents(
        texts: Iterable[str], metadatas: list[dict[str, Any]] | None
    ) -> list[Document]:
        """``add_texts``'s texts and metadatas as Documents."""
        listed = list(texts)
        if metadatas is not None and len(metadatas) != len(listed):
            raise InvalidInputError(
                "metadatas",
                f"has {len(metadatas)} entries for {len(listed)} texts",
                "pass one metadata dict per text, or none",
            )
        for index, text in enumerate(listed):
            if not isinstance(text, str):
                raise InvalidInputError(
                    f"texts[{index}]", f"is a {type(text).__name__}", "pass str"
                )
        return [
            Document(page_content=text, metadata=metadatas[i] if metadatas else {})
            for i, text in enumerate(listed)
        ]

    @staticmethod
    def _given_ids(documents: list[Document], given: object) -> list[str | None]:
        """Each Document's id as the caller gave it (``ids=`` first, else ``Document.id``)."""
        if given is None:
            asked: list[object] = [document.id for document in documents]
        elif isinstance(given, str) or not isinstance(given, Sequence):
            raise InvalidInputError(
                "ids", f"is a {type(given).__name__}", "pass a list of id strings"
            )
        elif len(given) != len(documents):
            raise InvalidInputError(
                "ids", f"has {len(given)} ids for {len(documents)} documents", "pass one id each"
            )
        else:
            asked = list(given)
        out: list[str | None] = []
        for index, found in enumerate(asked):
            if found is not None and not isinstance(found, str):
                raise InvalidInputError(
                    f"ids[{index}]", f"is {found!r}", "pass id strings (or None)"
                )
            if found and found in out:
                raise InvalidInputError(
                    f"ids[{index}]", f"repeats {found!r}", "give each Document of a call its own id"
                )
            out.append(found or None)
        return out

    @staticmethod
    def _unchanged_and_replaced(
        writes: Writes, stored: Sequence[Fact]
    ) -> tuple[list[int], list[str]]:
        """Which Documents to write (a stored Document with the same id and digest is
        unchanged, not written again) and the fact ids of the stored ones they replace (in the
        same transaction: ``TemporalMemory.add_many(replacing=...)``)."""
        by_id: dict[str, list[Fact]] = {}
        for fact in stored:
            by_id.setdefault(document_id_of(fact.id, fact.metadata), []).append(fact)
        todo: list[int] = []
        replacing: list[str] = []
        for index, document_id in enumerate(writes.ids):
            held = by_id.get(document_id, [])
            digest = writes.metadatas[index][DOCUMENT_DIGEST]
            if any(fact.metadata.get(DOCUMENT_DIGEST) == digest for fact in held):
                continue
            todo.append(index)
            replacing += [fact.id for fact in held]
        return todo, replacing

    @staticmethod
    def _add_arguments(
        writes: Writes, todo: list[int], replacing: list[str]
    ) -> tuple[list[str], dict[str, Any]]:
        """``add_many``'s texts and options for the Documents to write."""
        return [writes.documents[i].page_content for i in todo], {
            "metadatas": [writes.metadatas[i] for i in todo],
            "namespace": writes.namespace,
            "valid_from": writes.valid_from,
            "replacing": replacing,
            "merge_prose": False,  # a Document is a statement of its own, whatever another says
            "speaker": writes.speaker,
        }

    @staticmethod
    def _stored_ids(writes: Writes, todo: list[int], added: list[Added]) -> list[str]:
        """Each Document's id: that of the Document whose fact now carries it (its own, unless
        it reinforced another's value)."""
        ids = list(writes.ids)
        for index, item in zip(todo, added, strict=True):
            fact = next((w.fact for w in item.writes if w.fact is not None), None)
            if fact is not None:
                ids[index] = document_id_of(fact.id, fact.metadata)
        return ids

    # ------------------------------------------------------------------ deletes (withdraw)
    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Withdraw the Documents with these ids (``None``: every one in the namespace),
        history included, as of now. Unknown ids are ignored. Returns True."""
        check_keywords(kwargs, allowed=("namespace",), call="delete")
        if ids is not None and not ids:
            return True
        condition = None if ids is None else self._named(self._id_list(ids))
        self.memory.retire_where(condition, namespace=self._namespace(kwargs.get("namespace")))
        return True

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """:meth:`delete` on the memory's async path."""
        check_keywords(kwargs, allowed=("namespace",), call="delete")
        if ids is not None and not ids:
            return True
        condition = None if ids is None else self._named(self._id_list(ids))
        await self.memory.aretire_where(
            condition, namespace=self._namespace(kwargs.get("namespace"))
        )
        return True

    def restore(self, ids: list[str], **kwargs: Any) -> bool:
        """Undo :meth:`delete` for these Documents: each comes back as current, as it was when
        deleted (the statements the latest delete of it withdrew are recorded again, as new;
        the withdrawn records and the delete stay in history, so a search ``known_at`` between
        the delete and now still sees it deleted, and a value it had superseded is superseded
        again). A Document that is current (never deleted, or written again since) is left as
        it is. Returns True if a Document came back, False if none needed to. An id no
        Document of the namespace ever had is an InvalidInputError naming it, and nothing is
        restored. Takes ``namespace=``."""
        condition, namespace = self._restoring(ids, kwargs)
        if condition is None:
            return False
        found = self.memory.withdrawals(condition, namespace=namespace, per=DOCUMENT_ID)
        self._check_known(ids, found, namespace)
        restored = self.memory.restore_where(condition, namespace=namespace, per=DOCUMENT_ID)
        return bool(restored)

    async def arestore(self, ids: list[str], **kwargs: Any) -> bool:
        """:meth:`restore` on the memory's async path."""
        condition, namespace = self._restoring(ids, kwargs)
        if condition is None:
            return False
        found = await self.memory.awithdrawals(condition, namespace=namespace, per=DOCUMENT_ID)
        self._check_known(ids, found, namespace)
        restored = await self.memory.arestore_where(condition, namespace=namespace, per=DOCUMENT_ID)
        return bool(restored)

    def _restoring(self, ids: object, options: Mapping[str, Any]) -> tuple[Filter | None, str]:
        """What :meth:`restore` reads: the filter naming the ids (``None``: no id) and the
        namespace."""
        check_keywords(options, allowed=("namespace",), call="restore")
        if ids is None:
            raise InvalidInputError(
                "ids", "is None", "name the Documents to restore (the ids delete was given)"
            )
        wanted = self._id_list(ids)  # type: ignore[arg-type]  # checked there
        namespace = self._namespace(options.get("namespace"))
        return (self._named(wanted) if wanted else None), namespace

    @staticmethod
    def _check_known(ids: Sequence[str], found: Withdrawals, namespace: str) -> None:
        """InvalidInputError naming the first id no Document (nor fact) of the namespace had."""
        for index, asked in enumerate(ids):
            if asked not in found.found and asked not in found.fact_ids:
                raise InvalidInputError(
                    f"ids[{index}]",
                    f"{asked!r} names no Document of namespace {namespace!r}, current or deleted",
                    "pass ids that add_documents returned and delete was given (and the "
                    "namespace they were written in)",
                )

    # ------------------------------------------------------------------ reads
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The current Documents with these ids, in the order asked (unknown ids are left
        out)."""
        wanted = self._id_list(ids)
        facts = self.memory.select(self._named(wanted), namespace=self.namespace) if wanted else []
        return self._in_order(wanted, facts)

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """:meth:`get_by_ids` on the memory's async path."""
        wanted = self._id_list(ids)
        facts = (
            await self.memory.aselect(self._named(wanted), namespace=self.namespace)
            if wanted
            else []
        )
        return self._in_order(wanted, facts)

    def similarity_search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Document]:
        """The ``k`` Documents nearest to ``query`` (see the class for the keywords)."""
        return [document for document, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(
        self, query: str, k: int | None = None, **kwargs: Any
    ) -> list[Document]:
        """:meth:`similarity_search` on the memory's async path."""
        found = await self.asimilarity_search_with_score(query, k, **kwargs)
        return [document for document, _ in found]

    def similarity_search_with_score(
        self, query: str, k: int | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """(Document, cosine similarity) for the ``k`` nearest Documents."""
        return self._scored(self.memory.search(query, self._options(k, kwargs)))

    async def asimilarity_search_with_score(
        self, query: str, k: int | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """:meth:`similarity_search_with_score` on the memory's async path."""
        return self._scored(await self.memory.asearch(query, self._options(k, kwargs)))

    def similarity_search_by_vector(
        self, embedding: list[float], k: int | None = None, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` Documents nearest to a query embedded by :attr:`embeddings`."""
        hits = self.memory.search_by_vector(embedding, self._options(k, kwargs))
        return [document for document, _ in self._scored(hits)]

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int | None = None, **kwargs: Any
    ) -> list[Document]:
        """:meth:`similarity_search_by_vector` on the memory's async path."""
        hits = await self.memory.asearch_by_vector(embedding, self._options(k, kwargs))
        return [document for document, _ in self._scored(hits)]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int | None = None,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` Documents among the ``fetch_k`` nearest, chosen for relevance and diversity
        (maximal marginal relevance over their stored embeddings; ``lambda_mult`` 1: relevance
        alone, 0: diversity alone)."""
        embedding = self.memory.embedder.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(
            embedding, k, fetch_k, lambda_mult, **kwargs
        )

    async def amax_marginal_relevance_search(
        self,
        query: str,
        k: int | None = None,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """:meth:`max_marginal_relevance_search` on the memory's async path."""
        embedding = await asyncio.to_thread(self.memory.embedder.embed_query, query)
        return await self.amax_marginal_relevance_search_by_vector(
            embedding, k, fetch_k, lambda_mult, **kwargs
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int | None = None,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """:meth:`max_marginal_relevance_search` for a query embedded by :attr:`embeddings`."""
        options, fetch = self._mmr_options(self._options(k, kwargs), fetch_k, lambda_mult)
        hits = self.memory.search_by_vector(embedding, fetch)
        vectors = self.memory.vectors([hit.fact.id for hit in hits])
        return self._diverse(embedding, hits, vectors, options.k, lambda_mult)

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int | None = None,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """:meth:`max_marginal_relevance_search_by_vector` on the memory's async path."""
        options, fetch = self._mmr_options(self._options(k, kwargs), fetch_k, lambda_mult)
        hits = await self.memory.asearch_by_vector(embedding, fetch)
        vectors = await self.memory.avectors([hit.fact.id for hit in hits])
        return self._diverse(embedding, hits, vectors, options.k, lambda_mult)

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Cosine similarity, clipped to [0, 1] (opposite directions are as dissimilar)."""
        return self._relevance

    def as_retriever(self, **kwargs: Any) -> VectorStoreRetriever:
        """LangChain's ``VectorStoreRetriever`` over this store. Its ``search_kwargs`` may hold
        ``k`` and the search options (``valid_at``, ``known_at``, ``namespace``,
        ``include_history``, ``where``, ..., or ``search_options``), besides what the search
        type reads (``score_threshold``; ``fetch_k``, ``lambda_mult``); they are checked now,
        a bad one is an InvalidInputError naming it."""
        search_kwargs = kwargs.get("search_kwargs") or {}
        if not isinstance(search_kwargs, Mapping):
            raise InvalidInputError(
                "search_kwargs", f"is a {type(search_kwargs).__name__}", "pass a dict"
            )
        own = RETRIEVER_KWARGS.get(kwargs.get("search_type", "similarity"), ())
        options = {name: value for name, value in search_kwargs.items() if name not in own}
        self._options(options.pop("k", None), options, field="search_kwargs")
        return super().as_retriever(**kwargs)

    @staticmethod
    def _in_order(ids: Sequence[str], facts: Sequence[Fact]) -> list[Document]:
        """The facts as Documents, in the order their ids were asked."""
        documents = [stored_document(fact) for fact in facts]
        rank = {found: position for position, found in enumerate(ids)}
        return sorted(documents, key=lambda document: rank.get(document.id or "", len(rank)))

    @staticmethod
    def _scored(hits: Sequence[Hit]) -> list[tuple[Document, float]]:
        """(Document, cosine similarity) per hit."""
        return [(stored_document(hit.fact), hit.score) for hit in hits]

    @staticmethod
    def _mmr_options(
        options: SearchOptions, fetch_k: int, lambda_mult: float
    ) -> tuple[SearchOptions, SearchOptions]:
        """The options asked and those fetching MMR's candidates (``fetch_k`` of them, or
        ``k``)."""
        if not isinstance(fetch_k, int) or isinstance(fetch_k, bool) or fetch_k < 1:
            raise InvalidInputError("fetch_k", f"is {fetch_k!r}", "pass an int >= 1")
        if (
            not isinstance(lambda_mult, int | float)
            or isinstance(lambda_mult, bool)
            or not 0 <= lambda_mult <= 1
        ):
            raise InvalidInputError("lambda_mult", f"is {lambda_mult!r}", "pass a number in [0, 1]")
        return options, replace(options, k=max(fetch_k, options.k))

    @staticmethod
    def _diverse(
        query: Sequence[float],
        hits: Sequence[Hit],
        vectors: Mapping[str, Sequence[float]],
        k: int,
        lambda_mult: float,
    ) -> list[Document]:
        """Maximal marginal relevance over the hits' stored vectors (langchain_core's)."""
        import numpy as np  # only when asked: importing the adapter loads nothing heavy
        from langchain_core.vectorstores.utils import maximal_marginal_relevance

        ranked = [hit for hit in hits if hit.fact.id in vectors]
        if not ranked:
            return []
        chosen = maximal_marginal_relevance(
            np.asarray(query, dtype=np.float64),
            [list(vectors[hit.fact.id]) for hit in ranked],
            lambda_mult=lambda_mult,
            k=k,
        )
        return [stored_document(ranked[index].fact) for index in chosen]

    @staticmethod
    def _relevance(score: float) -> float:
        """A cosine similarity as LangChain's relevance in [0, 1] (clipped)."""
        return 0.0 if math.isnan(score) else min(1.0, max(0.0, score))

    # ------------------------------------------------------------------ internals
    def _options(
        self, k: int | None, given: Mapping[str, Any], *, field: str | None = None
    ) -> SearchOptions:
        """The search options of one call: the store's, or ``search_options=``, changed by
        ``k`` and the other keywords (times may be ISO-8601 strings or epoch seconds). Errors
        name the keyword (``search_kwargs['valid_at']`` when ``field`` says where it came
        from)."""
        try:
            unknown = sorted(set(given) - set(SEARCH_KWARGS))
            if unknown:
                raise InvalidInputError(
                    unknown[0], "is not a search option", f"use k or {', '.join(SEARCH_KWARGS)}"
                )
            changes = _filter_as_where(given)
            chosen = changes.pop("search_options", None)
            if chosen is not None and not isinstance(chosen, SearchOptions):
                raise InvalidInputError(
                    "search_options",
                    f"is a {type(chosen).__name__}",
                    "pass SearchOptions(...) or None",
                )
            asked = (chosen or self.search_options).merged(**read_times(changes))  # type: ignore[arg-type]
            return asked.merged(k=k)
        except InvalidInputError as exc:
            if field is None or exc.field not in (*given, "k"):
                raise
            raise InvalidInputError(f"{field}[{exc.field!r}]", exc.problem, exc.fix) from exc

    def _namespace(self, value: object) -> str:
        return self.namespace if value is None else check_namespace(value)

    @staticmethod
    def _id_list(ids: Sequence[str]) -> list[str]:
        """The Document ids asked, checked, each once."""
        if isinstance(ids, str) or not isinstance(ids, Sequence):
            raise InvalidInputError(
                "ids", f"is a {type(ids).__name__}", "pass a list of id strings"
            )
        for index, found in enumerate(ids):
            if not isinstance(found, str) or not found:
                raise InvalidInputError(f"ids[{index}]", f"is {found!r}", "pass id strings")
        return list(dict.fromkeys(ids))

    @staticmethod
    def _named(ids: Sequence[str]) -> Filter:
        """The facts these Document ids name: written by the store, or by their fact ids."""
        return any_of(where(DOCUMENT_ID, Op.IN, list(ids)), where("fact_id", Op.IN, list(ids)))


def _filter_as_where(given: Mapping[str, Any]) -> dict[str, Any]:
    """A search's keywords with LangChain's ``filter`` read as ``where``: a dict of field ->
    value, the Chroma / PGVector operators (:mod:`langchain_temporal.filters`) or a
    :mod:`shared_core.filters` filter. A callable filter, or a ``filter`` and a ``where`` that
    differ, is an InvalidInputError naming them."""
    changes = dict(given)
    if "filter" not in changes:
        return changes
    value = changes.pop("filter")
    if value is None:
        return changes
    if callable(value):
        raise InvalidInputError(
            "filter",
            "is a callable (a Document -> bool predicate); the index filters on metadata, "
            "not by running Python on each Document",
            'pass a metadata filter: a dict of field -> value ({"source": "chat"}), with '
            'operators ({"year": {"$gte": 2020}}), or shared_core.filters.where(...)',
        )
    asked = translate_filter(value)
    held = changes.get("where")
    if held is not None and as_filter(held) != asked:
        raise InvalidInputError(
            "filter, where",
            "are both given and differ",
            "pass one of them (filter is LangChain's name for where)",
        )
    changes["where"] = asked
    return changes


def core_embedder(embedding: Embeddings, name: str | None = None) -> Embedder:
    """A LangChain ``Embeddings`` as the core embedder: the embedder a :class:`CoreEmbeddings`
    wraps, else a :class:`LangChainEmbedder` named ``name`` (default: the class and its
    ``model`` or ``model_name``)."""
    if isinstance(embedding, CoreEmbeddings):
        return embedding.embedder
    if name is None:
        kind = type(embedding)
        name = f"langchain:{kind.__module__}.{kind.__qualname__}"
        model = getattr(embedding, "model", None) or getattr(embedding, "model_name", None)
        if isinstance(model, str) and model:
            name += f":{model}"
    return LangChainEmbedder(embedding, name=name)


def _embeds_with(embedding: Embeddings, embedder: Embedder) -> bool:
    """Whether ``embedding`` is ``embedder`` (wrapped one way or the other)."""
    if isinstance(embedding, CoreEmbeddings):
        return embedding.embedder is embedder
    return isinstance(embedder, LangChainEmbedder) and embedder.embeddings is embedding
