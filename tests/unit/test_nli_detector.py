"""The NLI conflict detector: its decision logic with a fake scorer, and its loading, label
mapping and batching with a tiny randomly initialised BERT built here (no NLI model exists
offline; these tests check the code path, not quality). The quality test at the end needs a real
NLI model on disk and skips without one."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared_core.detectors import (
    AllPrefilters,
    CosinePrefilter,
    KeyConflictDetector,
    NLIConflictDetector,
    TransformersNLIScorer,
    same_subject,
)
from shared_core.detectors.nli import QUERY_TEMPLATE, PairCounts
from shared_core.errors import (
    DetectorError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotFoundError,
)
from shared_core.facts import FactKey
from shared_core.phi_t import AnyConflict, Candidate, temporal_dominance

T0 = datetime(2024, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def cand(
    id: str,
    text: str,
    day: int | None,
    *,
    subject: str | None = None,
    namespace: str = "default",
) -> Candidate:
    key = FactKey(namespace, subject, "lives_in") if subject is not None else None
    return Candidate(
        id=id,
        text=text,
        timestamp=None if day is None else T0 + day * DAY,
        namespace=namespace,
        key=key,
        object=text if key else None,
    )


class FakeScorer:
    """Scores from a table keyed by (premise, hypothesis); records every call."""

    def __init__(self, table: dict[tuple[str, str], float] | None = None, default: float = 0.0):
        self.table = table or {}
        self.default = default
        self.calls: list[list[tuple[str, str]]] = []

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(list(pairs))
        return [self.table.get(pair, self.default) for pair in pairs]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [pair for call in self.calls for pair in call]


# ---------------------------------------------------------------- decision logic (fake scorer)
def test_fires_at_or_above_the_threshold_only() -> None:
    a, b, c = cand("a", "A", 0), cand("b", "B", 1), cand("c", "C", 2)
    scorer = FakeScorer({("A", "B"): 0.7, ("A", "C"): 0.69, ("B", "C"): 0.2})
    found = NLIConflictDetector(scorer, threshold=0.7).find_conflicts([a, b, c])
    assert [(x.older, x.newer, x.detector, x.score) for x in found] == [(0, 1, "nli", 0.7)]


def test_premise_is_the_older_text_whatever_the_input_order() -> None:
    newest, oldest, middle = cand("n", "new", 5), cand("o", "old", 1), cand("m", "mid", 3)
    scorer = FakeScorer({("old", "new"): 0.9})
    found = NLIConflictDetector(scorer).find_conflicts([newest, oldest, middle])
    assert sorted(scorer.pairs) == [("mid", "new"), ("old", "mid"), ("old", "new")]
    assert [(x.older, x.newer) for x in found] == [(1, 0)]
    assert len(scorer.calls) == 1, "all pairs go to the scorer in one call"


def test_namespaces_undated_and_equal_times_never_reach_the_scorer() -> None:
    scorer = FakeScorer(default=1.0)
    detector = NLIConflictDetector(scorer)
    candidates = [
        cand("a", "A", 0, namespace="alice"),
        cand("b", "B", 1, namespace="bob"),
        cand("u", "undated", None),
        cand("x", "X", 2),
        cand("y", "Y", 2),  # same time as x: neither is newer
        cand("v", "undated too", None, namespace="alice"),
    ]
    assert detector.find_conflicts(candidates) == []
    assert scorer.calls == []
    assert detector.last_counts == PairCounts(0, 0)


def test_phi_t_with_the_nli_detector_keeps_only_the_newest_of_a_chain() -> None:
    a, b, c = cand("a", "Berlin", 0), cand("b", "Paris", 1), cand("c", "Lisbon", 2)
    unrelated = cand("s", "the sky is blue", 1)
    scorer = FakeScorer(
        {("Berlin", "Paris"): 0.9, ("Paris", "Lisbon"): 0.9, ("Berlin", "Lisbon"): 0.9}
    )
    result = temporal_dominance([c, unrelated, b, a], NLIConflictDetector(scorer))
    assert [x.id for x in result.kept] == ["c", "s"]
    assert {(s.candidate.id, s.dominated_by, s.detector) for s in result.shadows} == {
        ("a", "c", "nli"),
        ("b", "c", "nli"),
    }


def test_combines_with_the_key_detector() -> None:
    keyed_old = cand("k1", "Maria lives in Berlin", 0, subject="maria")
    keyed_new = cand("k2", "Maria lives in Lisbon", 3, subject="maria")
    prose_old = cand("p1", "the meeting is on Monday", 1)
    prose_new = cand("p2", "the meeting moved to Friday", 2)
    scorer = FakeScorer({("the meeting is on Monday", "the meeting moved to Friday"): 0.95})
    detector = AnyConflict(KeyConflictDetector(), NLIConflictDetector(scorer, prefilter=None))
    result = temporal_dominance([keyed_old, keyed_new, prose_old, prose_new], detector)
    assert [x.id for x in result.kept] == ["k2", "p2"]
    assert {s.candidate.id: s.detector for s in result.shadows} == {"k1": "key", "p1": "nli"}


def test_same_subject_skips_keyed_pairs_about_different_subjects() -> None:
    candidates = [
        cand("m1", "Maria lives in Berlin", 0, subject="maria"),
        cand("j1", "João lives in Porto", 1, subject="joao"),
        cand("m2", "Maria lives in Lisbon", 2, subject="maria"),
        cand("p", "someone moved", 3),  # prose: paired with everything older
    ]
    scorer = FakeScorer()
    detector = NLIConflictDetector(scorer, prefilter=same_subject)
    detector.find_conflicts(candidates)
    assert sorted(scorer.pairs) == sorted(
        [
            ("Maria lives in Berlin", "Maria lives in Lisbon"),
            ("Maria lives in Berlin", "someone moved"),
            ("João lives in Porto", "someone moved"),
            ("Maria lives in Lisbon", "someone moved"),
        ]
    )
    assert detector.last_counts == PairCounts(considered=6, scored=4)
    assert detector.last_counts.saved == 2


def test_any_callable_is_a_prefilter_and_the_counters_add_up() -> None:
    candidates = [cand(str(i), f"t{i}", i) for i in range(5)]  # 10 ordered pairs
    seen: list[tuple[str, str]] = []

    def adjacent(older: Candidate, newer: Candidate) -> bool:
        seen.append((older.id, newer.id))
        return int(newer.id) - int(older.id) == 1

    scorer = FakeScorer()
    detector = NLIConflictDetector(scorer, prefilter=adjacent)
    detector.find_conflicts(candidates)
    detector.find_conflicts(candidates[:3])
    assert all(int(newer) > int(older) for older, newer in seen)
    assert detector.last_counts == PairCounts(3, 2)
    assert (detector.pairs_considered, detector.pairs_scored) == (13, 6)
    detector.reset_counts()
    assert (detector.pairs_considered, detector.pairs_scored) == (0, 0)
    assert detector.last_counts == PairCounts()


class FakeEmbed:
    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.vectors[t] for t in texts]


def test_cosine_prefilter_embeds_each_dated_candidate_once_per_call() -> None:
    embed = FakeEmbed(
        {
            "Berlin": [1.0, 0.0, 0.0],
            "Lisbon": [0.9, 0.1, 0.0],  # cosine ~0.99 with Berlin
            "sky": [0.0, 0.0, 2.0],  # orthogonal to both
            "zero": [0.0, 0.0, 0.0],  # no direction: cosine 0 with everything
        }
    )
    candidates = [
        cand("a", "Berlin", 0),
        cand("b", "sky", 1),
        cand("c", "Lisbon", 2),
        cand("z", "zero", 3),
        cand("u", "undated", None),
    ]
    scorer = FakeScorer()
    detector = NLIConflictDetector(scorer, prefilter=CosinePrefilter(embed, 0.8))
    detector.find_conflicts(candidates)
    assert embed.calls == [["Berlin", "sky", "Lisbon", "zero"]]
    assert scorer.pairs == [("Berlin", "Lisbon")]
    assert detector.last_counts == PairCounts(6, 1)
    detector.find_conflicts(candidates)
    assert len(embed.calls) == 2, "once per call, no stale cache across calls"


def test_cosine_prefilter_negative_threshold_lets_orthogonal_pairs_through() -> None:
    embed = FakeEmbed({"x": [1.0, 0.0], "y": [0.0, 1.0], "-x": [-1.0, 0.0]})
    scorer = FakeScorer()
    detector = NLIConflictDetector(scorer, prefilter=CosinePrefilter(embed, -0.5))
    detector.find_conflicts([cand("1", "x", 0), cand("2", "y", 1), cand("3", "-x", 2)])
    assert sorted(scorer.pairs) == [("x", "y"), ("y", "-x")]


def test_cosine_prefilter_skips_embedding_when_no_pair_is_possible() -> None:
    embed = FakeEmbed({})
    detector = NLIConflictDetector(FakeScorer(), prefilter=CosinePrefilter(embed, 0.5))
    detector.find_conflicts([cand("a", "alone", 0), cand("u", "undated", None)])
    assert embed.calls == []


@pytest.mark.parametrize(
    "output",
    [[[1.0, 0.0]], [[1.0, 0.0], [1.0]], "boom"],
    ids=["too-few", "ragged", "raises"],
)
def test_cosine_prefilter_rejects_bad_embeddings(output: Any) -> None:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        if output == "boom":
            raise RuntimeError("embedding service down")
        return list(output)

    detector = NLIConflictDetector(FakeScorer(), prefilter=CosinePrefilter(embed, 0.5))
    with pytest.raises(DetectorError, match="embed"):
        detector.find_conflicts([cand("a", "A", 0), cand("b", "B", 1)])


def test_all_of_requires_every_prefilter() -> None:
    embed = FakeEmbed({"Maria in Berlin": [1.0, 0.0], "Maria in Lisbon": [1.0, 0.1]})
    embed.vectors |= {"João in Porto": [1.0, 0.05], "weather": [0.0, 1.0]}
    candidates = [
        cand("m1", "Maria in Berlin", 0, subject="maria"),
        cand("j", "João in Porto", 1, subject="joao"),
        cand("w", "weather", 2),
        cand("m2", "Maria in Lisbon", 3, subject="maria"),
    ]
    scorer = FakeScorer()
    both = AllPrefilters(same_subject, CosinePrefilter(embed, 0.9))
    detector = NLIConflictDetector(scorer, prefilter=both)
    detector.find_conflicts(candidates)
    assert sorted(scorer.pairs) == [("Maria in Berlin", "Maria in Lisbon")]
    assert detector.last_counts == PairCounts(6, 1)
    with pytest.raises(InvalidInputError):
        AllPrefilters()


def test_condition_on_query_prefixes_both_texts() -> None:
    a, b = cand("a", "Maria lives in Berlin", 0), cand("b", "Maria lives in Lisbon", 1)
    scorer = FakeScorer()
    NLIConflictDetector(scorer, condition_on_query=True).find_conflicts(
        [a, b], query="Where does Maria live?"
    )
    assert scorer.pairs == [
        (
            "Regarding: Where does Maria live?\nMaria lives in Berlin",
            "Regarding: Where does Maria live?\nMaria lives in Lisbon",
        )
    ]
    assert QUERY_TEMPLATE.format(query="q", text="t") == "Regarding: q\nt"


def test_query_is_ignored_unless_asked_for_or_absent() -> None:
    a, b = cand("a", "A", 0), cand("b", "B", 1)
    plain = FakeScorer()
    NLIConflictDetector(plain).find_conflicts([a, b], query="q")
    no_query = FakeScorer()
    NLIConflictDetector(no_query, condition_on_query=True).find_conflicts([a, b])
    custom = FakeScorer()
    NLIConflictDetector(
        custom, condition_on_query=True, query_template="Q: {query} | {text}"
    ).find_conflicts([a, b], query="q")
    assert plain.pairs == no_query.pairs == [("A", "B")]
    assert custom.pairs == [("Q: q | A", "Q: q | B")]


@pytest.mark.parametrize("threshold", [0, 0.0, -0.1, 1.01, math.nan, True, "0.5", None])
def test_threshold_must_be_in_zero_one(threshold: Any) -> None:
    with pytest.raises(InvalidInputError, match="threshold"):
        NLIConflictDetector(FakeScorer(), threshold=threshold)


def test_threshold_one_fires_only_on_certainty() -> None:
    a, b, c = cand("a", "A", 0), cand("b", "B", 1), cand("c", "C", 2)
    scorer = FakeScorer({("A", "B"): 1.0, ("A", "C"): 0.999})
    found = NLIConflictDetector(scorer, threshold=1).find_conflicts([a, b, c])
    assert [(x.older, x.newer) for x in found] == [(0, 1)]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query_template": "{text} only"}, "query_template"),
        ({"query_template": "{query} {text} {text}"}, "query_template"),
        ({"query_template": "{query} {oops} {text}"}, "query_template"),
        ({"prefilter": 3}, "prefilter"),
        ({"name": ""}, "name"),
    ],
)
def test_other_arguments_are_validated(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        NLIConflictDetector(FakeScorer(), **kwargs)


def test_rejects_what_is_neither_a_scorer_nor_a_model() -> None:
    with pytest.raises(InvalidInputError, match="model_or_scorer"):
        NLIConflictDetector(42)  # type: ignore[arg-type]


class ScriptedScorer:
    def __init__(self, result: Any) -> None:
        self.result = result

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> Any:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([0.5, 0.5], "2 scores for 1 pairs"),
        ([1.5], "not in"),
        ([math.nan], "not in"),
        (["high"], "non-number"),
        ([True], "non-number"),
        (RuntimeError("CUDA out of memory"), "CUDA out of memory"),
    ],
)
def test_bad_scorer_output_is_a_detector_error(result: Any, message: str) -> None:
    detector = NLIConflictDetector(ScriptedScorer(result))
    with pytest.raises(DetectorError, match=message):
        detector.find_conflicts([cand("a", "A", 0), cand("b", "B", 1)])


def test_our_own_errors_from_a_scorer_pass_through() -> None:
    detector = NLIConflictDetector(ScriptedScorer(ModelNotFoundError("no model here")))
    with pytest.raises(ModelNotFoundError, match="no model here"):
        detector.find_conflicts([cand("a", "A", 0), cand("b", "B", 1)])


def test_numpy_like_scalars_are_accepted() -> None:
    class Half(float):
        pass  # e.g. numpy.float64, a float subclass

    detector = NLIConflictDetector(ScriptedScorer([Half(0.75)]))
    [conflict] = detector.find_conflicts([cand("a", "A", 0), cand("b", "B", 1)])
    assert type(conflict.score) is float
    assert conflict.score == 0.75


def test_a_model_path_is_wrapped_lazily(tmp_path: Path) -> None:
    missing = tmp_path / "no-model-here"
    detector = NLIConflictDetector(missing)  # nothing is loaded yet
    assert isinstance(detector.scorer, TransformersNLIScorer)
    assert detector.find_conflicts([cand("a", "A", 0)]) == []  # no pair: still nothing loaded
    with pytest.raises(ModelNotFoundError, match="no-model-here"):
        detector.find_conflicts([cand("a", "A", 0), cand("b", "B", 1)])


def test_importing_the_detectors_loads_no_model_library() -> None:
    code = (
        "import sys, shared_core.detectors, shared_core.detectors.nli\n"
        "print(','.join(m for m in ('torch', 'transformers', 'numpy') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"max_length": -1}, "max_length"),
        ({"contradiction_label": ""}, "contradiction_label"),
    ],
)
def test_scorer_arguments_are_validated(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        TransformersNLIScorer("some/model", **kwargs)
    with pytest.raises(InvalidInputError, match="model"):
        TransformersNLIScorer("  ")


def test_pairs_are_validated_before_loading_anything(tmp_path: Path) -> None:
    scorer = TransformersNLIScorer(tmp_path / "missing")
    assert scorer.contradiction_scores([]) == []
    with pytest.raises(InvalidInputError, match=r"pairs\[1\]"):
        scorer.contradiction_scores([("a", "b"), ("a", 3)])  # type: ignore[list-item]


def test_missing_transformers_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import now fails
    with pytest.raises(MissingDependencyError, match=r"temporal-rag\[nli\]"):
        TransformersNLIScorer(tmp_path).load()


# ---------------------------------------------------------------- the real code path, tiny model
# The dev install includes the nli extra (see the Makefile): these imports are not optional here.
import torch  # noqa: E402
import transformers  # noqa: E402

from tests.tiny_nli import NLI_LABELS, build_tiny_model  # noqa: E402

WORDS = [  # the tiny tokenizer's vocabulary: every word the tests use
    "maria lives in berlin moved to lisbon the sky is blue green bob works at acme now no "
    "longer does not meeting monday friday where live ? . ,"
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-nli"), NLI_LABELS, WORDS)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Any attempt to open a network connection fails the test (and is recorded)."""
    attempts: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args[:2]))
        raise AssertionError(f"network access attempted: {args[:2]!r}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield attempts
    assert attempts == []


PAIRS = [
    ("maria lives in berlin", "maria moved to lisbon"),
    ("the sky is blue", "the sky is green"),
    ("bob works at acme", "bob no longer works at acme"),
    ("maria lives in berlin", "the meeting is now friday"),
    ("the meeting is monday", "the meeting moved to friday ."),
    ("where does maria live ?", "maria lives in lisbon , not berlin"),
    ("blue", "green"),
]


def test_tiny_model_scores_are_probabilities_in_input_order(
    tiny_model: Path, no_network: list[str]
) -> None:
    environment = dict(os.environ)
    scorer = TransformersNLIScorer(tiny_model, batch_size=3)
    scores = scorer.contradiction_scores(PAIRS)
    assert len(scores) == len(PAIRS)
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)
    assert scorer.labels == NLI_LABELS
    assert scorer.contradiction_index == 2
    reversed_scores = scorer.contradiction_scores(PAIRS[::-1])
    assert reversed_scores == pytest.approx(scores[::-1], abs=1e-6)
    assert dict(os.environ) == environment, "the library neither reads nor sets env vars"


def test_small_batches_give_the_same_scores_as_one_batch(
    tiny_model: Path, no_network: list[str]
) -> None:
    one_batch = TransformersNLIScorer(tiny_model, batch_size=64).contradiction_scores(PAIRS)
    for batch_size in (1, 2, 3):
        batched = TransformersNLIScorer(tiny_model, batch_size=batch_size)
        assert batched.contradiction_scores(PAIRS) == pytest.approx(one_batch, abs=1e-5)


def test_the_score_is_the_softmax_of_the_contradiction_logit(
    tmp_path: Path, no_network: list[str]
) -> None:
    shouting = {0: "CONTRADICTION", 1: "Neutral", 2: "ENTAILMENT"}  # another order and case
    folder = build_tiny_model(tmp_path / "shouting", shouting, WORDS, seed=1)
    scorer = TransformersNLIScorer(str(folder))
    assert scorer.contradiction_index == 0
    [score] = scorer.contradiction_scores([PAIRS[0]])
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, local_files_only=True
    )
    with torch.inference_mode():
        logits = model(**tokenizer(*PAIRS[0], return_tensors="pt")).logits[0]
    assert score == pytest.approx(torch.softmax(logits, dim=-1)[0].item(), abs=1e-6)


def test_max_length_truncates_long_pairs(tiny_model: Path, no_network: list[str]) -> None:
    long_pair = (" ".join(["maria lives in berlin"] * 200), "maria moved to lisbon")
    [score] = TransformersNLIScorer(tiny_model, max_length=32).contradiction_scores([long_pair])
    assert 0.0 <= score <= 1.0


def test_a_config_without_contradiction_gives_a_clear_error(
    tmp_path: Path, no_network: list[str]
) -> None:
    folder = build_tiny_model(tmp_path / "sentiment", {0: "NEGATIVE", 1: "POSITIVE"}, WORDS)
    scorer = TransformersNLIScorer(folder)
    with pytest.raises(InvalidInputError) as caught:
        scorer.contradiction_scores([PAIRS[0]])
    message = str(caught.value)
    assert "no 'contradiction' label" in message
    assert "0: 'NEGATIVE', 1: 'POSITIVE'" in message
    assert "contradiction_label=" in message
    # naming the label explicitly is the way out for models with other label names
    renamed = TransformersNLIScorer(folder, contradiction_label="negative")
    assert renamed.contradiction_index == 0
    assert 0.0 <= renamed.contradiction_scores([PAIRS[0]])[0] <= 1.0


def test_a_missing_path_names_it(tmp_path: Path, no_network: list[str]) -> None:
    for model in (tmp_path / "nowhere", str(tmp_path / "nowhere"), "./models/nli-nowhere"):
        with pytest.raises(ModelNotFoundError) as caught:
            TransformersNLIScorer(model).load()
        assert str(model) in str(caught.value)
        assert "hf download" in str(caught.value)


def test_a_file_or_an_empty_folder_is_not_a_model(tmp_path: Path, no_network: list[str]) -> None:
    file = tmp_path / "model.bin"
    file.write_bytes(b"")
    with pytest.raises(ModelNotFoundError, match="is not a folder"):
        TransformersNLIScorer(file).load()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelNotFoundError, match="empty"):
        TransformersNLIScorer(empty).load()


def test_an_uncached_hub_name_fails_fast_without_the_network(no_network: list[str]) -> None:
    name = "temporal-rag-tests/no-such-nli-model"
    with pytest.raises(ModelNotFoundError) as caught:
        TransformersNLIScorer(name).load()
    assert name in str(caught.value)
    assert "local Hugging Face cache" in str(caught.value)


def test_a_cached_hub_name_loads_from_the_cache_folder(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[str]
) -> None:
    """The Hugging Face cache layout: models--ORG--NAME/refs/main names a snapshot folder."""
    import huggingface_hub

    repo = tmp_path / "hub" / "models--tiny-org--tiny-nli"
    snapshot = repo / "snapshots" / ("0" * 40)
    shutil.copytree(tiny_model, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    by_name = TransformersNLIScorer("tiny-org/tiny-nli").contradiction_scores(PAIRS)
    by_path = TransformersNLIScorer(tiny_model).contradiction_scores(PAIRS)
    assert by_name == pytest.approx(by_path, abs=1e-6)


def test_an_invalid_name_is_not_found(no_network: list[str]) -> None:
    with pytest.raises(ModelNotFoundError, match="neither a folder nor a model name"):
        TransformersNLIScorer("not a valid/repo id!").load()


def test_loading_happens_once_across_threads(tiny_model: Path, no_network: list[str]) -> None:
    scorer = TransformersNLIScorer(tiny_model)
    loads = []
    load_now = scorer._load_now

    def counting() -> Any:
        loads.append(1)
        return load_now()

    scorer._load_now = counting  # type: ignore[method-assign]
    results: list[list[float]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        try:
            results.append(scorer.contradiction_scores(PAIRS))
        except BaseException as error:  # surfaced below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert loads == [1]
    assert all(r == pytest.approx(results[0], abs=1e-6) for r in results)


def test_detector_end_to_end_with_the_tiny_model(tiny_model: Path, no_network: list[str]) -> None:
    candidates = [
        cand("a", "maria lives in berlin", 0, subject="maria"),
        cand("b", "bob works at acme", 1, subject="bob"),
        cand("c", "maria moved to lisbon", 2, subject="maria"),
        cand("d", "the meeting moved to friday", 3),
    ]
    scorer = TransformersNLIScorer(tiny_model, batch_size=2)
    everything = NLIConflictDetector(scorer, threshold=1e-9, prefilter=same_subject)
    found = everything.find_conflicts(candidates, query="where does maria live ?")
    assert {(x.older, x.newer) for x in found} == {(0, 2), (0, 3), (1, 3), (2, 3)}
    assert all(x.detector == "nli" and x.score is not None for x in found)
    assert everything.last_counts == PairCounts(6, 4)
    conditioned = NLIConflictDetector(scorer, threshold=1e-9, condition_on_query=True)
    assert len(conditioned.find_conflicts(candidates, query="where does maria live ?")) == 6
    result = temporal_dominance(candidates, everything)
    assert [x.id for x in result.kept] == ["d"]


# ---------------------------------------------------------------- quality, with a real model
REAL_MODEL_ENV = "TEMPORAL_RAG_NLI_MODEL"
WELL_KNOWN = ("cross-encoder/nli-deberta-v3-base", "cross-encoder/nli-deberta-v3-small")


def real_scorer() -> TransformersNLIScorer:
    """A real NLI model from $TEMPORAL_RAG_NLI_MODEL (a folder) or the local cache, else skip."""
    choices = [os.environ[REAL_MODEL_ENV]] if os.environ.get(REAL_MODEL_ENV) else list(WELL_KNOWN)
    for choice in choices:
        scorer = TransformersNLIScorer(choice)
        try:
            scorer.load()
        except ModelNotFoundError:
            continue
        return scorer
    pytest.skip(
        f"no real NLI model on disk (none ships on PyPI): set {REAL_MODEL_ENV}=/path/to/folder "
        f"of a sequence-classification NLI model, or have one of {', '.join(WELL_KNOWN)} in "
        "the local Hugging Face cache"
    )


def test_quality_with_a_real_nli_model(no_network: list[str]) -> None:
    scorer = real_scorer()
    contradictions = [
        ("Maria lives in Berlin.", "Maria no longer lives in Berlin; she lives in Lisbon."),
        ("The meeting is on Monday.", "The meeting is not on Monday."),
        ("Bob works at Acme.", "Bob has never worked at Acme."),
        ("The shop is open on Sundays.", "The shop is closed on Sundays."),
    ]
    compatible = [
        ("Maria lives in Berlin.", "Maria lives in Germany's capital, Berlin."),
        ("Bob works at Acme.", "The sky is blue."),
        ("The meeting is on Monday.", "The meeting room has a projector."),
        ("The shop is open on Sundays.", "The shop sells bread."),
    ]
    detector = NLIConflictDetector(scorer, threshold=0.5)
    hits = sum(s >= 0.5 for s in scorer.contradiction_scores(contradictions))
    false_alarms = sum(s >= 0.5 for s in scorer.contradiction_scores(compatible))
    assert hits >= 3, f"found {hits} of {len(contradictions)} contradictions"
    assert false_alarms <= 1, f"{false_alarms} false alarms among {len(compatible)} pairs"
    stale = cand("old", "Maria lives in Berlin.", 0)
    current = cand("new", "Maria moved away from Berlin; she now lives in Lisbon.", 5)
    static = cand("other", "Bob works at Acme.", 1)
    kept = temporal_dominance([stale, static, current], detector).kept
    assert [x.id for x in kept] == ["other", "new"]


def test_tiny_model_config_is_what_the_test_says(tiny_model: Path) -> None:
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["hidden_size"] == 32
    assert config["num_hidden_layers"] == 1
    assert {int(k): v for k, v in config["id2label"].items()} == NLI_LABELS


def test_batches_are_sorted_by_length_and_scores_come_back_in_input_order() -> None:
    from shared_core.detectors.transformers_nli import score_in_batches

    pairs = [("a" * n, "b") for n in (5, 1, 3, 2, 4)]
    seen: list[list[int]] = []

    def score(batch: list[tuple[str, str]]) -> list[float]:
        seen.append([len(older) for older, _ in batch])
        return [len(older) / 10 for older, _ in batch]

    assert score_in_batches(pairs, 2, score) == [0.5, 0.1, 0.3, 0.2, 0.4]
    assert seen == [[1, 2], [3, 4], [5]]
