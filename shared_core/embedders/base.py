"""The embedder port, a wrapper for any texts-to-vectors callable, and a hashing fake for tests."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Callable, Sequence, Sized
from typing import Any, Protocol, TypeVar, runtime_checkable

from shared_core.errors import EmbedderError, InvalidInputError, TemporalRagError

T = TypeVar("T")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to fixed-length vectors.

    ``name`` is stable across processes (an index records it and refuses another embedder's
    vectors); ``dimension`` is the vectors' length.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (some models embed queries differently)."""
        ...


def embedding_call(source: str, call: Callable[[], T]) -> T:
    """Run an embedder call; a foreign exception becomes EmbedderError (ours pass through)."""
    try:
        return call()
    except TemporalRagError:
        raise
    except Exception as exc:
        raise EmbedderError(f"{source} failed: {type(exc).__name__}: {exc}") from exc


def check_vectors(vectors: object, *, count: int, dimension: int, source: str) -> list[list[float]]:
    """``vectors`` as a list of ``count`` float lists of length ``dimension``, or EmbedderError."""
    try:
        rows = [_floats(row) for row in vectors]  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        raise EmbedderError(f"{source} returned something that is not a list of vectors") from exc
    if len(rows) != count:
        raise EmbedderError(f"{source} returned {len(rows)} vectors for {count} texts")
    for index, row in enumerate(rows):
        if len(row) != dimension:
            raise EmbedderError(
                f"{source} returned a vector of dimension {len(row)} at position {index}; "
                f"expected {dimension}"
            )
        if not math.isfinite(sum(row)):  # NaN and infinities propagate through the sum
            raise EmbedderError(f"{source} returned a non-finite value at position {index}")
    return rows


def _floats(row: object) -> list[float]:
    """``row`` as a list of floats; a list of floats already is one (the hot path: no copy)."""
    if type(row) is list and all(type(x) is float for x in row):
        return row
    return [float(x) for x in row]  # type: ignore[attr-defined]


class CallableEmbedder:
    """Any callable mapping a list of texts to a list of vectors, as an :class:`Embedder`.

    ``dimension=None`` probes it once, lazily, by embedding one short query. Failures of the
    callables become :class:`EmbedderError` (``source`` names them in the message); vectors are
    checked for count, dimension and finiteness.
    """

    def __init__(
        self,
        embed: Callable[[list[str]], Sequence[Sequence[float]]],
        *,
        name: str,
        dimension: int | None,
        embed_query: Callable[[str], Sequence[float]] | None = None,
        source: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError("name", f"is {name!r}", "name the model, e.g. 'my-model-v1'")
        if dimension is not None and (
            not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1
        ):
            raise InvalidInputError("dimension", f"{dimension!r} is not a positive int", "e.g. 384")
        self._embed = embed
        self._embed_query = embed_query
        self._name = name
        self._source = source or name
        self._dimension = dimension
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its lock: it pickles when its callables do (the bound methods of
        a LangChain ``Embeddings`` that pickles); pickle's own error names one that does not."""
        return {k: v for k, v in vars(self).items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        with self._lock:
            if self._dimension is None:
                probe = self._query(_PROBE)
                if not isinstance(probe, Sized) or not len(probe):
                    raise EmbedderError(f"{self._source}: the dimension probe returned {probe!r}")
                self._dimension = len(
                    check_vectors([probe], count=1, dimension=len(probe), source=self._source)[0]
                )
            return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        out = embedding_call(self._source, lambda: self._embed(texts))
        return check_vectors(out, count=len(texts), dimension=self.dimension, source=self._source)

    def embed_query(self, text: str) -> list[float]:
        out = [self._query(text)]
        return check_vectors(out, count=1, dimension=self.dimension, source=self._source)[0]

    def _query(self, text: str) -> Sequence[float]:
        if self._embed_query is None:
            return embedding_call(self._source, lambda: self._embed([text])[0])
        embed_query = self._embed_query
        return embedding_call(self._source, lambda: embed_query(text))


_PROBE = "dimension probe"
_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """A deterministic bag-of-words embedder for tests (no model; texts sharing words are close).

    Each lower-cased word is hashed into one of ``dimension`` buckets with a sign; the vector is
    L2-normalised. It knows nothing of meaning, only of shared words.

    Args:
        dimension: the length of every vector (at least 2).
        name: what an index records as the embedder's name (default ``hashing-<dimension>``).

    Raises:
        InvalidInputError: ``dimension`` is not an int of at least 2.
    """

    def __init__(self, dimension: int = 64, *, name: str | None = None) -> None:
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 2:
            raise InvalidInputError("dimension", f"{dimension!r} is too small", "use e.g. 64")
        self._dimension = dimension
        self._name = name or f"hashing-{dimension}"
        self.calls = 0  # how many texts were embedded (tests check batching and reuse)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self._dimension
        for word in _WORD.findall(text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dimension
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return [x / norm for x in vector]
