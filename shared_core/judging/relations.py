"""Relation names made canonical, deterministically: the rule that keeps one attribute under one
key when a model rewords it ("lives in" / "resides in").

A proposed relation is first normalised (:func:`normal_relation`: the key form, with a leading
auxiliary such as "is" or "has been" dropped), then mapped to the nearest relation the same
subject already has (in the ledger, or proposed earlier in the batch) when the cosine of their
names' embeddings reaches the threshold; else it stays a relation of its own.

:data:`RELATION_THRESHOLD` was chosen on dev data, the 57 relation pairs of
``tests/data/relation_paraphrases.json`` (27 rewordings of one attribute, 30 pairs of distinct
attributes) embedded with the default embedder (all-MiniLM-L6-v2): it is the lowest cosine at
which no pair of distinct attributes merges (the closest is "works at" / "worked at", 0.879). It
merges 3 of the 27 rewordings ("favourite colour" / "favorite color", "lives in" / "living in");
the rest is left to the model, which is shown the known keys and reuses them by number. A lower
threshold would merge attributes, and a merged attribute lets one fact close another that still
holds, which this library prefers never to do. Another embedder needs its own threshold
(``LLMExtractor(relation_threshold=...)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from shared_core.facts import key_relation
from shared_core.index.base import Vector

RELATION_THRESHOLD = 0.88
"""The cosine at or above which a proposed relation joins the subject's nearest one (above)."""

_AUXILIARIES = (
    "is_",
    "are_",
    "am_",
    "was_",
    "were_",
    "has_been_",
    "have_been_",
    "is_currently_",
    "currently_",
    "now_",
)


def normal_relation(relation: object, field: str = "relation") -> str:
    """The key form of ``relation`` without a leading auxiliary ("is allergic to" ->
    ``allergic_to``); InvalidInputError (naming ``field``) if it is not a non-empty str."""
    keyed = key_relation(relation, field)
    changed = True
    while changed:
        changed = False
        for prefix in _AUXILIARIES:
            if keyed.startswith(prefix) and len(keyed) > len(prefix):
                keyed, changed = keyed[len(prefix) :], True
    return keyed


class RelationNames:
    """Canonicalises relations against the relations each subject already has, embedding each
    name once (``embed`` maps texts to vectors; None: exact names only)."""

    def __init__(
        self,
        embed: Callable[[Sequence[str]], list[Vector]] | None,
        *,
        threshold: float = RELATION_THRESHOLD,
    ) -> None:
        self._embed = embed
        self._threshold = threshold
        self._vectors: dict[str, Vector] = {}

    def canonical(self, relation: str, existing: Sequence[str]) -> str:
        """``relation`` (normalised) if it exists or nothing existing is near enough; else the
        existing relation of the highest cosine at or above the threshold (ties: first given)."""
        if relation in existing or not existing or self._embed is None:
            return relation
        self._embedded([relation, *existing])
        best, best_score = relation, -math.inf
        for other in existing:
            score = _cosine(self._vectors[relation], self._vectors[other])
            if score >= self._threshold and score > best_score:
                best, best_score = other, score
        return best

    def _embedded(self, relations: Sequence[str]) -> None:
        missing = [r for r in dict.fromkeys(relations) if r not in self._vectors]
        if missing and self._embed is not None:
            vectors = self._embed([r.replace("_", " ") for r in missing])
            self._vectors.update(zip(missing, vectors, strict=True))


def _cosine(a: Vector, b: Vector) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


__all__ = ["RELATION_THRESHOLD", "RelationNames", "normal_relation"]
