"""Nodes in, facts out: what :class:`~llamaindex_temporal.TemporalVectorStore` writes and returns.

A node is written as its text (``MetadataMode.NONE``) and its metadata, plus two bookkeeping
fields: ``node_id`` (the node's id) and ``ref_doc_id`` (its source document's id; a node
without a source is its own document). A fact comes back as a ``TextNode`` whose id is that
node id (the fact id for facts written without the store) and whose metadata holds the fact's
metadata and, winning on a clash, the fields of :data:`NODE_FIELDS` (the core's
:mod:`shared_core.adapter_toolkit` decides them, as it does for LangChain's Documents).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)

from shared_core.adapter_toolkit import FACT_FIELDS, HIT_FIELDS, fact_metadata, hit_metadata
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, freeze_metadata
from shared_core.memory import Hit

NODE_ID = "node_id"
REF_DOC_ID = "ref_doc_id"
NODE_FIELDS = (*FACT_FIELDS, NODE_ID, REF_DOC_ID)
"""What a returned node's metadata holds besides the fact's own metadata (and, for a search
hit, :data:`~shared_core.adapter_toolkit.HIT_FIELDS`)."""
#: Shown to the LLM and the embedder besides the text: when the fact was true.
_TIME_FIELDS = ("valid_from", "valid_to")
_ITEM = re.compile(r"^(items|metadatas)\[(\d+)\]")


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


def name_the_node(
    error: InvalidInputError, nodes: Sequence[BaseNode], positions: Sequence[int] | None = None
) -> InvalidInputError:
    """The core names a bad item ``items[i]`` or its metadata ``metadatas[i]`` (of the texts
    written, ``positions[i]`` among the caller's ``nodes``; default all of them, in order);
    the caller knows it as a node."""
    found = _ITEM.match(error.field)
    at = range(len(nodes)) if positions is None else positions
    if found is None or int(found[2]) >= len(at):
        return error
    index = at[int(found[2])]
    part = ".metadata" if found[1] == "metadatas" else ""
    renamed = node_field(index, nodes[index]) + part + error.field[found.end() :]
    return type(error)(renamed, error.problem, error.fix)


def node_id_of(fact_id: str, metadata: Mapping[str, Any]) -> str:
    """The id of the node that wrote a fact (its metadata), else the fact id."""
    node_id = metadata.get(NODE_ID)
    return node_id if isinstance(node_id, str) and node_id else fact_id


def fact_node(fact: Fact) -> TextNode:
    """A stored fact as a ``TextNode`` (see the module docstring for its id and metadata)."""
    return _node(fact, fact_metadata(fact))


def hit_node(hit: Hit) -> TextNode:
    """A search hit as a ``TextNode``; its shadows (if Phi_T ran) name nodes, not facts."""
    return _node(hit.fact, hit_metadata(hit, id_of=node_id_of))


def _node(fact: Fact, metadata: dict[str, Any]) -> TextNode:
    node_id = node_id_of(fact.id, fact.metadata)
    ref_doc_id = fact.metadata.get(REF_DOC_ID)
    metadata[NODE_ID] = node_id
    metadata[REF_DOC_ID] = ref_doc_id if isinstance(ref_doc_id, str) else None
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
        for key in (*NODE_FIELDS, *HIT_FIELDS)
        if key in metadata and (key not in _TIME_FIELDS or metadata[key] is None)
    ]
