"""The Chroma client of :mod:`shared_core.index.chroma`: opening and closing it, Chroma's errors
translated, its page size, the HNSW options and the embedding-function slot that never embeds a
collection is opened with. chromadb is imported only when used."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from shared_core.errors import (
    InvalidInputError,
    MissingDependencyError,
    TemporalRagError,
    VectorIndexError,
)

PAGE = 5_000
"""Rows per Chroma ``get`` (large gets with metadata fail) and fact ids per ``$in``."""
EF_NAME = "temporal_rag_precomputed"


def hnsw_config(**options: int | None) -> dict[str, Any]:
    """Chroma's HNSW configuration: cosine space and the options given (positive ints)."""
    config: dict[str, Any] = {"space": "cosine"}
    for name, value in options.items():
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInputError(name, f"{value!r} is not a positive int", "e.g. 100")
            config[name] = value
    return config


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Chroma's exceptions become VectorIndexError (the original kept as the cause), and so do
    the panics of its Rust core (``pyo3_runtime.PanicException``, a BaseException: a damaged
    ``chroma.sqlite3`` raises one when the client starts)."""
    try:
        yield
    except TemporalRagError:
        raise
    except Exception as exc:
        raise VectorIndexError(f"Chroma could not {action}: {exc}") from exc
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise VectorIndexError(f"Chroma could not {action}: {exc}") from exc


def close_client(client: Any) -> None:
    """Close a Chroma client for good. chromadb 1.5's ``close()`` leaves the httpx sessions of
    an HttpClient and of its admin client open (unclosed sockets): close those too."""
    sessions = [
        getattr(getattr(owner, "_server", None), "_session", None)
        for owner in (client, getattr(client, "_admin_client", None))
    ]
    client.close()
    for session in sessions:
        if session is not None and hasattr(session, "close"):
            session.close()


def forget_folder(path: str | os.PathLike[str]) -> None:
    """Drop chromadb's cached system of a persistent folder, stopping it: chromadb caches one
    per folder for the life of the process, so after a failed start (or before the folder is
    moved) a new client would otherwise reuse the broken or moved one."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:  # no chromadb: nothing cached
        return
    wanted = os.path.realpath(path)
    cached = SharedSystemClient._identifier_to_system
    for identifier in [i for i in cached if os.path.realpath(i or ".") == wanted]:
        system = cached.pop(identifier)
        SharedSystemClient._identifier_to_refcount.pop(identifier, None)
        try:
            system.stop()
        except BaseException as exc:  # a damaged folder's system may panic as it stops
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise


def set_aside(path: str | os.PathLike[str], *, now: datetime) -> Path:
    """Move a damaged Chroma folder aside, next to it, as ``<name>.damaged-<UTC time>``
    (never deleted), forgetting chromadb's cached client of it first; returns where it went."""
    folder = Path(path)
    forget_folder(folder)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder.with_name(f"{folder.name}.damaged-{stamp}")
    suffix = 1
    while target.exists():
        target = folder.with_name(f"{folder.name}.damaged-{stamp}-{suffix}")
        suffix += 1
    folder.rename(target)
    return target


def chromadb_module() -> Any:
    try:
        import chromadb
    except ImportError as exc:
        raise MissingDependencyError(
            'ChromaIndex needs chromadb: pip install "temporal-rag[embedded]"'
        ) from exc
    return chromadb


def persistent_client(path: str | os.PathLike[str] | None) -> Any:
    """Chroma's default settings: another client of the same folder in this process must
    have equal settings (and chromadb 1.5's product telemetry sends nothing)."""
    return chromadb_module().PersistentClient(path=os.fspath(path or "."))


def precomputed_embedding_function() -> Any:
    """An embedding function for Chroma collections that are always given vectors: it refuses
    to embed, so Chroma never builds its default (which downloads a model)."""
    return _precomputed_class()()


@cache
def _precomputed_class() -> type:
    """Chroma's embedding-function slot, filled so that Chroma never builds its default (which
    downloads a model): this index always passes vectors, and this function refuses to embed."""
    chromadb_module()
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
    from chromadb.utils.embedding_functions import register_embedding_function

    class PrecomputedOnly(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            raise VectorIndexError("temporal-rag gives Chroma vectors; it never embeds text")

        @staticmethod
        def name() -> str:
            return EF_NAME

        def get_config(self) -> dict[str, Any]:
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> PrecomputedOnly:
            return PrecomputedOnly()

        def default_space(self) -> Space:
            return "cosine"

        def supported_spaces(self) -> list[Space]:
            return ["cosine"]

    register_embedding_function(PrecomputedOnly)  # type: ignore[no-untyped-call]
    return PrecomputedOnly
