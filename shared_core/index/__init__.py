"""Vector indexes: the port, Chroma (the default) and an in-memory numpy fake."""

from shared_core.index.base import IndexMatch, Vector, VectorIndex
from shared_core.index.chroma import ChromaIndex
from shared_core.index.numpy_index import NumpyIndex

__all__ = ["ChromaIndex", "IndexMatch", "NumpyIndex", "Vector", "VectorIndex"]
