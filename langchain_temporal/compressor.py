"""TemporalDocumentCompressor: GC-Mem's Phi_T over the Documents of any LangChain retriever."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict, Field

from langchain_temporal._shadows import (
    SHADOWS_KEY,
    prior_shadows,
    shadow_entry,
)
from shared_core.detectors.key import KeyConflictDetector
from shared_core.dominance import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    NeverConflicts,
    shadows_by_survivor,
    temporal_dominance,
)
from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import check_object, to_datetime
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    FactKey,
    ObjectValue,
    check_namespace,
    key_relation,
    key_subject,
)


class TemporalDocumentCompressor(BaseDocumentCompressor):
    """Drops every Document that a strictly newer retrieved Document contradicts (Phi_T).

    For users who keep their vector store: use it as the ``base_compressor`` of a
    ``ContextualCompressionRetriever`` or inside a ``DocumentCompressorPipeline``.

    Options (keyword only):

    - ``timestamp_key`` (default ``"timestamp"``): the metadata field holding tau, an aware
      datetime, an ISO-8601 string with a UTC offset, or epoch seconds (int or float).
      Anything else (a naive datetime, a string without offset, another type) raises
      :class:`~shared_core.errors.InvalidInputError` naming the document and the field. A
      Document without it is undated: never removed and never removing another.
    - ``subject_key`` / ``relation_key`` / ``object_key`` (``"subject"``, ``"relation"``,
      ``"object"``): a Document with all three is keyed (same subject and relation, another
      object, newer: a conflict for the key detector); with fewer it is prose.
    - ``namespace_key`` (``"namespace"``): Documents of different namespaces are never
      compared; a Document without it is in the default namespace.
    - ``detector`` (default ``KeyConflictDetector()``): kappa; ``NLIConflictDetector`` or
      ``LLMConflictDetector`` (see :func:`~langchain_temporal.text_llm`) judge prose.

    Returned Documents are copies in their input (rank) order; inputs are never changed. Each
    survivor's ``metadata["shadows"]`` lists what it caused to be removed (one dict per
    removed Document: ``id`` (the Document's id, may be ``None``), ``position`` (its index in
    the input), ``text``, ``timestamp``, ``namespace``, ``dominated_by`` (the id of the
    Document that outdated it), ``detector``, ``score``), after any shadows an earlier stage
    had reported there. The async path runs model-backed detectors in a worker thread.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    timestamp_key: str = "timestamp"
    subject_key: str = "subject"
    relation_key: str = "relation"
    object_key: str = "object"
    namespace_key: str = "namespace"
    detector: ConflictDetector = Field(default_factory=KeyConflictDetector)

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        docs = list(documents)
        candidates = self._candidates(docs)
        result = temporal_dominance(candidates, self.detector, query=query)
        return _survivors(docs, result)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        docs = list(documents)
        candidates = self._candidates(docs)
        if isinstance(self.detector, KeyConflictDetector | NeverConflicts):
            result = temporal_dominance(candidates, self.detector, query=query)  # pure, fast
        else:  # a model or an LLM call: keep the event loop free
            result = await asyncio.to_thread(
                temporal_dominance, candidates, self.detector, query=query
            )
        return _survivors(docs, result)

    def _candidates(self, documents: Sequence[Document]) -> list[Candidate]:
        return [self._candidate(index, document) for index, document in enumerate(documents)]

    def _candidate(self, index: int, document: Document) -> Candidate:
        """One Document as Phi_T sees it; its position is its id (Document ids may repeat)."""
        if not isinstance(document, Document):
            raise InvalidInputError(
                f"documents[{index}]",
                f"is a {type(document).__name__}",
                "pass langchain_core.documents.Document objects",
            )
        where = _where(index, document)
        metadata = document.metadata
        timestamp = to_datetime(metadata.get(self.timestamp_key), where(self.timestamp_key))
        namespace = metadata.get(self.namespace_key)
        if namespace is None:
            namespace = DEFAULT_NAMESPACE
        namespace = check_namespace(namespace, where(self.namespace_key))
        key, value = self._key(metadata, namespace, where)
        return Candidate(
            id=str(index),
            text=document.page_content,
            timestamp=timestamp,
            namespace=namespace,
            key=key,
            object=value,
        )

    def _key(
        self, metadata: Mapping[str, Any], namespace: str, where: Callable[[str], str]
    ) -> tuple[FactKey | None, ObjectValue | None]:
        subject = metadata.get(self.subject_key)
        relation = metadata.get(self.relation_key)
        value = metadata.get(self.object_key)
        if subject is None or relation is None or value is None:
            return None, None
        key = FactKey(
            namespace,
            key_subject(subject, where(self.subject_key)),
            key_relation(relation, where(self.relation_key)),
        )
        return key, check_object(value, where(self.object_key))


def _where(index: int, document: Document) -> Callable[[str], str]:
    """A function naming one metadata field of this document in error messages."""
    label = f"documents[{index}]" if document.id is None else f"documents[{index}] ({document.id})"

    def field(key: str) -> str:
        return f"{label}.metadata[{key!r}]"

    return field


def _survivors(documents: list[Document], result: DominanceResult) -> list[Document]:
    """Copies of the kept Documents, each with the shadows it caused in ``metadata``."""
    groups = shadows_by_survivor(result)
    out = []
    for candidate in result.kept:
        document = documents[int(candidate.id)]
        shadows = prior_shadows(document.metadata)
        for shadow in groups.get(candidate.id, ()):
            position = int(shadow.candidate.id)
            dominator = documents[int(shadow.dominated_by)].id
            entry = shadow_entry(shadow, id=documents[position].id, dominated_by=dominator)
            shadows.append({**entry, "position": position})
            shadows.extend(prior_shadows(documents[position].metadata))  # carried over
        metadata = {**document.metadata, SHADOWS_KEY: shadows}
        out.append(document.model_copy(update={"metadata": metadata}))
    return out
