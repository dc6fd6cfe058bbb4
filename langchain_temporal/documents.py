"""Documents in and out: what the LangChain classes accept and what they return.

:class:`~langchain_temporal.TemporalRetriever` returns facts with the shared fields of
:mod:`shared_core.adapter_toolkit`. :class:`~langchain_temporal.TemporalVectorStore` returns
Documents as they were written: a fact the store wrote carries two bookkeeping fields in its
metadata, :data:`DOCUMENT_ID` (the Document's id) and :data:`DOCUMENT_DIGEST` (what it said, to
recognise a Document written again unchanged), which are removed on the way out. A fact
written by other means is known by its fact id.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.documents import Document

from shared_core.adapter_toolkit import hit_metadata, iso
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact, thaw_metadata
from shared_core.memory import Hit

DOCUMENT_ID = "langchain_id"
"""Where a fact written by the vector store keeps its Document's id."""
DOCUMENT_DIGEST = "langchain_digest"
"""Where it keeps the digest of the Document as written (text, metadata, valid_from)."""
BOOKKEEPING = (DOCUMENT_ID, DOCUMENT_DIGEST)
_ITEM = re.compile(r"^(items|metadatas)\[(\d+)\]")


def checked_documents(documents: Sequence[object]) -> list[Document]:
    """``documents`` as a list, or InvalidInputError naming the first item that is not one."""
    for index, document in enumerate(documents):
        if not isinstance(document, Document):
            raise InvalidInputError(
                f"documents[{index}]",
                f"is a {type(document).__name__}",
                "pass langchain_core.documents.Document objects",
            )
    return list(documents)  # type: ignore[arg-type]  # each one was checked above


def document_label(index: int, document: Document) -> str:
    """How errors name a Document: its position and id."""
    return f"documents[{index}]" if document.id is None else f"documents[{index}] ({document.id})"


def document_id_of(fact_id: str, metadata: Mapping[str, Any]) -> str:
    """The id of the Document a fact was written as (its metadata), else the fact id."""
    found = metadata.get(DOCUMENT_ID)
    return found if isinstance(found, str) and found else fact_id


def hit_document(hit: Hit) -> Document:
    """One search hit as a Document (see :class:`~langchain_temporal.TemporalRetriever` for the
    metadata); its id, and those its shadows name, are Document ids (:func:`document_id_of`)."""
    metadata = hit_metadata(hit, id_of=document_id_of)
    return Document(
        page_content=hit.fact.text,
        metadata=metadata,
        id=document_id_of(hit.fact.id, hit.fact.metadata),
    )


def stored_document(fact: Fact) -> Document:
    """A fact as the Document it was written as: its id, its text and the metadata it was
    given. A keyed fact's key and valid time are in its metadata (``subject``, ``relation``,
    ``object``, ``valid_from`` and, once it ended, ``valid_to``; ISO-8601 strings)."""
    metadata: dict[str, Any] = {
        name: value
        for name, value in thaw_metadata(fact.metadata).items()
        if name not in BOOKKEEPING
    }
    if fact.key is not None:
        metadata.update(
            subject=fact.subject,
            relation=fact.relation,
            object=fact.object,
            valid_from=iso(fact.valid_from),
        )
        if fact.valid_to is not None:
            metadata["valid_to"] = iso(fact.valid_to)
    return Document(
        page_content=fact.text, metadata=metadata, id=document_id_of(fact.id, fact.metadata)
    )


def written_metadata(
    index: int,
    document: Document,
    document_id: str,
    valid_from: datetime | None,
) -> dict[str, Any]:
    """The metadata the store writes for a Document: its own and the bookkeeping fields."""
    for name in BOOKKEEPING:
        if name in document.metadata:
            raise InvalidInputError(
                f"{document_label(index, document)}.metadata[{name!r}]",
                "is the vector store's bookkeeping field",
                "rename that metadata field",
            )
    said = [document.page_content, document.metadata, iso(valid_from)]
    encoded = json.dumps(said, sort_keys=True, ensure_ascii=False, default=repr)
    digest = hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()
    return {**document.metadata, DOCUMENT_ID: document_id, DOCUMENT_DIGEST: digest}


def name_the_document(
    error: InvalidInputError, documents: Sequence[Document], positions: Sequence[int]
) -> InvalidInputError:
    """The core names a bad item ``items[i]`` or its metadata ``metadatas[i]`` (of the texts
    written, ``positions[i]`` among the caller's ``documents``); the caller knows it as a
    Document."""
    found = _ITEM.match(error.field)
    if found is None or int(found[2]) >= len(positions):
        return error
    index = positions[int(found[2])]
    part = ".metadata" if found[1] == "metadatas" else ""
    renamed = document_label(index, documents[index]) + part + error.field[found.end() :]
    return type(error)(renamed, error.problem, error.fix)
