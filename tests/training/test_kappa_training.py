"""kappa-minilm measured and trained by the training pipeline: the card's dev F1 and the held-out
test figures reproduced, batching, and a seeded training run that writes the same bytes twice."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from shared_core.detectors.kappa import CARD_FILE, WEIGHTS_FILE, KappaScorer, file_sha256
from temporal_rag_training.kappa_eval import evaluate, load_pairset
from temporal_rag_training.pairs import LabelledPair
from temporal_rag_training.train import joint_threshold, vitaminc_sample, with_swapped_negatives


@pytest.fixture(scope="module")
def scorer() -> KappaScorer:
    loaded = KappaScorer()
    loaded.load()
    return loaded


def test_the_dev_f1_of_the_card_is_reproduced(scorer: KappaScorer) -> None:
    dev = load_pairset("dev")
    scores = scorer.contradiction_scores([(p.older, p.newer) for p in dev])
    report = evaluate(dev, scores, scorer.card.threshold)
    assert report.overall.f1 == pytest.approx(scorer.card.facts["dev_f1"], abs=2e-3)


def test_held_out_test_figures_are_the_ones_the_readme_quotes(scorer: KappaScorer) -> None:
    """F1 0.717 on the hand-written test set (never used for training or the thresholds; v1
    reached 0.835, the issue's aim of 0.90 is not met, see the model card); no false alarm on
    unrelated pairs."""
    test = load_pairset("test")
    scores = scorer.contradiction_scores([(p.older, p.newer) for p in test])
    report = evaluate(test, scores, scorer.card.threshold)
    assert report.overall.f1 == pytest.approx(0.717, abs=0.003), report.to_dict()
    assert report.unrelated_false_alarms == (0, 20)


def test_scores_come_back_in_input_order_whatever_the_batching(scorer: KappaScorer) -> None:
    pairs = [(p.older, p.newer) for p in load_pairset("dev")[:40]]
    small = KappaScorer(batch_size=3)
    assert small.contradiction_scores(pairs) == pytest.approx(
        scorer.contradiction_scores(pairs), abs=1e-5
    )


def test_training_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    """Two tiny runs of the training script with the same seed write identical weights."""
    hashes = []
    for run in ("a", "b"):
        out = tmp_path / run
        subprocess.run(
            [
                sys.executable,
                "-m",
                "temporal_rag_training.train",
                "--count=96",
                "--vitaminc-count=0",
                "--seed=5",
                "--quiet",
                f"--out={out}",
            ],
            check=True,
            capture_output=True,
            cwd=tmp_path,
        )
        hashes.append(json.loads((out / CARD_FILE).read_text())["facts"]["weights_sha256"])
        assert file_sha256(out / WEIGHTS_FILE) == hashes[-1]
    assert hashes[0] == hashes[1]


def test_swapped_negatives_add_the_order_free_kinds_read_backwards() -> None:
    change = LabelledPair("a", "b", 1, "explicit_change", "f")
    paraphrase = LabelledPair("c", "d", 0, "paraphrase", "f")
    assert with_swapped_negatives([change, paraphrase]) == [
        change,
        paraphrase,
        LabelledPair("d", "c", 0, "paraphrase", "f"),
    ]


def test_the_vitaminc_sample_follows_the_mix_capped_by_what_there_is() -> None:
    pairs = [
        *(LabelledPair(f"a{n}", "b", 1, "revision_change", "vitaminc") for n in range(10)),
        *(LabelledPair(f"c{n}", "d", 0, "supported_claim", "vitaminc") for n in range(100)),
        *(LabelledPair(f"e{n}", "f", 0, "unsupported_claim", "vitaminc") for n in range(100)),
        *(LabelledPair(f"g{n}", "h", 0, "same_page", "vitaminc") for n in range(100)),
    ]
    drawn = vitaminc_sample(pairs, 100, seed=1)
    counts = Counter(p.kind for p in drawn)
    assert counts == {
        "revision_change": 10,
        "supported_claim": 25,
        "unsupported_claim": 15,
        "same_page": 20,
    }
    assert drawn == vitaminc_sample(pairs, 100, seed=1)
    assert len(set(drawn)) == len(drawn)


def test_the_joint_threshold_serves_both_dev_sets() -> None:
    """Every threshold in (0.6, 0.75] keeps both sets perfect; ties go to the highest (fewer
    closings). Alone, the first set is perfect up to 0.8."""
    ends, other = (
        LabelledPair("a", "b", 1, "bare_change", "f"),
        LabelledPair("c", "d", 0, "paraphrase", "f"),
    )
    first = ([ends, other], [0.8, 0.2])
    second = ([ends, other], [0.75, 0.6])
    assert joint_threshold([first, second]) == 0.75
    assert joint_threshold([first]) == 0.8
