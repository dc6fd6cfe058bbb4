"""Documents in and out: what both LangChain classes accept and what the retriever returns."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from shared_core.adapter_toolkit import hit_metadata
from shared_core.errors import InvalidInputError
from shared_core.memory import Hit


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


def hit_document(hit: Hit) -> Document:
    """One search hit as a Document (see :class:`~langchain_temporal.TemporalRetriever` for the
    metadata)."""
    return Document(page_content=hit.fact.text, metadata=hit_metadata(hit), id=hit.fact.id)
