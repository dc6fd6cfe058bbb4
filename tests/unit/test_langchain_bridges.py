"""The bridges (Embeddings <-> Embedder, chat model -> str callable) and the package's import."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_temporal import CoreEmbeddings, LangChainEmbedder, TemporalRetriever, text_llm
from shared_core.embedders.base import Embedder, HashingEmbedder
from shared_core.errors import EmbedderError, InvalidInputError, MissingDependencyError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory


class CountingEmbeddings(DeterministicFakeEmbedding):
    """LangChain's deterministic fake, counting the queries it embeds."""

    queries: int = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(text)


class BrokenEmbeddings(Embeddings):
    def __init__(self, vectors: Any = None) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.vectors is None:
            raise ConnectionError("the embedding server is down")
        return self.vectors  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# ---------------------------------------------------------------- LangChainEmbedder
def test_a_langchain_embeddings_is_a_core_embedder() -> None:
    embeddings = CountingEmbeddings(size=16)
    embedder = LangChainEmbedder(embeddings, name="fake-16")
    assert embeddings.queries == 0  # the dimension is probed lazily
    assert isinstance(embedder, Embedder)  # (a runtime Protocol check reads it)
    assert (embedder.name, embedder.dimension) == ("fake-16", 16)
    assert embeddings.queries == 1
    assert embedder.dimension == 16
    assert embeddings.queries == 1  # once
    assert embedder.embed_documents(["a", "b"]) == embeddings.embed_documents(["a", "b"])
    assert embedder.embed_query("a") == embeddings.embed_query("a")
    assert embedder.embed_documents([]) == []


def test_a_given_dimension_is_not_probed() -> None:
    embeddings = CountingEmbeddings(size=8)
    assert LangChainEmbedder(embeddings, name="fake", dimension=8).dimension == 8
    assert embeddings.queries == 0


def test_a_langchain_embedder_pickled_with_its_lock_now_pickles_without_it() -> None:
    """It failed with "cannot pickle '_thread.lock' object" whatever it wrapped."""
    embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=8), name="fake-8")
    assert embedder.dimension == 8
    copy = pickle.loads(pickle.dumps(embedder))
    assert (copy.name, copy.dimension) == ("fake-8", 8)
    assert copy.embed_query("Maria") == embedder.embed_query("Maria")
    fresh = pickle.loads(pickle.dumps(LangChainEmbedder(CountingEmbeddings(size=4), name="c")))
    assert fresh.dimension == 4  # probed after the copy, under a lock of its own


def test_a_memory_runs_on_a_langchain_embeddings() -> None:
    embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=32), name="fake-32")
    with TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
    ) as memory:
        memory.add("Maria lives in Lisbon.")
        assert len(TemporalRetriever(memory=memory).invoke("Maria")) == 1


def test_failures_and_bad_vectors_become_embedder_errors() -> None:
    with pytest.raises(EmbedderError, match="ConnectionError") as caught:
        LangChainEmbedder(BrokenEmbeddings(), name="down").embed_documents(["a"])
    assert isinstance(caught.value.__cause__, ConnectionError)
    with pytest.raises(EmbedderError, match="dimension 2 at position 0; expected 3"):
        LangChainEmbedder(BrokenEmbeddings([[1.0, 2.0]]), name="x", dimension=3).embed_query("a")
    with pytest.raises(EmbedderError, match="2 vectors for 1 texts"):
        LangChainEmbedder(BrokenEmbeddings([[1.0], [2.0]]), name="x").embed_documents(["a"])
    with pytest.raises(EmbedderError, match="non-finite"):
        LangChainEmbedder(BrokenEmbeddings([[float("nan")]]), name="x").dimension  # noqa: B018


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"embeddings": HashingEmbedder(), "name": "x"}, "embeddings"),
        ({"embeddings": DeterministicFakeEmbedding(size=4), "name": " "}, "name"),
        ({"embeddings": DeterministicFakeEmbedding(size=4), "name": "x", "dimension": 0}, "dimension"),  # noqa: E501
    ],
)  # fmt: skip
def test_langchain_embedder_checks_its_arguments(arguments: dict[str, Any], field: str) -> None:
    embeddings = arguments.pop("embeddings")
    with pytest.raises(InvalidInputError, match=f"^{field}:"):
        LangChainEmbedder(embeddings, **arguments)


# ---------------------------------------------------------------- CoreEmbeddings
async def test_a_core_embedder_is_a_langchain_embeddings() -> None:
    core = HashingEmbedder(32)
    embeddings = CoreEmbeddings(core)
    assert isinstance(embeddings, Embeddings)
    texts = ["Maria lives in Lisbon.", "The office opens at nine."]
    assert embeddings.embed_documents(texts) == core.embed_documents(texts)
    assert embeddings.embed_query("Maria") == core.embed_query("Maria")
    assert await embeddings.aembed_documents(texts) == core.embed_documents(texts)
    assert await embeddings.aembed_query("Maria") == core.embed_query("Maria")
    round_trip = LangChainEmbedder(embeddings, name=core.name)
    assert round_trip.dimension == 32
    assert round_trip.embed_documents(texts) == core.embed_documents(texts)


def test_core_embeddings_needs_a_core_embedder() -> None:
    with pytest.raises(InvalidInputError, match=r"^embedder:"):
        CoreEmbeddings(DeterministicFakeEmbedding(size=4))  # type: ignore[arg-type]


# ---------------------------------------------------------------- text_llm
def test_text_llm_returns_the_reply_text() -> None:
    ask = text_llm(FakeListChatModel(responses=["first", "second"]))
    assert [ask("q"), ask("q")] == ["first", "second"]
    assert text_llm(RunnableLambda(lambda prompt: prompt.upper()))("shout") == "SHOUT"
    assert "FakeListChatModel" in repr(ask)


def test_text_llm_refuses_what_cannot_answer_with_text() -> None:
    with pytest.raises(InvalidInputError, match=r"^model: is a function"):
        text_llm(lambda prompt: prompt)  # type: ignore[arg-type]
    ask = text_llm(RunnableLambda(lambda prompt: {"answer": prompt}))
    with pytest.raises(InvalidInputError, match=r"^model: returned a dict"):
        ask("q")


def test_a_model_error_propagates_unchanged() -> None:
    def down(prompt: str) -> str:
        raise TimeoutError("no answer")

    with pytest.raises(TimeoutError, match="no answer"):
        text_llm(RunnableLambda(down))("q")


# ---------------------------------------------------------------- the import
def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_importing_without_the_extra_names_it() -> None:
    result = run(
        "import sys\n"
        "sys.modules['langchain_core'] = None  # as if langchain-core were not installed\n"
        "try:\n"
        "    import langchain_temporal\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error, sep=': ')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("MissingDependencyError: ")
    assert 'pip install "temporal-rag[langchain]"' in result.stdout
    assert issubclass(MissingDependencyError, ImportError)


def test_importing_loads_nothing_heavy_and_does_nothing() -> None:
    heavy = ["chromadb", "sentence_transformers", "torch", "numpy", "langchain_classic"]
    result = run(
        f"import sys, langchain_temporal\nprint([m for m in {heavy!r} if m in sys.modules])"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
