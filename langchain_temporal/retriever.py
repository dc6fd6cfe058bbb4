"""TemporalRetriever: a LangChain retriever over a TemporalMemory (current state by default)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Unpack

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, InstanceOf, model_validator

from langchain_temporal.documents import checked_documents, hit_document
from shared_core.adapter_toolkit import read_times, search_changes
from shared_core.memory import SearchChanges, SearchOptions, TemporalMemory
from shared_core.memory.options import OPTION_NAMES

DEFAULT_K = 4
"""LangChain retrievers return four documents unless told otherwise."""


class TemporalRetriever(BaseRetriever):
    """The ``k`` facts of a :class:`~shared_core.TemporalMemory` nearest to the query that are
    valid at ``valid_at`` as known at ``known_at`` (both default to now: the current state).

    Fields (keyword only): ``memory`` and ``search_options``, a
    :class:`~shared_core.memory.SearchOptions` (default: ``k=4``, the current state). Every
    search option may also be given on its own, ``TemporalRetriever(memory=m, k=3,
    valid_at=...)``, and ``invoke(query, k=..., valid_at=...)`` takes any of them as a keyword
    to change it for one call (``None`` keeps the field; ``where={}`` drops the field's
    filter). Times may be aware datetimes, ISO-8601 strings with an offset or epoch seconds.
    ``expand`` needs the memory's ``expander`` (e.g. ``text_llm(chat_model)``). Writes
    (:meth:`add_documents`) go to ``search_options.namespace``.

    Each Document's ``page_content`` is the fact's text and ``id`` its fact id (or, for a
    fact :class:`TemporalVectorStore` wrote, its Document's id, as shadows name it). Its
    ``metadata`` holds the fact's own metadata, then (these win on a clash) ``fact_id``,
    ``subject``, ``relation``, ``object`` (``None`` for prose), ``valid_from``, ``valid_to``,
    ``recorded_at`` (ISO-8601 strings; ``None`` is an open end), ``status`` (``"current"``,
    ``"superseded"``, ...), ``namespace``, ``score`` (cosine similarity to the query),
    ``from_buffer`` (added by the recency buffer) and ``shadows``: one dict per candidate
    Phi_T removed because of this document (see :mod:`shared_core.adapter_toolkit`); empty
    without a ``detector``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: InstanceOf[TemporalMemory]
    search_options: InstanceOf[SearchOptions] = Field(
        default_factory=lambda: SearchOptions(k=DEFAULT_K)
    )

    @model_validator(mode="before")
    @classmethod
    def _gather_search_options(cls, data: Any) -> Any:
        """Search options given one by one join ``search_options`` (checked now, so that a
        bad one is a ValidationError naming it)."""
        if not isinstance(data, dict):
            return data
        given = {name: data[name] for name in OPTION_NAMES if name in data}
        if not given:
            return data
        rest = {key: value for key, value in data.items() if key not in given}
        base = rest.get("search_options", SearchOptions(k=DEFAULT_K))
        if not isinstance(base, SearchOptions):
            return data  # pydantic reports the wrong type
        changes = search_changes(given, allowed=OPTION_NAMES, call="TemporalRetriever")
        return {**rest, "search_options": base.merged(**changes)}

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        **changes: Unpack[SearchChanges],
    ) -> list[Document]:
        hits = self.memory.search(query, self.search_options, **read_times(changes))
        return [hit_document(hit) for hit in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        **changes: Unpack[SearchChanges],
    ) -> list[Document]:
        hits = await self.memory.asearch(query, self.search_options, **read_times(changes))
        return [hit_document(hit) for hit in hits]

    def add_documents(
        self,
        documents: Sequence[Document],
        *,
        namespace: str | None = None,
        valid_from: datetime | None = None,
    ) -> list[str]:
        """Remember Documents (one ledger transaction) and return the stored fact ids.

        Each Document's text and metadata go through the memory's extractor: with the
        default ``MetadataExtractor``, ``subject`` / ``relation`` / ``object`` / ``valid_from``
        metadata make a keyed fact and anything else stays prose. The ids are those of the
        versions that now carry each statement, flattened in order: a Document repeating a
        value already held returns that fact's id, and one Document may yield several facts
        (an LLM judge, ``prose_judge=LLMExtractor(...)``). Bad input stores nothing.
        """
        texts, metadatas = _unpack(documents)
        added = self.memory.add_many(
            texts,
            metadatas=metadatas,
            namespace=self.search_options.namespace if namespace is None else namespace,
            valid_from=valid_from,
        )
        return [fact_id for item in added for fact_id in item.fact_ids]

    async def aadd_documents(
        self,
        documents: Sequence[Document],
        *,
        namespace: str | None = None,
        valid_from: datetime | None = None,
    ) -> list[str]:
        """:meth:`add_documents` without blocking the event loop."""
        texts, metadatas = _unpack(documents)
        added = await self.memory.aadd_many(
            texts,
            metadatas=metadatas,
            namespace=self.search_options.namespace if namespace is None else namespace,
            valid_from=valid_from,
        )
        return [fact_id for item in added for fact_id in item.fact_ids]


def _unpack(documents: Sequence[Document]) -> tuple[list[str], list[dict[str, Any]]]:
    checked = checked_documents(documents)
    return [d.page_content for d in checked], [dict(d.metadata) for d in checked]
