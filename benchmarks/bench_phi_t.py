"""Phi_T with the key detector at k = 10, 50, 200 (issue 3: under 0.5 ms at k = 50, ~linear).

The candidate sets look like retrieval over an agent's memory: a quarter of the candidates are
prose, the rest keyed facts about a few subjects, each key seen in several versions (so there
is something to remove), in shuffled rank order.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchmarks.reporting import Timed, median_seconds, record_latency
from shared_core.detectors import KeyConflictDetector
from shared_core.facts import FactKey
from shared_core.phi_t import Candidate, temporal_dominance

T0 = datetime(2024, 1, 1, tzinfo=UTC)
SIZES = (10, 50, 200)
SEED = 7


def candidate_set(k: int) -> list[Candidate]:
    """k candidates: 25% prose, the rest ~3 versions per key over k/12 keys, shuffled."""
    rng = random.Random(SEED + k)
    pool = []
    for i in range(k):
        when = T0 + timedelta(days=rng.randrange(1_000))
        if i % 4 == 0:
            pool.append(Candidate(id=f"p{i}", text=f"note {i}", timestamp=when))
            continue
        key = FactKey("default", f"user-{i % max(1, k // 12)}", rng.choice(["lives_in", "role"]))
        obj = f"value-{rng.randrange(4)}"
        pool.append(
            Candidate(
                id=f"k{i}",
                text=f"{key.subject} {key.relation} {obj}",
                timestamp=when,
                key=key,
                object=obj,
                score=rng.random(),
            )
        )
    rng.shuffle(pool)
    return pool


@pytest.mark.parametrize("k", SIZES)
def test_temporal_dominance_with_the_key_detector(
    benchmark: Any, figures: list[str], k: int
) -> None:
    pool = candidate_set(k)
    detector = KeyConflictDetector()
    timed = Timed(temporal_dominance)
    result = benchmark(timed, pool, detector)
    assert len(result.kept) + len(result.shadows) == k
    assert result.shadows  # the workload has stale versions to remove
    record_latency(
        benchmark, figures, timed, f"Phi_T, key detector, k={k}", k=k, removed=len(result.shadows)
    )
    seconds, _ = median_seconds(benchmark, timed)
    benchmark.extra_info["us_per_candidate"] = round(seconds * 1e6 / k, 2)
