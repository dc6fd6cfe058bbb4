"""The conflict detectors' own precision and recall against the generator's ground truth.

GC-Mem shows Phi_T is only as good as its detector (recall below ~50% makes it useless), so
the bench measures the detector apart from retrieval:

- the key detector, judging every (older, newer) pair of chunks inside each entity's bag
  (bag-of-facts mode: every true conflict of the dataset is examined), and every pair inside
  each of plain top-k's retrieved sets (what Phi_T sees in practice);
- the LLM judge (``--judge``), in its set mode on a seeded sample of entity bags.

Scores come from :func:`temporal_rag_bench.metrics.detector_scores` (pairs matched in either
orientation: ordering by time is Phi_T's job).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from shared_core.detectors.key import KeyConflictDetector
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.phi_t import Candidate, ConflictDetector
from temporal_rag_bench.methods_temporal import candidate
from temporal_rag_bench.metrics import detector_scores, entity_bags
from temporal_rag_bench.model import Chunk, Dataset, Retrieved

Pair = tuple[str, str]


def ordered_pairs(chunks: Sequence[Chunk]) -> list[tuple[Chunk, Chunk]]:
    """Every (older, newer) pair of chunks with strictly increasing timestamps."""
    return [(a, b) for a in chunks for b in chunks if a.timestamp < b.timestamp]


def judged_pairwise(detector: ConflictDetector, pairs: Iterable[tuple[Chunk, Chunk]]) -> set[Pair]:
    """The pairs the detector calls conflicts when shown the two chunks alone."""
    found: set[Pair] = set()
    cache: dict[str, Candidate] = {}
    for older, newer in pairs:
        shown = [cache.setdefault(c.id, candidate(c)) for c in (older, newer)]
        if detector.find_conflicts(shown):
            found.add((older.id, newer.id))
    return found


def key_detector_report(
    dataset: Dataset, plain_answers: Mapping[str, Retrieved] | None = None
) -> dict[str, Any]:
    """The key detector on the bags and, when given, on plain top-k's retrieved sets."""
    detector = KeyConflictDetector(dict(dataset.cardinalities))
    started = time.perf_counter()
    bag_pairs = [p for bag in entity_bags(dataset).values() for p in ordered_pairs(bag)]
    reported = judged_pairwise(detector, bag_pairs)
    report: dict[str, Any] = {
        "detector": "key",
        "bag_of_facts": detector_scores(dataset, reported).to_dict(),
        "pairs_judged": len(bag_pairs),
    }
    if plain_answers:
        sets = [ordered_pairs(r.chunks) for r in plain_answers.values()]
        examined = [(a.id, b.id) for pairs in sets for a, b in pairs]
        found = judged_pairwise(detector, (p for pairs in sets for p in pairs))
        report["retrieved_top_k"] = detector_scores(dataset, found, examined=examined).to_dict()
    report["seconds"] = time.perf_counter() - started
    return report


def judge_report(
    dataset: Dataset, judge: Callable[[str], str], *, bags: int, seed: int
) -> dict[str, Any]:
    """The LLM judge (set mode) on a seeded sample of entity bags: precision and recall over
    the pairs inside those bags, seconds per bag and the judge's call counters."""
    detector = LLMConflictDetector(judge, on_error="skip", name="llm-judge")
    everything = entity_bags(dataset)
    names = sorted(everything)
    chosen = random.Random(seed).sample(names, min(bags, len(names)))
    reported: set[Pair] = set()
    examined: list[Pair] = []
    started = time.perf_counter()
    for name in chosen:
        bag = everything[name]
        shown = [candidate(c) for c in bag]
        for conflict in detector.find_conflicts(shown):
            reported.add((bag[conflict.older].id, bag[conflict.newer].id))
        examined.extend((a.id, b.id) for a, b in ordered_pairs(bag))
    seconds = time.perf_counter() - started
    scores = detector_scores(dataset, reported, examined=examined)
    stats = detector.stats
    return {
        "detector": "llm-judge",
        "bags": len(chosen),
        "scores": scores.to_dict(),
        "seconds": seconds,
        "seconds_per_bag": seconds / len(chosen) if chosen else 0.0,
        "calls": stats.calls,
        "errors": stats.errors,
        "malformed": stats.malformed,
    }
