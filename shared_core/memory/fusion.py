"""Reciprocal-rank fusion of several ranked lists (multi-query expansion, GC-Mem)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

RRF_K = 60
"""The usual damping constant of reciprocal-rank fusion (Cormack et al., 2009)."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[T]], *, k: int = RRF_K) -> list[T]:
    """Items of every ranking ordered by sum(1 / (k + rank)); ties keep first-seen order.

    An item repeated within one ranking counts at its best rank only. One ranking comes back
    unchanged (minus repeats).
    """
    scores: dict[T, float] = {}
    for ranking in rankings:
        seen: set[T] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: index for index, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))
