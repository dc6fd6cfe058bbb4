"""Nodes in, facts out: what :class:`~llamaindex_temporal.TemporalVectorStore` writes and returns.

A node is written as its text (``MetadataMode.NONE``) and its metadata, plus two bookkeeping
fields: ``node_id`` (the node's id) and ``ref_doc_id`` (its source document's id; a node
without a source is its own document). A fact comes back as a ``TextNode`` whose id is that
node id (the fact id for facts written without the store) and whose metadata holds the fact's
metadata and, winning on a clash, the fields of :data:`FACT_FIELDS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)

from shared_core.dominance import Shadow
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, freeze_metadata, thaw_metadata
from shared_core.memory import Hit

NODE_ID = "node_id"
REF_DOC_ID = "ref_doc_id"
FACT_ID = "fact_id"
SHADOWS = "shadows"
#: What a returned node's metadata holds besides the fact's own metadata.
FACT_FIELDS = (
    FACT_ID,
    NODE_ID,
    REF_DOC_ID,
    "subject",
    "relation",
    "object",
    "valid_from",
    "valid_to",
    "recorded_at",
    "status",
    "namespace",
)
#: Shown to the LLM and the embedder besides the text: when the fact was true.
_TIME_FIELDS = ("valid_from", "valid_to")
_ITEM = re.compile(r"^items\[(\d+)\]")


def node_items(nodes: Sequence[BaseNode]) -> tuple[list[str], list[dict[str, Any]]]:
    """The texts and metadatas to give ``TemporalMemory.add_many`` for ``nodes``."""
    texts, metadatas = [], []
    for index, node in enumerate(nodes):
        field = node_field(index, node)
        if not isinstance(node, BaseNode):
            raise InvalidInputError(
                f"nodes[{index}]", f"is a {type(node).__name__}", "pass LlamaIndex nodes"
            )
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        if not text.strip():
            raise InvalidInputError(field, "has no text", "store text nodes with content")
        metadata = dict(node.metadata)
        freeze_metadata(metadata, f"{field}.metadata")  # names the node on bad metadata
        source = node.source_node
        metadata[NODE_ID] = node.node_id
        metadata[REF_DOC_ID] = source.node_id if source is not None else node.node_id
        texts.append(text)
        metadatas.append(metadata)
    return texts, metadatas


def node_field(index: int, node: object) -> str:
    """How errors name a node: its position and id."""
    node_id = getattr(node, "node_id", None)
    return f"nodes[{index}]" + (f" (id {node_id!r})" if isinstance(node_id, str) else "")


def name_the_node(error: InvalidInputError, nodes: Sequence[BaseNode]) -> InvalidInputError:
    """The core names a bad item ``items[i]``; the caller knows it as a node."""
    found = _ITEM.match(error.field)
    if found is None or int(found[1]) >= len(nodes):
        return error
    index = int(found[1])
    renamed = node_field(index, nodes[index]) + error.field[found.end() :]
    return type(error)(renamed, error.problem, error.fix)


def node_id_of(fact: Fact) -> str:
    """The id of the node that wrote ``fact``, else the fact id."""
    node_id = fact.metadata.get(NODE_ID)
    return node_id if isinstance(node_id, str) and node_id else fact.id


def fact_node(fact: Fact, shadows: Sequence[Mapping[str, Any]] = ()) -> TextNode:
    """A stored fact as a ``TextNode`` (see the module docstring for its id and metadata)."""
    node_id = node_id_of(fact)
    ref_doc_id = fact.metadata.get(REF_DOC_ID)
    metadata: dict[str, Any] = thaw_metadata(fact.metadata)
    metadata.update(
        {
            FACT_ID: fact.id,
            NODE_ID: node_id,
            REF_DOC_ID: ref_doc_id if isinstance(ref_doc_id, str) else None,
            "subject": fact.subject,
            "relation": fact.relation,
            "object": fact.object,
            "valid_from": iso(fact.valid_from),
            "valid_to": iso(fact.valid_to),
            "recorded_at": iso(fact.recorded_at),
            "status": str(fact.status),
            "namespace": fact.namespace,
        }
    )
    if shadows:
        metadata[SHADOWS] = list(shadows)
    relationships = {}
    if isinstance(ref_doc_id, str) and ref_doc_id != node_id:
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=ref_doc_id)
    hidden = hidden_keys(metadata)
    return TextNode(
        id_=node_id,
        text=fact.text,
        metadata=metadata,
        relationships=relationships,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )


def hidden_keys(metadata: Mapping[str, Any]) -> list[str]:
    """Bookkeeping fields kept out of what the LLM and embedders read (open ends too)."""
    return [
        key
        for key in (*FACT_FIELDS, SHADOWS)
        if key in metadata and (key not in _TIME_FIELDS or metadata[key] is None)
    ]


def shadow_entry(shadow: Shadow, *, node_id: str, dominated_by: str) -> dict[str, Any]:
    """One candidate Phi_T removed, as a JSON-ready dict."""
    candidate = shadow.candidate
    return {
        "node_id": node_id,
        "text": candidate.text,
        "timestamp": iso(candidate.timestamp),
        "namespace": candidate.namespace,
        "dominated_by": dominated_by,
        "detector": shadow.detector,
        "score": shadow.score,
    }


def hit_node(hit: Hit) -> TextNode:
    """A search hit as a ``TextNode``; its shadows (if Phi_T ran) name nodes, not facts."""
    node_ids = {hit.fact.id: node_id_of(hit.fact)}
    for shadow in hit.shadows:
        recorded = shadow.candidate.metadata.get(NODE_ID)
        node_ids[shadow.candidate.id] = (
            recorded if isinstance(recorded, str) else shadow.candidate.id
        )
    entries = [
        {
            **shadow_entry(
                shadow,
                node_id=node_ids[shadow.candidate.id],
                dominated_by=node_ids.get(shadow.dominated_by, shadow.dominated_by),
            ),
            FACT_ID: shadow.candidate.id,
        }
        for shadow in hit.shadows
    ]
    return fact_node(hit.fact, entries)


def iso(value: datetime | None) -> str | None:
    """An aware datetime as ISO-8601; ``None`` (an open end) stays ``None``."""
    return None if value is None else value.isoformat()
