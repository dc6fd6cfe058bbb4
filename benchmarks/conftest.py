"""Fixtures shared by the benchmark files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.reporting import emit
from shared_core.embedders.minilm import MiniLMEmbedder


@pytest.fixture(scope="module")
def figures(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Summary lines of one benchmark file, printed once when the file is done."""
    lines: list[str] = []
    yield lines
    if lines:
        name = request.module.__name__.rsplit(".", 1)[-1]
        emit(request.config, ["", f"figures of benchmarks/{name}.py:", *lines])


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    """The offline MiniLM, warmed up once per benchmark file."""
    model = MiniLMEmbedder()
    model.embed_documents(["warm up"])
    return model
