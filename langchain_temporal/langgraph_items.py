"""Stored facts as LangGraph items, and the checks of what TemporalStore is given.

Imported by :mod:`langchain_temporal.langgraph_store` once langgraph-checkpoint is known to be
there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    GetOp,
    IndexConfig,
    Item,
    SearchItem,
    tokenize_path,
    validate_op_namespace,
)

from langchain_temporal.bridges import CoreEmbeddings, LangChainEmbedder
from langchain_temporal.langgraph_codec import (
    ITEM_RELATION,
    TextPaths,
    corrected_value,
    decode_key,
    decode_namespace,
    text_digest,
)
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, freeze_metadata, thaw_metadata


@dataclass(frozen=True, slots=True)
class ItemVersion:
    """One version of a stored item: ``value`` from ``valid_from`` (the put that wrote it) until
    ``valid_to`` (the put that replaced it, or the delete; ``None``: current). ``status`` is
    ``"current"``, ``"superseded"`` (a later put), ``"retracted"`` (a delete) or, for a record
    the ledger no longer believes, ``"retired"``; ``fact_id`` names it in the memory."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    valid_from: datetime
    valid_to: datetime | None
    status: str
    fact_id: str


class Found:
    """A stored item's fact, read once (value, times, score)."""

    __slots__ = ("created_at", "fact", "indexed", "order", "score", "updated_at", "value")

    def __init__(self, fact: Fact, score: float | None) -> None:
        self.fact = fact
        self.score = score
        metadata = fact.metadata
        self.value: dict[str, Any] = _value(fact)
        self.indexed = bool(metadata.get("indexed", False))
        self.updated_at = _valid_from(fact)
        created = metadata.get("created_at")
        self.created_at = (
            datetime.fromisoformat(created) if isinstance(created, str) else self.updated_at
        )
        self.order = (fact.namespace, fact.subject or "")

    @property
    def score_value(self) -> float:
        """The score for ranking (an item without one ranks last)."""
        return self.score if self.score is not None else float("-inf")

    @property
    def search_item(self) -> SearchItem:
        """The item as LangGraph's ``SearchItem`` (``score`` ``None`` unless ranked)."""
        assert self.fact.subject is not None
        labels = decode_namespace(self.fact.namespace)
        assert labels is not None
        return SearchItem(
            namespace=labels,
            key=decode_key(self.fact.subject),
            value=self.value,
            created_at=self.created_at,
            updated_at=self.updated_at,
            score=self.score,
        )


def as_item(fact: Fact) -> Item:
    """A stored item's fact as a LangGraph ``Item``."""
    found = Found(fact, None).search_item
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def as_version(fact: Fact) -> ItemVersion:
    """One version of a stored item's history."""
    item = as_item(fact)
    return ItemVersion(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        valid_from=_valid_from(fact),
        valid_to=fact.valid_to,
        status=str(fact.status),
        fact_id=fact.id,
    )


def is_item(fact: Fact) -> bool:
    """Whether a fact is one the store wrote (a namespace may also hold others)."""
    return (
        fact.relation == ITEM_RELATION
        and fact.subject is not None
        and "value" in fact.metadata
        and decode_namespace(fact.namespace) is not None
    )


def _value(fact: Fact) -> dict[str, Any]:
    """A stored item's value: as put, unless the fact's text was corrected through the memory
    (``TemporalMemory.correct(fact_id, text=...)``) into one that tells the new value."""
    metadata = fact.metadata
    value: dict[str, Any] = thaw_metadata(metadata["value"])
    digest = metadata.get("text_digest")
    if not isinstance(digest, str) or digest == text_digest(fact.text):
        return value
    fields = metadata.get("fields")
    paths = [str(path) for path in fields] if isinstance(fields, tuple | list) else None
    corrected = corrected_value(value, fact.text, paths, tokenize_path)
    return value if corrected is None else corrected


def _valid_from(fact: Fact) -> datetime:
    when = fact.valid_from if fact.valid_from is not None else fact.recorded_at
    assert when is not None  # a stored fact has both
    return when


def check_index(index: IndexConfig | None, embedder: Embedder) -> TextPaths | None:
    """The text paths of an index config (``None``: no index), after checking that its
    ``embed`` and ``dims``, when given, are the memory's embedder's."""
    if index is None:
        return None
    if not isinstance(index, dict):
        raise InvalidInputError("index", f"is a {type(index).__name__}", "pass an IndexConfig dict")
    dims = index.get("dims")
    if dims is not None and dims != embedder.dimension:
        raise InvalidInputError(
            "index.dims",
            f"is {dims} but the memory's embedder {embedder.name!r} has {embedder.dimension}",
            "leave dims out (the memory's embedder embeds) or give its dimension",
        )
    embed = index.get("embed")
    if embed is not None and not _is_model_of(embed, embedder):
        raise InvalidInputError(
            "index.embed",
            f"{embed!r} is not the memory's embedder {embedder.name!r}",
            "leave embed out, or build the memory with MemoryConfig(embedder="
            "LangChainEmbedder(embeddings, name=...)) and pass the same embeddings",
        )
    fields = index.get("fields") or ["$"]
    return [(path, path if path == "$" else tokenize_path(path)) for path in fields]


def _is_model_of(embed: object, embedder: Embedder) -> bool:
    if isinstance(embed, CoreEmbeddings):
        return embed.embedder is embedder
    wrapped = embedder.embeddings if isinstance(embedder, LangChainEmbedder) else None
    return wrapped is not None and (wrapped is embed or bool(wrapped == embed))


def checked_value(value: object) -> dict[str, Any]:
    """A put's value as plain JSON (a copy), or InvalidInputError naming what is not JSON."""
    if not isinstance(value, dict):
        raise InvalidInputError(
            "value", f"is a {type(value).__name__}", "pass a dict (a JSON object)"
        )
    checked: dict[str, Any] = thaw_metadata(freeze_metadata(value, "value"))
    return checked


def check_labels(namespace: tuple[str, ...]) -> None:
    """LangGraph's own check of namespace labels (InvalidNamespaceError)."""
    validate_op_namespace(GetOp(tuple(namespace), ""))


def check_page(limit: int, offset: int) -> None:
    """``limit`` and ``offset`` are ints >= 0."""
    for name, number in (("limit", limit), ("offset", offset)):
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise InvalidInputError(name, f"{number!r} is out of range", "pass an int >= 0")
