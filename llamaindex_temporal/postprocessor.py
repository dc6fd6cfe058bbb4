"""TemporalNodePostprocessor: Phi_T (GC-Mem) over any LlamaIndex retriever's nodes."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from llamaindex_temporal.nodes import node_field
from shared_core.adapter_toolkit import (
    DEFAULT_TIMESTAMP_FIELD,
    SHADOWS_FIELD,
    Survivor,
    candidate_from_metadata,
    metadata_fields,
    survivors,
)
from shared_core.detectors.key import KeyConflictDetector
from shared_core.errors import InvalidInputError
from shared_core.phi_t import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    atemporal_dominance,
    temporal_dominance,
)


class TemporalNodePostprocessor(BaseNodePostprocessor):
    """Drops every node that a strictly newer retrieved node contradicts (Phi_T), keeping the
    survivors in rank order. Works on any retriever's ``NodeWithScore`` list.

    Fields (keyword only):

    - ``detector``: kappa, any :class:`~shared_core.ConflictDetector` (default
      ``KeyConflictDetector()``: same subject and relation, another object).
    - ``timestamp_key`` (default ``"valid_from"``): the metadata field holding tau, an aware
      datetime, an ISO-8601 string with a UTC offset or epoch seconds. A node without it is
      undated: never removed and never removing another. A naive or unreadable time is an
      :class:`~shared_core.errors.InvalidInputError` naming the node.
    - ``subject_key`` / ``relation_key`` / ``object_key``: the key fields (a node with all
      three is keyed; with fewer it is prose); ``namespace_key`` (``None``: one namespace):
      nodes of different namespaces are never compared.
    - ``shadows_key`` (default ``"shadows"``): each removed node is reported in the metadata of
      the surviving node its dominator chain ends at, as a dict (``id`` (the node id),
      ``fact_id``, ``position``, ``text``, ``timestamp``, ``namespace``, ``dominated_by``,
      ``detector``, ``score``), after any shadows an earlier stage reported; the shadows a
      removed node carried move to its survivor. Such survivors are copies (inputs are never
      mutated) whose shadows are hidden from the LLM and embedders.

    These rules are the core's (:mod:`shared_core.adapter_toolkit`), shared with LangChain's
    ``TemporalDocumentCompressor``; the metadata written by
    :class:`~llamaindex_temporal.TemporalVectorStore` matches the defaults.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detector: ConflictDetector = Field(default_factory=KeyConflictDetector, exclude=True)
    timestamp_key: str = DEFAULT_TIMESTAMP_FIELD
    subject_key: str = "subject"
    relation_key: str = "relation"
    object_key: str = "object"
    namespace_key: str | None = "namespace"
    shadows_key: str = SHADOWS_FIELD

    @classmethod
    def class_name(cls) -> str:
        return "TemporalNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        candidates = [self._candidate(i, item) for i, item in enumerate(nodes)]
        query = query_bundle.query_str if query_bundle is not None else None
        result = temporal_dominance(candidates, self.detector, query=query)
        return self._survivors(nodes, result)

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        """The same work; a detector's async form (the LLM judge's) is awaited, any other
        model-backed detector runs in a worker thread."""
        candidates = [self._candidate(i, item) for i, item in enumerate(nodes)]
        query = query_bundle.query_str if query_bundle is not None else None
        result = await atemporal_dominance(candidates, self.detector, query=query)
        return self._survivors(nodes, result)

    def _candidate(self, index: int, item: NodeWithScore) -> Candidate:
        if not isinstance(item, NodeWithScore):
            raise InvalidInputError(
                f"nodes[{index}]", f"is a {type(item).__name__}", "pass NodeWithScore objects"
            )
        return candidate_from_metadata(
            position=index,
            text=item.node.get_content(metadata_mode=MetadataMode.NONE),
            metadata=item.node.metadata,
            fields=metadata_fields(self),
            label=node_field(index, item.node),
            score=item.score,
        )

    def _survivors(
        self, nodes: Sequence[NodeWithScore], result: DominanceResult
    ) -> list[NodeWithScore]:
        kept = survivors(
            result,
            ids=[item.node.node_id for item in nodes],
            metadatas=[item.node.metadata for item in nodes],
            shadows_field=self.shadows_key,
        )
        return [
            self._reporting(nodes[s.position], s) if s.added else nodes[s.position] for s in kept
        ]

    def _reporting(self, item: NodeWithScore, survivor: Survivor) -> NodeWithScore:
        """A copy of ``item`` whose metadata lists the shadows it caused."""
        metadata = {**item.node.metadata, self.shadows_key: list(survivor.shadows)}
        hidden = {self.shadows_key}  # the stale texts must not reach the LLM this way
        node = item.node.model_copy(
            update={
                "metadata": metadata,
                "excluded_llm_metadata_keys": _with(item.node.excluded_llm_metadata_keys, hidden),
                "excluded_embed_metadata_keys": _with(
                    item.node.excluded_embed_metadata_keys, hidden
                ),
            }
        )
        return NodeWithScore(node=node, score=item.score)


def _with(keys: Sequence[str], extra: set[str]) -> list[str]:
    return [*keys, *sorted(extra - set(keys))]
