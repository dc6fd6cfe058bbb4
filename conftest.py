"""Fixtures the tests and the benchmarks share: the real servers of tests/servers.py."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.servers import (
    ServerUnavailableError,
    chroma_server,
    drop_schema,
    postgres_server,
    unavailable,
)

POSTGRES_URL_ENV = "TEMPORAL_RAG_POSTGRES_URL"
CHROMA_URL_ENV = "TEMPORAL_RAG_CHROMA_URL"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server's URL: ``$TEMPORAL_RAG_POSTGRES_URL``, else a throwaway cluster
    started for this test session on loopback (stopped at its end)."""
    given = os.environ.get(POSTGRES_URL_ENV)
    if given:
        yield given
        return
    try:
        server = postgres_server()
        url = server.__enter__()
    except (ServerUnavailableError, ImportError) as exc:
        unavailable(f"no PostgreSQL server: {exc}")
        return
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def schema(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL schema name of this test's own (a ledger of its own), dropped after."""
    name = f"p_{uuid.uuid4().hex[:12]}"
    yield name
    drop_schema(postgres_url, name)


@pytest.fixture(scope="session")
def chroma_url() -> Iterator[str]:
    """A Chroma server's URL: ``$TEMPORAL_RAG_CHROMA_URL``, else ``chroma run`` started for
    this test session on loopback (stopped at its end)."""
    given = os.environ.get(CHROMA_URL_ENV)
    if given:
        yield given
        return
    try:
        server = chroma_server()
        url = server.__enter__()
    except ServerUnavailableError as exc:
        unavailable(f"no Chroma server: {exc}")
        return
    try:
        yield url
    finally:
        server.__exit__(None, None, None)
