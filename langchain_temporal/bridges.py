"""Bridges between LangChain's model interfaces and the core's small protocols.

- :class:`LangChainEmbedder`: any LangChain ``Embeddings`` as the core ``Embedder``.
- :class:`CoreEmbeddings`: any core ``Embedder`` (the offline MiniLM, say) as LangChain
  ``Embeddings``, e.g. for a ``Chroma`` vector store.
- :func:`text_llm`: any LangChain chat model, LLM or Runnable as the ``str -> str`` callable
  of ``LLMConflictDetector``, ``LLMExtractor`` and ``TemporalMemory(expander=...)``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from shared_core.embedders.base import Embedder, check_vectors
from shared_core.errors import EmbedderError, InvalidInputError, TemporalRagError

_PROBE = "dimension probe"


class LangChainEmbedder:
    """A LangChain ``Embeddings`` as the core :class:`~shared_core.Embedder`.

    ``name`` identifies the model (an index records it and refuses another model's vectors),
    so it is required. ``dimension`` is probed once, on first use, by embedding one short
    query when it is not given. Failures of the wrapped object become
    :class:`~shared_core.errors.EmbedderError` (the original as ``__cause__``); its vectors
    are checked for count, dimension and finiteness.
    """

    def __init__(self, embeddings: Embeddings, *, name: str, dimension: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInputError(
                "embeddings",
                f"is a {type(embeddings).__name__}",
                "pass a langchain_core.embeddings.Embeddings",
            )
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError("name", f"is {name!r}", "name the model, e.g. 'my-model-v1'")
        if dimension is not None and (
            not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1
        ):
            raise InvalidInputError("dimension", f"{dimension!r} is not a positive int", "e.g. 384")
        self.embeddings = embeddings
        self._name = name
        self._dimension = dimension
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self.embeddings).__name__}, name={self._name!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        with self._lock:
            if self._dimension is None:
                probe = self._call(self.embeddings.embed_query, _PROBE)
                vector = check_vectors(
                    [probe], count=1, dimension=_length(probe), source=self._name
                )
                self._dimension = len(vector[0])
            return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        vectors = self._call(self.embeddings.embed_documents, texts)
        return check_vectors(vectors, count=len(texts), dimension=self.dimension, source=self._name)

    def embed_query(self, text: str) -> list[float]:
        vector = self._call(self.embeddings.embed_query, text)
        return check_vectors([vector], count=1, dimension=self.dimension, source=self._name)[0]

    def _call(self, method: Callable[[Any], Any], argument: Any) -> Any:
        try:
            return method(argument)
        except TemporalRagError:
            raise
        except Exception as exc:
            raise EmbedderError(
                f"embeddings {self._name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc


def _length(vector: object) -> int:
    try:
        return len(vector)  # type: ignore[arg-type]
    except TypeError as exc:
        raise EmbedderError(f"the dimension probe returned a {type(vector).__name__}") from exc


class CoreEmbeddings(Embeddings):
    """A core :class:`~shared_core.Embedder` as LangChain ``Embeddings`` (sync and async)."""

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


def text_llm(model: Runnable[Any, Any]) -> Callable[[str], str]:
    """A LangChain chat model, LLM or any Runnable taking a string, as ``str -> str``.

    The prompt is passed to ``model.invoke``; a message reply gives its text (a list of
    content blocks is flattened to its text blocks, reasoning and tool blocks dropped), a
    string reply is returned as it is. The model's own errors propagate unchanged: the
    detector, extractor or expander calling it translates them (see their ``on_error``).
    """
    if not isinstance(model, Runnable):
        raise InvalidInputError(
            "model",
            f"is a {type(model).__name__}",
            "pass a LangChain chat model, LLM or Runnable",
        )

    def ask(prompt: str) -> str:
        return reply_text(model.invoke(prompt))

    ask.__qualname__ = ask.__name__ = f"text_llm({type(model).__name__})"
    return ask


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
