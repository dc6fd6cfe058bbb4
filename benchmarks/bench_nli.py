"""The NLI detector's figures (issue 3): pairs per second through the real transformers code path,
and how many pairs the pre-filters keep away from the model on a realistic candidate set.

No NLI model exists offline here, so the model is a tiny randomly initialised BERT (1 layer,
hidden size 32) built and saved in pytest's temporary folder, loaded back by path like a real
one. Its pairs/s measure the code path's overhead (tokenising, padding, batching, softmax), not
what a real cross-encoder costs: a base-size model is hundreds of times heavier per pair.

The candidate set is 20 chunks about 4 subjects (Maria's home, Bob's employer, Ana's car, a
project meeting): 7 keyed facts and 13 prose notes, with 7 known (older, newer) contradictions.
The cosine pre-filter runs on a lexical stand-in embedding (hashed words and character
trigrams, pure Python), since no sentence embedder is part of this benchmark; a real embedder
gives other numbers, so the savings are reported per cosine threshold, together with how many
of the 7 true contradictions still reach the model.

``make bench-nli`` prints pytest-benchmark's table and one summary line per figure; under
``pytest --benchmark-disable`` (``make test``) every workload runs once as a smoke test.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import torch

from benchmarks.reporting import Timed, median_seconds
from shared_core.detectors import (
    AllPrefilters,
    CosinePrefilter,
    NLIConflictDetector,
    TransformersNLIScorer,
    same_subject,
)
from shared_core.detectors.prefilters import PairFilter, Prefilter
from shared_core.facts import FactKey
from shared_core.phi_t import Candidate, ordered_pairs
from tests.tiny_nli import NLI_LABELS, build_tiny_model

T0 = datetime(2024, 1, 1, tzinfo=UTC)
BATCH_SIZES = (1, 16, 64)
COSINE_THRESHOLDS = (0.1, 0.2, 0.3)


# ---------------------------------------------------------------- the tiny model
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [c.text for c in CANDIDATES]
    return build_tiny_model(tmp_path_factory.mktemp("tiny-nli"), NLI_LABELS, texts)


# ---------------------------------------------------------------- the candidate set
def _keyed(id: str, subject: str, relation: str, obj: str, text: str, day: int) -> Candidate:
    return Candidate(
        id=id,
        text=text,
        timestamp=T0 + timedelta(days=day),
        key=FactKey("default", subject, relation),
        object=obj,
    )


def _prose(id: str, text: str, day: int) -> Candidate:
    return Candidate(id=id, text=text, timestamp=T0 + timedelta(days=day))


CANDIDATES = [
    _keyed("m1", "maria", "lives_in", "Berlin", "Maria lives in Berlin.", 0),
    _prose("b-team", "Bob's team at work ships a release every Friday.", 60),
    _keyed("m2", "maria", "lives_in", "Paris", "Maria lives in Paris now.", 100),
    _prose("meet-1", "The weekly project meeting is on Monday at 10.", 30),
    _keyed("b1", "bob", "works_at", "Acme", "Bob works at Acme.", 10),
    _prose("m-cycle", "Maria enjoys cycling along the river.", 50),
    _keyed("a1", "ana", "drives", "Fiat", "Ana drives a Fiat.", 20),
    _prose("meet-room", "The project meeting room has a projector.", 40),
    _prose("a-tyres", "Ana's car needs new tyres.", 70),
    _prose("notes", "The meeting notes are shared in the team folder.", 120),
    _prose("m-sister", "Maria's sister visited her last spring.", 150),
    _keyed("b2", "bob", "works_at", "Globex", "Bob works at Globex.", 200),
    _prose("b-commute", "Bob said the commute to work takes an hour.", 210),
    _prose("meet-2", "The project meeting moved to Thursday at 14.", 220),
    _prose("b-parking", "Bob got a parking spot near the office.", 230),
    _keyed("a2", "ana", "drives", "Tesla", "Ana drives a Tesla.", 250),
    _prose("a-sold", "Ana sold her old Fiat to a neighbour.", 260),
    _prose("a-charge", "Ana charges the car at home overnight.", 270),
    _keyed("m3", "maria", "lives_in", "Lisbon", "Maria lives in Lisbon.", 300),
    _prose("m-flat", "Maria's flat in Lisbon has a balcony facing south.", 310),
]
TRUE_CONFLICTS = {  # (older id, newer id): the newer makes the older no longer true
    ("m1", "m2"),
    ("m1", "m3"),
    ("m2", "m3"),
    ("b1", "b2"),
    ("a1", "a2"),
    ("a1", "a-sold"),
    ("meet-1", "meet-2"),
}


def lexical_embed(texts: Sequence[str]) -> list[list[float]]:
    """A stand-in for a sentence embedder: hashed lower-cased words (weight 2) and character
    trigrams (weight 1) in 512 dimensions. Deterministic, pure Python, no model."""
    vectors = []
    for text in texts:
        vector = [0.0] * 512
        words = re.findall(r"\w+", text.lower())
        features = [(w, 2.0) for w in words if len(w) > 2]
        for word in words:
            padded = f" {word} "
            features += [(padded[i : i + 3], 1.0) for i in range(len(padded) - 2)]
        for feature, weight in features:
            bucket = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=4).digest())
            vector[bucket % 512] += weight
        vectors.append(vector)
    return vectors


PREFILTERS: dict[str, Prefilter | PairFilter | None] = {
    "none": None,
    "same_subject": same_subject,
    **{f"cosine>={t}": CosinePrefilter(lexical_embed, t) for t in COSINE_THRESHOLDS},
    **{
        f"same_subject+cosine>={t}": AllPrefilters(same_subject, CosinePrefilter(lexical_embed, t))
        for t in COSINE_THRESHOLDS
    },
}


def _pairs_reaching_the_model(prefilter: Prefilter | PairFilter | None) -> set[tuple[str, str]]:
    recorded: list[tuple[str, str]] = []
    by_text = {c.text: c.id for c in CANDIDATES}

    class Recorder:
        def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            recorded.extend((by_text[p], by_text[h]) for p, h in pairs)
            return [0.0] * len(pairs)

    NLIConflictDetector(Recorder(), prefilter=prefilter).find_conflicts(CANDIDATES)
    return set(recorded)


def test_the_candidate_set_is_what_the_docstring_says() -> None:
    assert len(CANDIDATES) == 20
    assert sum(c.key is not None for c in CANDIDATES) == 7
    assert len({c.key.subject for c in CANDIDATES if c.key}) == 3  # + the prose-only meeting
    assert _pairs_reaching_the_model(None) >= TRUE_CONFLICTS
    assert len(ordered_pairs(CANDIDATES)) == 190  # all timestamps distinct: 20 * 19 / 2


# ---------------------------------------------------------------- 1. pairs per second
@pytest.mark.benchmark(group="NLI scorer: 190 pairs, tiny BERT on CPU")
@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_pairs_per_second_tiny_model(
    benchmark: Any, figures: list[str], tiny_model: Path, batch_size: int
) -> None:
    index = ordered_pairs(CANDIDATES)
    pairs = [(CANDIDATES[i].text, CANDIDATES[j].text) for i, j in index]
    scorer = TransformersNLIScorer(tiny_model, batch_size=batch_size)
    scorer.load()  # loading is not what is measured
    timed = Timed(scorer.contradiction_scores)
    scores = benchmark(timed, pairs)
    assert len(scores) == len(pairs)
    assert all(0.0 <= s <= 1.0 for s in scores)
    seconds, how = median_seconds(benchmark, timed)
    rate = len(pairs) / seconds
    benchmark.extra_info.update(
        pairs=len(pairs),
        batch_size=batch_size,
        seconds=seconds,
        pairs_per_s=round(rate),
        torch_threads=torch.get_num_threads(),
    )
    figures.append(
        f"  tiny-BERT NLI scorer, batch_size={batch_size}: {len(pairs)} pairs in "
        f"{seconds * 1e3:.1f} ms = {rate:,.0f} pairs/s ({how}; {torch.get_num_threads()} threads)"
    )


# ---------------------------------------------------------------- 2. pre-filter savings
@pytest.mark.benchmark(group="NLI detector on 20 candidates: pre-filters")
@pytest.mark.parametrize("mode", list(PREFILTERS))
def test_prefilter_savings(benchmark: Any, figures: list[str], tiny_model: Path, mode: str) -> None:
    prefilter = PREFILTERS[mode]
    scorer = TransformersNLIScorer(tiny_model)
    scorer.load()
    detector = NLIConflictDetector(scorer, threshold=0.5, prefilter=prefilter)
    timed = Timed(detector.find_conflicts)
    benchmark(timed, CANDIDATES)
    counts = detector.last_counts
    reached = _pairs_reaching_the_model(prefilter)
    assert len(reached) == counts.scored
    true_kept = len(TRUE_CONFLICTS & reached)
    seconds, how = median_seconds(benchmark, timed)
    benchmark.extra_info.update(
        prefilter=mode,
        considered=counts.considered,
        scored=counts.scored,
        saved=counts.saved,
        saved_share=round(counts.saved / counts.considered, 3),
        true_conflicts_kept=true_kept,
        true_conflicts=len(TRUE_CONFLICTS),
        median_ms_per_call=round(seconds * 1e3, 2),
    )
    figures.append(
        f"  pre-filter {mode:>24}: {counts.considered} pairs considered, {counts.scored} scored "
        f"({counts.saved / counts.considered:.0%} saved), {true_kept}/{len(TRUE_CONFLICTS)} "
        f"true contradictions still scored; {seconds * 1e3:.1f} ms per call ({how})"
    )


def test_lexical_embedding_is_a_unit_free_cosine_stand_in() -> None:
    [a, b, c] = lexical_embed(["Maria lives in Berlin.", "Maria lives in Lisbon.", "Sky."])

    def cosine(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True)) / math.hypot(*x) / math.hypot(*y)

    assert cosine(a, b) > cosine(a, c)
