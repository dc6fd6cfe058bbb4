"""The prose detector's evaluation: per-kind scoring, the dev-only threshold, the pair sets."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from shared_core.errors import InvalidInputError
from temporal_rag_training.kappa_eval import (
    POSITIVE_KINDS,
    best_prefilter,
    best_threshold,
    cosine_scorer,
    evaluate,
    load_pairset,
    measure,
    run,
    scores_of,
)
from temporal_rag_training.pairs import KINDS, LabelledPair, generate_pairs


def pair(kind: str, label: int, text: str = "x") -> LabelledPair:
    return LabelledPair(
        older=f"{text} old", newer=f"{text} new", label=label, kind=kind, family="t"
    )


def test_scores_count_true_and_false_positives() -> None:
    s = scores_of([1, 1, 0, 0], [True, False, True, False])
    assert (s.true_positives, s.false_positives, s.false_negatives) == (1, 1, 1)
    assert s.precision == 0.5
    assert s.recall == 0.5
    assert s.f1 == 0.5


def test_a_positive_kind_competes_with_every_negative_and_a_negative_kind_with_every_positive() -> (
    None
):
    pairs = [
        pair("explicit_change", 1, "a"),
        pair("implied_change", 1, "b"),
        pair("paraphrase", 0, "c"),
        pair("compatible", 0, "d"),
    ]
    report = evaluate(pairs, [0.9, 0.1, 0.8, 0.2], threshold=0.5)
    kinds = {k.kind: k for k in report.kinds}
    explicit = kinds["explicit_change"].scores  # its own positive + both negatives
    assert (explicit.true_positives, explicit.false_positives, explicit.false_negatives) == (
        1,
        1,
        0,
    )
    paraphrase = kinds["paraphrase"].scores  # both positives + its own negative
    assert (paraphrase.true_positives, paraphrase.false_positives) == (1, 1)
    assert paraphrase.false_negatives == 1
    assert kinds["compatible"].flagged == 0
    assert report.overall.f1 == pytest.approx(0.5)


def test_unrelated_false_alarms_are_counted() -> None:
    pairs = [pair("unrelated", 0, "a"), pair("unrelated", 0, "b"), pair("retraction", 1, "c")]
    assert evaluate(pairs, [0.7, 0.1, 0.9], 0.5).unrelated_false_alarms == (1, 2)


def test_the_best_threshold_separates_separable_scores() -> None:
    pairs = [pair("explicit_change", 1, str(i)) for i in range(5)]
    pairs += [pair("paraphrase", 0, f"n{i}") for i in range(5)]
    scores = [0.8, 0.75, 0.9, 0.7, 0.95, 0.1, 0.3, 0.6, 0.2, 0.05]
    threshold = best_threshold(pairs, scores)
    assert 0.6 < threshold <= 0.7
    assert evaluate(pairs, scores, threshold).overall.f1 == 1.0


def test_evaluate_wants_one_score_per_pair() -> None:
    with pytest.raises(InvalidInputError, match="scores"):
        evaluate([pair("paraphrase", 0)], [0.1, 0.2], 0.5)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_hand_written_sets_cover_every_kind_with_consistent_labels(split: str) -> None:
    pairs = load_pairset(split)
    assert len(pairs) >= 200
    # the v2 mix's bare_change and same_subject_news are generator kinds only: the hand-written
    # sets file such pairs under explicit_change and compatible
    assert set(Counter(p.kind for p in pairs)) == set(KINDS) - {"bare_change", "same_subject_news"}
    for p in pairs:
        assert p.label == int(p.kind in POSITIVE_KINDS), p
        assert p.older.strip()
        assert p.newer.strip()


def test_dev_and_test_share_no_pair_and_no_statement() -> None:
    dev, test = load_pairset("dev"), load_pairset("test")
    dev_texts = {t.casefold() for p in dev for t in (p.older, p.newer)}
    test_texts = {t.casefold() for p in test for t in (p.older, p.newer)}
    assert not dev_texts & test_texts


def test_the_training_data_holds_no_hand_written_pair_and_few_of_their_sentences() -> None:
    """The sets were written apart from the generator; short generic sentences ("I wear
    glasses.") may coincide, but no pair does, and coincidences stay under 1%."""
    held_out = [p for split in ("dev", "test") for p in load_pairset(split)]
    training = generate_pairs(seed=13, count=30_000)
    pairs = {(p.older.casefold(), p.newer.casefold()) for p in training}
    assert not pairs & {(p.older.casefold(), p.newer.casefold()) for p in held_out}
    sentences = {t.casefold() for p in held_out for t in (p.older, p.newer)}
    shared = sentences & {t.casefold() for p in training for t in (p.older, p.newer)}
    assert len(shared) < 0.01 * len(sentences), sorted(shared)


def test_a_bad_row_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    rows = [
        {"older": "a", "newer": "b", "label": 1, "kind": "explicit_change"},
        {"older": "a", "newer": "c", "label": 1, "kind": "contradiction"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(InvalidInputError, match=r"bad\.jsonl:2"):
        load_pairset(path)


def test_measure_times_every_full_set_of_ten() -> None:
    calls: list[int] = []

    def scorer(pairs: Sequence[tuple[str, str]]) -> list[float]:
        calls.append(len(pairs))
        return [0.5] * len(pairs)

    timing = measure(scorer, [pair("paraphrase", 0, str(i)) for i in range(35)])
    assert timing.sets == 3
    assert timing.set_size == 10
    assert calls == [10, 35, 10, 10, 10]  # warm-up, whole split, then the sets


def test_cosine_baseline_scores_identical_texts_one() -> None:
    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "same" in t else [0.0, 1.0] for t in texts]

    assert cosine_scorer(embed)([("same", "same"), ("same", "other")]) == [1.0, 0.0]


def test_run_chooses_a_missing_threshold_on_dev_and_reports_both_splits() -> None:
    def by_kind(pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [0.5 for _ in pairs]

    text, record = run([("constant", by_kind, None)], timed=False)
    assert set(record["constant"]) == {"dev", "test"}
    assert "constant on test" in text


def test_the_prefilter_is_the_highest_cosine_that_keeps_the_best_f1() -> None:
    pairs = [pair("explicit_change", 1, "a"), pair("paraphrase", 0, "b")]
    scores = [0.9, 0.9]  # the model alone flags both
    cosines = [0.6, 0.2]  # the false alarm is far in embedding space
    assert best_prefilter(pairs, scores, cosines, threshold=0.5) == 0.6
    assert best_prefilter(pairs, [0.9, 0.1], [0.0, 0.0], threshold=0.5) == 0.0
