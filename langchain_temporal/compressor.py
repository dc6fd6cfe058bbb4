"""TemporalDocumentCompressor: GC-Mem's Phi_T over the Documents of any LangChain retriever."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict, Field

from langchain_temporal.documents import checked_documents, document_label
from shared_core.adapter_toolkit import (
    DEFAULT_TIMESTAMP_FIELD,
    SHADOWS_FIELD,
    candidate_from_metadata,
    metadata_fields,
    survivors,
)
from shared_core.detectors.key import KeyConflictDetector
from shared_core.phi_t import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    atemporal_dominance,
    temporal_dominance,
)


class TemporalDocumentCompressor(BaseDocumentCompressor):
    """Drops every Document that a strictly newer retrieved Document contradicts (Phi_T).

    For users who keep their vector store: use it as the ``base_compressor`` of a
    ``ContextualCompressionRetriever`` or inside a ``DocumentCompressorPipeline``.

    Options (keyword only):

    - ``timestamp_key`` (default ``"valid_from"``, what :class:`TemporalRetriever` writes): the
      metadata field holding tau, an aware datetime, an ISO-8601 string with a UTC offset, or
      epoch seconds (int or float). Anything else (a naive datetime, a string without offset,
      another type) raises :class:`~shared_core.errors.InvalidInputError` naming the document
      and the field. A Document without it is undated: never removed and never removing
      another.
    - ``subject_key`` / ``relation_key`` / ``object_key`` (``"subject"``, ``"relation"``,
      ``"object"``): a Document with all three is keyed (same subject and relation, another
      object, newer: a conflict for the key detector); with fewer it is prose.
    - ``namespace_key`` (``"namespace"``; ``None``: one namespace): Documents of different
      namespaces are never compared; a Document without it is in the default namespace.
    - ``detector`` (default ``KeyConflictDetector()``): kappa; ``NLIConflictDetector`` or
      ``LLMConflictDetector`` (see :func:`~langchain_temporal.text_llm`) judge prose.

    These rules are the core's (:mod:`shared_core.adapter_toolkit`), shared with LlamaIndex's
    ``TemporalNodePostprocessor``. Returned Documents are copies in their input (rank) order;
    inputs are never changed. Each survivor's ``metadata["shadows"]`` lists what it caused to
    be removed (one dict per removed Document: ``id`` (the Document's id, may be ``None``),
    ``fact_id``, ``position`` (its index in the input), ``text``, ``timestamp``, ``namespace``,
    ``dominated_by`` (the id of the Document that outdated it), ``detector``, ``score``), after
    any shadows an earlier stage had reported there. The async path awaits a detector's async
    form (``LLMConflictDetector`` over an async LLM, e.g. ``text_llm(chat_model)``) and runs
    other model-backed detectors in a worker thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    timestamp_key: str = DEFAULT_TIMESTAMP_FIELD
    subject_key: str = "subject"
    relation_key: str = "relation"
    object_key: str = "object"
    namespace_key: str | None = "namespace"
    detector: ConflictDetector = Field(default_factory=KeyConflictDetector)

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        docs = checked_documents(documents)
        result = temporal_dominance(self._candidates(docs), self.detector, query=query)
        return _survivors(docs, result)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        docs = checked_documents(documents)
        result = await atemporal_dominance(self._candidates(docs), self.detector, query=query)
        return _survivors(docs, result)

    def _candidates(self, documents: Sequence[Document]) -> list[Candidate]:
        fields = metadata_fields(self)
        return [
            candidate_from_metadata(
                position=index,
                text=document.page_content,
                metadata=document.metadata,
                fields=fields,
                label=document_label(index, document),
            )
            for index, document in enumerate(documents)
        ]


def _survivors(documents: list[Document], result: DominanceResult) -> list[Document]:
    """Copies of the kept Documents, each with the shadows it caused in ``metadata``."""
    kept = survivors(
        result,
        ids=[document.id for document in documents],
        metadatas=[document.metadata for document in documents],
    )
    return [
        documents[survivor.position].model_copy(
            update={
                "metadata": {
                    **documents[survivor.position].metadata,
                    SHADOWS_FIELD: list(survivor.shadows),
                }
            }
        )
        for survivor in kept
    ]
