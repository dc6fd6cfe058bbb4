"""Bridges between LlamaIndex's model interfaces and the core's small protocols.

- :class:`LlamaIndexEmbedder`: any LlamaIndex ``BaseEmbedding`` as the core ``Embedder``.
- :class:`CoreEmbedding`: any core ``Embedder`` (the offline MiniLM, say) as a LlamaIndex
  ``BaseEmbedding``, e.g. the ``embed_model`` of a ``VectorStoreIndex`` over a
  ``TemporalVectorStore``, so that LlamaIndex and the memory embed with one model.
- :func:`text_llm`: any LlamaIndex LLM (completion or chat) as the ``str -> str`` callable, with
  its ``achat`` / ``acomplete`` as the async form, of ``LLMConflictDetector``, ``LLMExtractor``
  and ``MemoryConfig(expander=...)``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import BaseModel, PrivateAttr
from llama_index.core.llms import LLM

from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.errors import InvalidInputError, NotPicklableError
from shared_core.llm_calls import TextLLMPair

_UNNAMED = {"", "unknown"}


class LlamaIndexEmbedder(CallableEmbedder):
    """A LlamaIndex ``BaseEmbedding`` as the core :class:`~shared_core.Embedder`.

    Failures of the wrapped model become :class:`~shared_core.errors.EmbedderError` (the
    original as ``__cause__``); its vectors are checked for count, dimension and finiteness.

    Args:
        embed_model: any LlamaIndex ``BaseEmbedding``.
        name: identifies the model (an index records it and refuses another model's
            vectors); default the embedding's ``model_name``, and required when that is
            unset (``"unknown"``).
        dimension: the vectors' length; when not given it is probed once, on first use, by
            embedding a short query.

    Raises:
        InvalidInputError: ``embed_model`` is not a ``BaseEmbedding``, or the model has no name.
        NotPicklableError: on pickling (a ``TypeError``): build it again where you load.
    """

    def __init__(
        self, embed_model: BaseEmbedding, *, name: str | None = None, dimension: int | None = None
    ) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise InvalidInputError(
                "embed_model",
                f"is a {type(embed_model).__name__}",
                "pass a llama_index BaseEmbedding",
            )
        name = embed_model.model_name if name is None else name
        if not isinstance(name, str) or name.strip() in _UNNAMED:
            raise InvalidInputError(
                "name", f"is {name!r}", "name the model, e.g. name='my-model-v1'"
            )
        super().__init__(
            embed_model.get_text_embedding_batch,
            name=name,
            dimension=dimension,
            embed_query=embed_model.get_query_embedding,
            source=f"embed_model {name!r}",
        )
        self.embed_model = embed_model

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder({type(self.embed_model).__name__}, name={self.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Refused with :class:`~shared_core.errors.NotPicklableError` (a ``TypeError``): the
        model's bound methods are LlamaIndex's instrumented wrappers, which no pickle carries
        (unrefused, their ``NotImplementedError`` would escape ``except TypeError``)."""
        raise NotPicklableError(
            "LlamaIndexEmbedder",
            "it holds the embedding model's instrumented methods, which cannot be copied",
            "build LlamaIndexEmbedder(embed_model) again where the pickle is loaded, or embed "
            "with a core embedder that pickles (MiniLMEmbedder, HashingEmbedder)",
        )


class CoreEmbedding(BaseEmbedding):
    """A core :class:`~shared_core.Embedder` as a LlamaIndex ``BaseEmbedding`` (sync and async;
    the async methods run the embedder off the event loop).

    It pickles (with an index, say) when its embedder does (``MiniLMEmbedder`` pickles as its
    settings); otherwise pickling raises :class:`~shared_core.errors.NotPicklableError`.

    Args:
        embedder: any core embedder; its name becomes ``model_name``.
        **options: other ``BaseEmbedding`` fields (``embed_batch_size``, ...).

    Raises:
        InvalidInputError: ``embedder`` is not a core embedder.
    """

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **options: Any) -> None:
        if not isinstance(embedder, Embedder):
            raise InvalidInputError(
                "embedder",
                f"is a {type(embedder).__name__}",
                "pass a shared_core Embedder (name, dimension, embed_documents, embed_query)",
            )
        options.setdefault("model_name", embedder.name)
        super().__init__(**options)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "CoreEmbedding"

    def __getstate__(self) -> dict[str, Any]:
        # LlamaIndex's __getstate__ drops a private attribute that does not pickle, which would
        # leave a copy that fails on first use; refuse instead
        state: dict[str, Any] = super().__getstate__()
        if "_embedder" not in (state.get("__pydantic_private__") or {}):
            raise NotPicklableError(
                "CoreEmbedding",
                f"its embedder {self._embedder!r} cannot be pickled",
                "use an embedder that pickles (MiniLMEmbedder, HashingEmbedder), or build the "
                "embedding again where the pickle is loaded",
            )
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        BaseModel.__setstate__(self, state)  # the fields and the embedder, as they were

    @property
    def embedder(self) -> Embedder:
        """The core embedder doing the work."""
        return self._embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embedder.embed_query(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await asyncio.to_thread(self._embedder.embed_query, query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embedder.embed_documents([text])[0]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return (await self._aget_text_embeddings([text]))[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed_documents(texts)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._embedder.embed_documents, texts)


def text_llm(llm: LLM, *, mode: Literal["auto", "complete", "chat"] = "auto") -> TextLLMPair:
    """A LlamaIndex LLM as ``str -> str`` with a native async form (``acall``, through
    ``achat`` / ``acomplete``; :mod:`shared_core.llm_calls`).

    ``mode="auto"`` chats with chat models (``llm.metadata.is_chat_model``: the prompt is one
    user message, the reply's text blocks are joined) and completes with the others
    (``llm.complete(prompt).text``); ``"complete"`` / ``"chat"`` force one. The LLM's own
    errors propagate unchanged: the detector, extractor or expander calling it translates them
    (see their ``on_error``).
    """
    if not isinstance(llm, LLM):
        raise InvalidInputError("llm", f"is a {type(llm).__name__}", "pass a llama_index LLM")
    if mode not in ("auto", "complete", "chat"):
        raise InvalidInputError("mode", f"is {mode!r}", "use 'auto', 'complete' or 'chat'")
    chat = mode == "chat" or (mode == "auto" and llm.metadata.is_chat_model)

    def ask(prompt: str) -> str:
        if chat:
            return llm.chat(_user(prompt)).message.content or ""
        return llm.complete(prompt).text

    async def aask(prompt: str) -> str:
        if chat:
            return (await llm.achat(_user(prompt))).message.content or ""
        return (await llm.acomplete(prompt)).text

    return TextLLMPair(ask, aask, name=f"text_llm({type(llm).__name__})")


def _user(prompt: str) -> list[ChatMessage]:
    return [ChatMessage(role=MessageRole.USER, content=prompt)]
