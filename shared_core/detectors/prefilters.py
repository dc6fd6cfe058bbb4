"""Cheap pre-filters for pairwise detectors: drop pairs that cannot be about the same thing.

A pair that a pre-filter rejects never reaches the model. :func:`same_subject` rejects keyed
candidates about different subjects, :class:`CosinePrefilter` rejects pairs whose embeddings
are not similar enough, :class:`AllPrefilters` requires every filter it is given; any
``Callable[[Candidate, Candidate], bool]`` works too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from shared_core.errors import DetectorError, InvalidInputError
from shared_core.phi_t import Candidate

PairFilter = Callable[[Candidate, Candidate], bool]
Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


@runtime_checkable
class Prefilter(Protocol):
    """A pre-filter that looks at the whole candidate set once (e.g. to embed each text once)
    and returns the pair predicate for that set."""

    def for_candidates(self, candidates: Sequence[Candidate]) -> PairFilter: ...


def same_subject(older: Candidate, newer: Candidate) -> bool:
    """Keyed candidates must share the subject; a pair with any unkeyed side passes."""
    if older.key is None or newer.key is None:
        return True
    return older.key.subject == newer.key.subject


class CosinePrefilter:
    """Only pairs whose embedding cosine is at least ``threshold`` reach the model.

    ``embed`` is called once per detector call, on the dated candidates' texts; the cosine is
    computed in plain Python.

    Args:
        embed: maps a list of texts to one vector each (any embedding model: a
            sentence-transformers ``encode``, a LangChain ``embed_documents``, ...).
        threshold: the lowest cosine, in [-1, 1], of a pair sent to the model.

    Raises:
        InvalidInputError: ``embed`` is not callable or ``threshold`` is not in [-1, 1].
        DetectorError: at a detector call, ``embed`` failed or did not return one vector of
            one size per text.
    """

    def __init__(self, embed: Embed, threshold: float) -> None:
        if not callable(embed):
            raise InvalidInputError("embed", "is not callable", "pass texts -> vectors")
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not -1.0 <= threshold <= 1.0
        ):
            raise InvalidInputError("threshold", f"is {threshold!r}", "pass a cosine in [-1, 1]")
        self.embed = embed
        self.threshold = float(threshold)

    def for_candidates(self, candidates: Sequence[Candidate]) -> PairFilter:
        dated = [c for c in candidates if c.timestamp is not None]  # only these form pairs
        if len(dated) < 2:
            return lambda older, newer: True  # no pair can reach the model anyway
        try:
            vectors = [_unit(vector) for vector in self.embed([c.text for c in dated])]
        except Exception as error:
            raise DetectorError(f"the pre-filter's embed call failed: {error}") from error
        if len(vectors) != len(dated) or len({len(v) for v in vectors}) != 1:
            raise DetectorError(
                f"the pre-filter's embed returned {len(vectors)} vectors of sizes "
                f"{sorted({len(v) for v in vectors})} for {len(dated)} texts; expected one "
                "vector per text, all of one size"
            )
        by_candidate = {id(c): v for c, v in zip(dated, vectors, strict=True)}
        threshold = self.threshold

        def similar(older: Candidate, newer: Candidate) -> bool:
            first, second = by_candidate[id(older)], by_candidate[id(newer)]
            return sum(a * b for a, b in zip(first, second, strict=True)) >= threshold

        return similar


def _unit(vector: Sequence[float]) -> list[float]:
    values = [float(x) for x in vector]
    norm = math.sqrt(sum(x * x for x in values))
    return [x / norm for x in values] if norm > 0 and math.isfinite(norm) else [0.0] * len(values)


class AllPrefilters:
    """A pair reaches the model only if every given pre-filter lets it through.

    Args:
        *prefilters: :class:`Prefilter` objects (such as :class:`CosinePrefilter`) or pair
            predicates ``(older, newer) -> bool`` (such as ``same_subject``).

    Raises:
        InvalidInputError: no pre-filter was given.
    """

    def __init__(self, *prefilters: Prefilter | PairFilter) -> None:
        if not prefilters:
            raise InvalidInputError("prefilters", "is empty", "pass at least one pre-filter")
        self.prefilters = prefilters

    def for_candidates(self, candidates: Sequence[Candidate]) -> PairFilter:
        bound = [bind_prefilter(p, candidates) for p in self.prefilters]
        return lambda older, newer: all(keep(older, newer) for keep in bound)


def bind_prefilter(
    prefilter: Prefilter | PairFilter, candidates: Sequence[Candidate]
) -> PairFilter:
    """The pair predicate of ``prefilter`` for this candidate set."""
    if isinstance(prefilter, Prefilter):
        return prefilter.for_candidates(candidates)
    return prefilter
