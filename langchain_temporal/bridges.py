"""Bridges between LangChain's model interfaces and the core's small protocols.

- :class:`LangChainEmbedder`: any LangChain ``Embeddings`` as the core ``Embedder``.
- :class:`CoreEmbeddings`: any core ``Embedder`` (the offline MiniLM, say) as LangChain
  ``Embeddings``, e.g. for a ``Chroma`` vector store.
- :func:`text_llm`: any LangChain chat model, LLM or Runnable as the ``str -> str`` callable
  (with its ``ainvoke`` as the async form) of ``LLMConflictDetector``, ``LLMExtractor`` and
  ``MemoryConfig(expander=...)``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.errors import InvalidInputError
from shared_core.llm_calls import TextLLMPair


class LangChainEmbedder(CallableEmbedder):
    """A LangChain ``Embeddings`` as the core :class:`~shared_core.Embedder`.

    Failures of the wrapped object become :class:`~shared_core.errors.EmbedderError` (the
    original as ``__cause__``); its vectors are checked for count, dimension and finiteness.

    Args:
        embeddings: any ``langchain_core.embeddings.Embeddings``.
        name: identifies the model (an index records it and refuses another model's
            vectors), so it is required.
        dimension: the vectors' length; when not given it is probed once, on first use, by
            embedding one short query.

    Raises:
        InvalidInputError: ``embeddings`` is not an ``Embeddings``.
    """

    def __init__(self, embeddings: Embeddings, *, name: str, dimension: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInputError(
                "embeddings",
                f"is a {type(embeddings).__name__}",
                "pass a langchain_core.embeddings.Embeddings",
            )
        super().__init__(
            embeddings.embed_documents,
            name=name,
            dimension=dimension,
            embed_query=embeddings.embed_query,
            source=f"embeddings {name!r}",
        )
        self.embeddings = embeddings

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self.embeddings).__name__}, name={self.name!r})"


class CoreEmbeddings(Embeddings):
    """A core :class:`~shared_core.Embedder` as LangChain ``Embeddings`` (sync and async).

    For example the offline MiniLM behind a ``langchain_chroma.Chroma``.

    Args:
        embedder: any core embedder (``name``, ``dimension``, ``embed_documents``,
            ``embed_query``).

    Raises:
        InvalidInputError: ``embedder`` is not a core embedder.
    """

    def __init__(self, embedder: Embedder) -> None:
        if not isinstance(embedder, Embedder):
            raise InvalidInputError(
                "embedder",
                f"is a {type(embedder).__name__}",
                "pass a shared_core Embedder (name, dimension, embed_documents, embed_query)",
            )
        self.embedder = embedder

    def __repr__(self) -> str:
        return f"CoreEmbeddings({self.embedder.name!r})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_documents(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)


def text_llm(model: Runnable[Any, Any]) -> TextLLMPair:
    """A LangChain chat model, LLM or any Runnable taking a string, as ``str -> str`` with a
    native async form: calling it runs ``model.invoke``, ``acall`` awaits ``model.ainvoke``
    (:mod:`shared_core.llm_calls`: async paths of the detector, extractor and expander await it).

    A message reply gives its text (a list of content blocks is flattened to its text blocks,
    reasoning and tool blocks dropped), a string reply is returned as it is. The model's own
    errors propagate unchanged: the detector, extractor or expander calling it translates them
    (see their ``on_error``).
    """
    if not isinstance(model, Runnable):
        raise InvalidInputError(
            "model",
            f"is a {type(model).__name__}",
            "pass a LangChain chat model, LLM or Runnable",
        )

    def ask(prompt: str) -> str:
        return reply_text(model.invoke(prompt))

    async def aask(prompt: str) -> str:
        return reply_text(await model.ainvoke(prompt))

    return TextLLMPair(ask, aask, name=f"text_llm({type(model).__name__})")


def reply_text(reply: object) -> str:
    """The text of a model's reply: a string, or a message whose content may be blocks."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, BaseMessage):
        return str(reply.text)
    raise InvalidInputError(
        "model",
        f"returned a {type(reply).__name__}, not text or a message",
        "end the Runnable with a chat model, an LLM or StrOutputParser()",
    )
