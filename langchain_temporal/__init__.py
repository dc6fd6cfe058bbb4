"""LangChain adapter for temporal-rag: thin, it translates and the core decides.

- :class:`TemporalRetriever`: a ``BaseRetriever`` over a :class:`~shared_core.TemporalMemory`.
- :class:`TemporalVectorStore`: a ``VectorStore`` over one (ids, deletes that withdraw, as-of
  searches, ``as_retriever``).
- :class:`TemporalDocumentCompressor`: Phi_T over any retriever's Documents (GC-Mem), for
  ``ContextualCompressionRetriever`` and ``DocumentCompressorPipeline``.
- Bridges: :class:`LangChainEmbedder` (LangChain ``Embeddings`` -> core ``Embedder``),
  :class:`CoreEmbeddings` (the reverse) and :func:`text_llm` (a chat model or LLM as the
  ``str -> str`` callable of the LLM detector, the LLM judge of writes and query expansion).
- :class:`~langchain_temporal.langgraph_store.TemporalStore`: LangGraph long-term memory (a
  ``BaseStore``) with history and as-of reads; imported on first use, it needs the ``langgraph``
  extra.

Needs the ``langchain`` extra: ``pip install "temporal-rag[langchain]"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared_core.errors import MissingDependencyError as _MissingDependencyError

try:
    import langchain_core  # noqa: F401  (only checks that the extra is installed)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise _MissingDependencyError(
        "langchain_temporal needs langchain-core, which is not installed: "
        'pip install "temporal-rag[langchain]"'
    ) from exc

from langchain_temporal.bridges import CoreEmbeddings, LangChainEmbedder, text_llm
from langchain_temporal.compressor import TemporalDocumentCompressor
from langchain_temporal.retriever import TemporalRetriever
from langchain_temporal.vector_store import TemporalVectorStore

__all__ = [
    "CoreEmbeddings",
    "LangChainEmbedder",
    "TemporalDocumentCompressor",
    "TemporalRetriever",
    "TemporalVectorStore",
    "text_llm",
]

if TYPE_CHECKING:  # the real types for type checkers; at run time __getattr__ imports them
    from langchain_temporal.langgraph_store import ItemVersion as ItemVersion
    from langchain_temporal.langgraph_store import TemporalStore as TemporalStore

_LANGGRAPH = {"ItemVersion", "TemporalStore"}  # in langgraph_store: needs langgraph


def __getattr__(name: str) -> object:
    """``TemporalStore`` and ``ItemVersion`` are imported on first use, so that the package
    works without langgraph-checkpoint (the ``langgraph`` extra)."""
    if name in _LANGGRAPH:
        from langchain_temporal import langgraph_store

        return getattr(langgraph_store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
