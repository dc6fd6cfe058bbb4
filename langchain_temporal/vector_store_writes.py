"""What one ``TemporalVectorStore.add_documents`` call writes: ids, bookkeeping, replacements.

A Document is a statement of its own under its id: the given one (``ids=`` first, then
``Document.id``) or a new one. A stored Document with the same id and digest is unchanged and
not written again; one with the same id and another digest is replaced in the same
transaction (``TemporalMemory.add_many(replacing=...)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.documents import Document

from langchain_temporal.documents import (
    DOCUMENT_DIGEST,
    DOCUMENT_ID,
    checked_documents,
    document_id_of,
    written_metadata,
)
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, new_fact_id
from shared_core.filters import Filter, Op, any_of, where
from shared_core.memory import Added


@dataclass(frozen=True, slots=True)
class Writes:
    """What one ``add_documents`` call asks: the Documents, their ids, what to write."""

    documents: list[Document]
    ids: list[str]
    metadatas: list[dict[str, Any]]
    named: list[str]  # the ids the caller gave (those may already name stored Documents)
    namespace: str
    valid_from: datetime | None


def texts_as_documents(
    texts: Iterable[str], metadatas: list[dict[str, Any]] | None
) -> list[Document]:
    listed = list(texts)
    if metadatas is not None and len(metadatas) != len(listed):
        raise InvalidInputError(
            "metadatas",
            f"has {len(metadatas)} entries for {len(listed)} texts",
            "pass one metadata dict per text, or none",
        )
    for index, text in enumerate(listed):
        if not isinstance(text, str):
            raise InvalidInputError(f"texts[{index}]", f"is a {type(text).__name__}", "pass str")
    return [
        Document(page_content=text, metadata=metadatas[i] if metadatas else {})
        for i, text in enumerate(listed)
    ]


def given_ids(documents: list[Document], given: object) -> list[str | None]:
    """Each Document's id as the caller gave it (``ids=`` first, else ``Document.id``)."""
    if given is None:
        asked: list[object] = [document.id for document in documents]
    elif isinstance(given, str) or not isinstance(given, Sequence):
        raise InvalidInputError("ids", f"is a {type(given).__name__}", "pass a list of id strings")
    elif len(given) != len(documents):
        raise InvalidInputError(
            "ids", f"has {len(given)} ids for {len(documents)} documents", "pass one id each"
        )
    else:
        asked = list(given)
    out: list[str | None] = []
    for index, found in enumerate(asked):
        if found is not None and not isinstance(found, str):
            raise InvalidInputError(f"ids[{index}]", f"is {found!r}", "pass id strings (or None)")
        if found and found in out:
            raise InvalidInputError(
                f"ids[{index}]", f"repeats {found!r}", "give each Document of a call its own id"
            )
        out.append(found or None)
    return out


def id_list(ids: Sequence[str]) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise InvalidInputError("ids", f"is a {type(ids).__name__}", "pass a list of id strings")
    for index, found in enumerate(ids):
        if not isinstance(found, str) or not found:
            raise InvalidInputError(f"ids[{index}]", f"is {found!r}", "pass id strings")
    return list(dict.fromkeys(ids))


def named(ids: Sequence[str]) -> Filter:
    """The facts these Document ids name: written by the store, or by their fact ids."""
    return any_of(where(DOCUMENT_ID, Op.IN, list(ids)), where("fact_id", Op.IN, list(ids)))


def unchanged_and_replaced(writes: Writes, stored: Sequence[Fact]) -> tuple[list[int], list[str]]:
    """Which Documents to write (a stored Document with the same id and digest is unchanged)
    and the fact ids of the stored ones they replace."""
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


def add_options(
    writes: Writes, todo: list[int], replacing: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """``add_many``'s texts and options for the Documents to write."""
    return [writes.documents[i].page_content for i in todo], {
        "metadatas": [writes.metadatas[i] for i in todo],
        "namespace": writes.namespace,
        "valid_from": writes.valid_from,
        "replacing": replacing,
        "merge_prose": False,  # a Document is a statement of its own, whatever another says
    }


def stored_ids(writes: Writes, todo: list[int], added: list[Added]) -> list[str]:
    """Each Document's id: that of the Document whose fact now carries it (its own, unless
    it reinforced another's value)."""
    ids = list(writes.ids)
    for index, item in zip(todo, added, strict=True):
        fact = next((w.fact for w in item.writes if w.fact is not None), None)
        if fact is not None:
            ids[index] = document_id_of(fact.id, fact.metadata)
    return ids


def plan_writes(
    documents: Sequence[Document],
    given: object,
    *,
    namespace: str,
    valid_from: datetime | None,
) -> Writes:
    """What to write for ``documents``: ids (``given`` first, then ``Document.id``, else
    new), each Document's metadata with the bookkeeping fields."""
    docs = checked_documents(documents)
    asked = given_ids(docs, given)
    ids = [found if found is not None else new_fact_id() for found in asked]
    return Writes(
        documents=docs,
        ids=ids,
        metadatas=[written_metadata(i, d, ids[i], valid_from) for i, d in enumerate(docs)],
        named=[found for found in asked if found is not None],
        namespace=namespace,
        valid_from=valid_from,
    )
