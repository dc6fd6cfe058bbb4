"""LlamaIndex adapter for temporal-rag: thin, it translates and the core decides.

- :class:`TemporalVectorStore`: a ``BasePydanticVectorStore`` over a
  :class:`~shared_core.TemporalMemory` (current state by default; ``valid_at`` / ``known_at``
  through ``vector_store_kwargs``; deletes retire, never destroy).
- :class:`TemporalNodePostprocessor`: Phi_T (GC-Mem) over any retriever's ``NodeWithScore``
  lists, for ``node_postprocessors``.
- Bridges: :class:`LlamaIndexEmbedder` (a LlamaIndex ``BaseEmbedding`` as the core
  ``Embedder``), :class:`CoreEmbedding` (the reverse) and :func:`text_llm` (any LlamaIndex LLM
  as the ``str -> str`` callable of the LLM detector, the LLM judge of writes and query expansion).

Needs the ``llamaindex`` extra: ``pip install "temporal-rag[llamaindex]"``.
"""

from __future__ import annotations

from shared_core.errors import MissingDependencyError as _MissingDependencyError

try:
    import llama_index.core  # noqa: F401  (only checks that the extra is installed)
except ImportError as exc:  # exercised in a subprocess by the tests
    raise _MissingDependencyError(
        "llamaindex_temporal needs llama-index-core, which is not installed: "
        'pip install "temporal-rag[llamaindex]"'
    ) from exc

from llamaindex_temporal.bridges import CoreEmbedding, LlamaIndexEmbedder, text_llm
from llamaindex_temporal.postprocessor import TemporalNodePostprocessor
from llamaindex_temporal.vector_store import TemporalVectorStore

__all__ = [
    "CoreEmbedding",
    "LlamaIndexEmbedder",
    "TemporalNodePostprocessor",
    "TemporalVectorStore",
    "text_llm",
]
