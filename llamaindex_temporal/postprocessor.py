"""TemporalNodePostprocessor: Phi_T (GC-Mem) over any LlamaIndex retriever's nodes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from llamaindex_temporal.nodes import node_field, shadow_entry
from shared_core.detectors.key import KeyConflictDetector
from shared_core.dominance import (
    Candidate,
    ConflictDetector,
    DominanceResult,
    Shadow,
    shadows_by_survivor,
    temporal_dominance,
)
from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import check_object, to_datetime
from shared_core.facts import DEFAULT_NAMESPACE, FactKey, check_namespace, key_relation, key_subject


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
    - ``subject_key`` / ``relation_key`` / ``object_key``: the key fields (all three, or none
      for prose); ``namespace_key`` (``None``: one namespace): nodes of different namespaces
      are never compared.
    - ``shadows_key`` (default ``"shadows"``): each removed node is reported in the metadata of
      the surviving node its dominator chain ends at, as a dict (``node_id``, ``text``,
      ``timestamp``, ``namespace``, ``dominated_by``, ``detector``, ``score``), after any
      shadows an earlier stage reported. Such survivors are copies (inputs are never mutated)
      whose shadows are hidden from the LLM and embedders.

    The metadata written by :class:`~llamaindex_temporal.TemporalVectorStore` matches the
    defaults.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    detector: ConflictDetector = Field(default_factory=KeyConflictDetector, exclude=True)
    timestamp_key: str = "valid_from"
    subject_key: str = "subject"
    relation_key: str = "relation"
    object_key: str = "object"
    namespace_key: str | None = "namespace"
    shadows_key: str = "shadows"

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
        """The same work off the event loop (detectors are synchronous: models, LLM calls)."""
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)

    def _candidate(self, index: int, item: NodeWithScore) -> Candidate:
        if not isinstance(item, NodeWithScore):
            raise InvalidInputError(
                f"nodes[{index}]", f"is a {type(item).__name__}", "pass NodeWithScore objects"
            )
        node = item.node
        field = node_field(index, node)
        metadata = node.metadata
        namespace = DEFAULT_NAMESPACE
        if self.namespace_key is not None and metadata.get(self.namespace_key) is not None:
            namespace = check_namespace(
                metadata[self.namespace_key], f"{field}.metadata[{self.namespace_key!r}]"
            )
        key, obj = self._key(metadata, namespace, field)
        return Candidate(
            id=str(index),  # node ids need not be unique in a retrieved list
            text=node.get_content(metadata_mode=MetadataMode.NONE),
            timestamp=to_datetime(
                metadata.get(self.timestamp_key), f"{field}.metadata[{self.timestamp_key!r}]"
            ),
            namespace=namespace,
            key=key,
            object=obj,
            score=item.score,
        )

    def _key(
        self, metadata: Mapping[str, Any], namespace: str, field: str
    ) -> tuple[FactKey | None, Any]:
        names = (self.subject_key, self.relation_key, self.object_key)
        values = [metadata.get(name) for name in names]
        if all(value is None for value in values):
            return None, None
        for name, value in zip(names, values, strict=True):
            if value is None:
                raise InvalidInputError(
                    f"{field}.metadata[{name!r}]",
                    "is missing while other key fields are set",
                    f"give all of {', '.join(map(repr, names))} for a keyed node, or none",
                )
        subject = key_subject(values[0], f"{field}.metadata[{names[0]!r}]")
        relation = key_relation(values[1], f"{field}.metadata[{names[1]!r}]")
        obj = check_object(values[2], f"{field}.metadata[{names[2]!r}]")
        return FactKey(namespace, subject, relation), obj

    def _survivors(
        self, nodes: Sequence[NodeWithScore], result: DominanceResult
    ) -> list[NodeWithScore]:
        groups = shadows_by_survivor(result)
        out = []
        for candidate in result.kept:
            item = nodes[int(candidate.id)]
            shadows = groups.get(candidate.id)
            out.append(item if not shadows else self._reporting(item, shadows, nodes))
        return out

    def _reporting(
        self, item: NodeWithScore, shadows: Sequence[Shadow], nodes: Sequence[NodeWithScore]
    ) -> NodeWithScore:
        """A copy of ``item`` whose metadata lists the shadows it caused."""
        entries = [
            shadow_entry(
                shadow,
                node_id=nodes[int(shadow.candidate.id)].node.node_id,
                dominated_by=nodes[int(shadow.dominated_by)].node.node_id,
            )
            for shadow in shadows
        ]
        prior = item.node.metadata.get(self.shadows_key)
        metadata = {
            **item.node.metadata,
            self.shadows_key: [*(prior if isinstance(prior, list) else []), *entries],
        }
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
