"""TemporalRetriever: a LangChain retriever over a TemporalMemory (current state by default)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import AwareDatetime, ConfigDict, Field, SkipValidation, field_validator

from langchain_temporal._shadows import SHADOWS_KEY, iso, shadow_entry
from shared_core.dominance import ConflictDetector
from shared_core.errors import InvalidInputError
from shared_core.facts import DEFAULT_NAMESPACE, thaw_metadata
from shared_core.filters import Filter, as_filter
from shared_core.memory import Hit, TemporalMemory


class TemporalRetriever(BaseRetriever):
    """The ``k`` facts of a :class:`~shared_core.TemporalMemory` nearest to the query that are
    valid at ``valid_at`` as known at ``known_at`` (both default to now: the current state).

    Fields (keyword only): ``memory``, ``k`` (default 4), ``namespace``, ``valid_at``,
    ``known_at``, ``detector`` (Phi_T over the candidates; ``None``: no read-time filter),
    ``include_history``, ``use_recency_buffer``, ``expand`` (LLM query rewrites; needs the
    memory's ``expander``, e.g. ``text_llm(chat_model)``) and ``where`` (a metadata filter:
    ``shared_core.filters.where(...)`` or a dict of field -> value); they mean what they mean in
    ``TemporalMemory.search``, which does all the work. ``invoke(query, k=..., valid_at=...)``
    takes any of them as a keyword to override it for one call (``None`` keeps the field;
    ``where={}`` drops the field's filter).

    Each Document's ``page_content`` is the fact's text and ``id`` its fact id. Its
    ``metadata`` holds the fact's own metadata, then (these win on a clash): ``id``,
    ``subject``, ``relation``, ``object`` (``None`` for prose), ``valid_from``, ``valid_to``,
    ``recorded_at`` (ISO-8601 strings; ``None`` is an open end), ``status`` (``"current"``,
    ``"superseded"``, ...), ``score`` (cosine similarity to the query), ``namespace``,
    ``from_buffer`` (added by the recency buffer) and ``shadows``: a list with one dict per
    candidate Phi_T removed because of this document (``id``, ``text``, ``timestamp``,
    ``namespace``, ``dominated_by``, ``detector``, ``score``); empty without a ``detector``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: TemporalMemory
    k: Annotated[int, Field(strict=True, gt=0)] = 4
    namespace: str = DEFAULT_NAMESPACE
    valid_at: AwareDatetime | None = None
    known_at: AwareDatetime | None = None
    detector: ConflictDetector | None = None
    include_history: bool = False
    use_recency_buffer: bool = False
    expand: Annotated[int, Field(strict=True, ge=0)] = 0
    where: SkipValidation[Filter | Mapping[str, Any] | None] = None

    @field_validator("where", mode="before")
    @classmethod
    def _filter(cls, value: Any) -> Filter | None:
        return as_filter(value)  # checked now; InvalidInputError names what is wrong

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        namespace: str | None = None,
        detector: ConflictDetector | None = None,
        include_history: bool | None = None,
        use_recency_buffer: bool | None = None,
        expand: int | None = None,
        where: Filter | Mapping[str, Any] | None = None,
    ) -> list[Document]:
        options = self._options(
            k=k, valid_at=valid_at, known_at=known_at, namespace=namespace, detector=detector,
            include_history=include_history, use_recency_buffer=use_recency_buffer, expand=expand,
            where=where,
        )  # fmt: skip
        return [hit_document(hit) for hit in self.memory.search(query, **options)]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        namespace: str | None = None,
        detector: ConflictDetector | None = None,
        include_history: bool | None = None,
        use_recency_buffer: bool | None = None,
        expand: int | None = None,
        where: Filter | Mapping[str, Any] | None = None,
    ) -> list[Document]:
        options = self._options(
            k=k, valid_at=valid_at, known_at=known_at, namespace=namespace, detector=detector,
            include_history=include_history, use_recency_buffer=use_recency_buffer, expand=expand,
            where=where,
        )  # fmt: skip
        return [hit_document(hit) for hit in await self.memory.asearch(query, **options)]

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
        (an LLM extractor). Bad input stores nothing.
        """
        texts, metadatas = _unpack(documents)
        added = self.memory.add_many(
            texts,
            metadatas=metadatas,
            namespace=self.namespace if namespace is None else namespace,
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
            namespace=self.namespace if namespace is None else namespace,
            valid_from=valid_from,
        )
        return [fact_id for item in added for fact_id in item.fact_ids]

    def _options(self, **overrides: Any) -> dict[str, Any]:
        """The keyword arguments of ``TemporalMemory.search``: the call's, else the fields."""
        return {
            name: getattr(self, name) if value is None else value
            for name, value in overrides.items()
        }


def hit_document(hit: Hit) -> Document:
    """One search hit as a Document (see :class:`TemporalRetriever` for the metadata)."""
    fact = hit.fact
    metadata: dict[str, Any] = {
        **thaw_metadata(fact.metadata),
        "id": fact.id,
        "subject": fact.subject,
        "relation": fact.relation,
        "object": fact.object,
        "valid_from": iso(fact.valid_from),
        "valid_to": iso(fact.valid_to),
        "recorded_at": iso(fact.recorded_at),
        "status": str(fact.status),
        "score": hit.score,
        "namespace": fact.namespace,
        "from_buffer": hit.from_buffer,
        SHADOWS_KEY: [
            shadow_entry(s, id=s.candidate.id, dominated_by=s.dominated_by) for s in hit.shadows
        ],
    }
    return Document(page_content=fact.text, metadata=metadata, id=fact.id)


def _unpack(documents: Sequence[Document]) -> tuple[list[str], list[dict[str, Any]]]:
    texts, metadatas = [], []
    for index, document in enumerate(documents):
        if not isinstance(document, Document):
            raise InvalidInputError(
                f"documents[{index}]",
                f"is a {type(document).__name__}",
                "pass langchain_core.documents.Document objects",
            )
        texts.append(document.page_content)
        metadatas.append(dict(document.metadata))
    return texts, metadatas
