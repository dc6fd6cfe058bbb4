"""Embedders: the port, the offline MiniLM default, a callable wrapper and a hashing fake."""

from shared_core.embedders.base import CallableEmbedder, Embedder, HashingEmbedder, check_vectors
from shared_core.embedders.minilm import MiniLMEmbedder

__all__ = ["CallableEmbedder", "Embedder", "HashingEmbedder", "MiniLMEmbedder", "check_vectors"]
