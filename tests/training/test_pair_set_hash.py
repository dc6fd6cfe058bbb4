"""The pair generator reading the data files yields exactly the pairs the Python tables did.

The constants are the SHA-256 hashes of the pair sets that ``generate_pairs`` produced when the
families were still Python tables (``kappa_families_*`` modules), before they became the data
files of ``families/``: one JSON line ``[older, newer, label, kind, family]`` per pair, in
order. Seed 13, 60,000 pairs is the set the shipped kappa-minilm was trained on.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from temporal_rag_training.pairs import generate_pairs

# Hashes of the sets generated from the Python tables, before they became data files.
HASHES = {
    (13, 60_000): "6d02f624374dbe05d88cea495bb20c80a1b4218c0dab27f8f4e36e4fac1f14b9",
    (1, 4_000): "bd09f3c2edde9bdb8ee4512392bfdc57522e3e73892411709b103b34d2986d88",
    (7, 600): "a4ba551eee94b4cec4975d9a72d22888f39ddd59b2d096932fc73b1606fd8c36",
}


def pair_set_hash(seed: int, count: int) -> str:
    """The SHA-256 of the generated set, one JSON line per pair."""
    digest = hashlib.sha256()
    for pair in generate_pairs(seed=seed, count=count):
        record = [pair.older, pair.newer, pair.label, pair.kind, pair.family]
        digest.update(json.dumps(record, ensure_ascii=False).encode() + b"\n")
    return digest.hexdigest()


@pytest.mark.parametrize(("seed", "count"), [(1, 4_000), (7, 600)])
def test_small_sets_are_the_ones_the_python_tables_made(seed: int, count: int) -> None:
    assert pair_set_hash(seed, count) == HASHES[(seed, count)]


@pytest.mark.slow
def test_the_training_set_of_the_shipped_model_is_unchanged() -> None:
    assert pair_set_hash(13, 60_000) == HASHES[(13, 60_000)]
