"""Every shipped vector index passes the conformance suite: NumPy, Chroma embedded, Chroma
over HTTP against a real server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from shared_core.errors import EmbedderMismatchError
from shared_core.index import VectorIndex
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger.results import ChangeCursor
from tests.conformance.index_suite import (
    DIM,
    EMBEDDER,
    NOW,
    IndexConformance,
    axis,
    current,
    mix,
    rec,
)


class TestNumpyIndex(IndexConformance):
    examples = 150

    @contextmanager
    def make_index(self) -> Iterator[VectorIndex]:
        index = NumpyIndex()
        try:
            yield index
        finally:
            index.close()


@pytest.fixture(scope="module")
def chroma_client() -> Any:
    chromadb = pytest.importorskip("chromadb")
    return chromadb.EphemeralClient()


class TestChromaIndex(IndexConformance):
    examples = 60

    @pytest.fixture(autouse=True)
    def _client(self, chroma_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        from shared_core.index import chroma

        self.client = chroma_client
        monkeypatch.setattr(chroma, "OVERFETCH", 1)  # small collections: still try both ways

    @contextmanager
    def make_index(self) -> Iterator[VectorIndex]:
        from shared_core.index.chroma import ChromaIndex

        prefix = f"t{uuid.uuid4().hex[:12]}"
        index = ChromaIndex(client=self.client, prefix=prefix)
        try:
            yield index
        finally:
            index.close()
            ChromaIndex(client=self.client, prefix=prefix).drop()


class TestChromaIndexListingRows(TestChromaIndex):
    """ChromaIndex whose past searches, where unfiltered answers settle nothing, ask a caller
    that lists its visible rows for them whenever it can (every collection counts as large)."""

    examples = 30

    @pytest.fixture(autouse=True)
    def _client(self, chroma_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        from shared_core.index import chroma

        self.client = chroma_client
        monkeypatch.setattr(chroma, "OVERFETCH", 1)  # k rows, then no wider query
        monkeypatch.setattr(chroma, "WIDER", 1)
        monkeypatch.setattr(chroma, "LISTING_SHARE", 1)


@pytest.fixture(scope="module")
def chroma_http_client(chroma_url: str) -> Iterator[Any]:
    pytest.importorskip("chromadb")
    from tests.integration.concurrent_writer import http_client
    from tests.servers import close_chroma_client

    client = http_client(chroma_url)
    yield client
    close_chroma_client(client)


class TestChromaServerIndex(TestChromaIndex):
    """ChromaIndex over chromadb.HttpClient against a `chroma run` server."""

    examples = 30

    @pytest.fixture(autouse=True)
    def _client(self, chroma_http_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        from shared_core.index import chroma

        self.client = chroma_http_client
        monkeypatch.setattr(chroma, "OVERFETCH", 1)


def test_a_reopened_chroma_index_keeps_everything(tmp_path: Path) -> None:
    """Records, cursor, binding and the fast path's bookkeeping survive a reopen."""
    pytest.importorskip("chromadb")
    from shared_core.index.chroma import ChromaIndex

    records = [
        rec(1, "plan", valid_from=NOW + 500, recorded_at=10),  # future-dated, nearest
        rec(2, "plan", valid_from=NOW + 600, recorded_at=10),
        rec(3, "old", valid_from=0, valid_to=NOW + 100, recorded_at=10),  # believed, in hist
        rec(4, "now", recorded_at=20),
        rec(5, "gone", recorded_at=5, retired_at=20),
    ]
    vectors = {"plan": mix(0, 1, 0.0), "old": mix(0, 1, 0.1), "now": mix(0, 1, 0.2)}
    vectors["gone"] = mix(0, 1, 0.05)
    with closing(ChromaIndex(tmp_path / "index")) as index:
        index.bind(embedder=EMBEDDER, dimension=DIM)
        index.apply(records, vectors, ChangeCursor(5, 20))
        before = current(index, axis(0), 2), current(index, axis(0), 3, valid_at=NOW + 200)
        books = dict(index._books)
    assert before == ([3, 4], [4])
    with closing(ChromaIndex(tmp_path / "index")) as index:
        assert index._books == books
        assert (index.count(), index.row_ids(), index.cursor()) == (
            5,
            set(range(1, 6)),
            ChangeCursor(5, 20),
        )
        with pytest.raises(EmbedderMismatchError):
            index.bind(embedder="another", dimension=DIM)
        index.bind(embedder=EMBEDDER, dimension=DIM)
        assert (
            current(index, axis(0), 2),
            current(index, axis(0), 3, valid_at=NOW + 200),
        ) == before
        assert current(index, axis(0), 2, valid_at=NOW + 550) == [1, 4]
        assert index.vectors(["gone"]) == {"gone": pytest.approx(vectors["gone"], abs=1e-6)}
