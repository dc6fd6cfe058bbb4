"""kappa by natural language inference: a newer chunk that contradicts an older one dominates it.

Works on prose as well as keyed facts. Every (older, newer) pair of dated candidates in the same
namespace (see :func:`~shared_core.phi_t.ordered_pairs`) is scored by a :class:`PairScorer`
with the older text as the premise and the newer text as the hypothesis; a pair whose
probability of contradiction reaches ``threshold`` is a conflict.

**No NLI model is bundled**, and none ships on PyPI. :class:`TransformersNLIScorer` loads any
sequence-classification NLI model (a cross-encoder such as the DeBERTa or RoBERTa models
fine-tuned on MNLI/SNLI) whose ``config.id2label`` has a "contradiction" label, from a local
folder or an already-populated Hugging Face cache; it never downloads (``local_files_only``) and
so never hangs on the network. Put the files on disk first, on a machine with network access::

    hf download cross-encoder/nli-deberta-v3-base --local-dir models/nli-deberta-v3-base

or ``AutoTokenizer``/``AutoModelForSequenceClassification.from_pretrained(name)`` followed by
``save_pretrained(folder)`` on both, then pass the folder. It needs the ``nli`` extra
(``pip install "temporal-rag[nli]"``); transformers and torch are imported on first use only.

Pairs are quadratic in k, and a model call costs far more than the pair enumeration, so a cheap
pre-filter can drop pairs that cannot be about the same thing before they reach the model:
:func:`same_subject` (keyed candidates about different subjects), :class:`CosinePrefilter`
(embedding cosine below a threshold), :class:`AllPrefilters` (both), or any
``Callable[[Candidate, Candidate], bool]``. The detector counts the pairs it considered and
the pairs it sent to the model, so the savings can be reported.
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from shared_core.detectors.prefilters import PairFilter, Prefilter, bind_prefilter
from shared_core.detectors.transformers_nli import TransformersNLIScorer
from shared_core.errors import (
    DetectorError,
    InvalidInputError,
    TemporalRagError,
)
from shared_core.phi_t import Candidate, Conflict, ordered_pairs

__all__ = ["QUERY_TEMPLATE", "NLIConflictDetector", "PairCounts", "PairScorer", "checked_scores"]

#: How ``condition_on_query=True`` rewrites both texts of a pair before scoring: premise and
#: hypothesis each become ``QUERY_TEMPLATE.format(query=query, text=text)``.
QUERY_TEMPLATE = "Regarding: {query}\n{text}"


# ---------------------------------------------------------------- scoring
@runtime_checkable
class PairScorer(Protocol):
    """Scores (premise, hypothesis) pairs: the probability, in [0, 1], that they contradict.

    The detector passes the older text as the premise and the newer text as the hypothesis.
    """

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


# ---------------------------------------------------------------- the detector
@dataclass(frozen=True, slots=True)
class PairCounts:
    """Pairs the detector could have scored (``considered``) and those it sent (``scored``)."""

    considered: int = 0
    scored: int = 0

    @property
    def saved(self) -> int:
        """Pairs the pre-filter kept away from the model."""
        return self.considered - self.scored

    def __add__(self, other: PairCounts) -> PairCounts:
        return PairCounts(self.considered + other.considered, self.scored + other.scored)


class NLIConflictDetector:
    """kappa by NLI: the newer of two dated candidates contradicts the older one.

    ``model_or_scorer`` is a :class:`PairScorer`, or a model folder / cached model name that
    is wrapped in a :class:`TransformersNLIScorer` with its defaults (build the scorer yourself
    for another device, batch size or label name). No model is bundled; see the module doc.

    For each call it takes the (older, newer) pairs of :func:`ordered_pairs` (dated candidates
    only, never across namespaces), drops those the ``prefilter`` rejects, scores the rest in
    one call to the scorer (premise = older text, hypothesis = newer text) and reports every
    pair whose score is at least ``threshold`` (a probability in (0, 1]).

    With ``condition_on_query=True`` and a query, both texts become
    ``query_template.format(query=query, text=text)`` (default :data:`QUERY_TEMPLATE`), so
    the model judges the statements as answers to the question; without a query they are
    scored as they are.

    Counters: ``last_counts`` holds the most recent call's considered and scored pairs;
    ``pairs_considered`` and ``pairs_scored`` are totals since construction (or
    :meth:`reset_counts`).
    """

    def __init__(
        self,
        model_or_scorer: PairScorer | str | Path,
        *,
        threshold: float = 0.5,
        prefilter: Prefilter | PairFilter | None = None,
        condition_on_query: bool = False,
        query_template: str = QUERY_TEMPLATE,
        name: str = "nli",
    ) -> None:
        if isinstance(model_or_scorer, str | Path):
            self.scorer: PairScorer = TransformersNLIScorer(model_or_scorer)
        elif isinstance(model_or_scorer, PairScorer):
            self.scorer = model_or_scorer
        else:
            raise InvalidInputError(
                "model_or_scorer",
                f"is a {type(model_or_scorer).__name__}",
                "pass a model folder, a cached model name or an object with contradiction_scores",
            )
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0.0 < threshold <= 1.0
        ):
            raise InvalidInputError("threshold", f"is {threshold!r}", "pass a number in (0, 1]")
        if not (prefilter is None or callable(prefilter) or isinstance(prefilter, Prefilter)):
            raise InvalidInputError(
                "prefilter", f"is a {type(prefilter).__name__}", "pass a pair predicate or None"
            )
        _check_template(query_template)
        if not isinstance(name, str) or not name:
            raise InvalidInputError("name", f"is {name!r}", "pass a non-empty label")
        self.threshold = float(threshold)
        self.prefilter = prefilter
        self.condition_on_query = condition_on_query
        self.query_template = query_template
        self.name = name
        self._counts_lock = threading.Lock()
        self._total = PairCounts()
        self.last_counts = PairCounts()

    def __repr__(self) -> str:
        return f"NLIConflictDetector({self.scorer!r}, threshold={self.threshold})"

    @property
    def pairs_considered(self) -> int:
        """Pairs enumerated (before the pre-filter), summed over calls."""
        return self._total.considered

    @property
    def pairs_scored(self) -> int:
        """Pairs sent to the scorer (after the pre-filter), summed over calls."""
        return self._total.scored

    def reset_counts(self) -> None:
        with self._counts_lock:
            self._total = PairCounts()
            self.last_counts = PairCounts()

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        pool = tuple(candidates)
        considered = ordered_pairs(pool)
        if self.prefilter is None or not considered:
            pairs = considered
        else:
            keep = bind_prefilter(self.prefilter, pool)
            pairs = [(i, j) for i, j in considered if keep(pool[i], pool[j])]
        counts = PairCounts(len(considered), len(pairs))
        with self._counts_lock:
            self._total = self._total + counts
            self.last_counts = counts
        if not pairs:
            return []
        texts = [self._text(c, query) for c in pool]
        scores = self._score([(texts[i], texts[j]) for i, j in pairs])
        return [
            Conflict(older, newer, self.name, score)
            for (older, newer), score in zip(pairs, scores, strict=True)
            if score >= self.threshold
        ]

    def _text(self, candidate: Candidate, query: str | None) -> str:
        if self.condition_on_query and query:
            return self.query_template.format(query=query, text=candidate.text)
        return candidate.text

    def _score(self, pairs: list[tuple[str, str]]) -> list[float]:
        return checked_scores(self.scorer, pairs, name=self.name)


def checked_scores(scorer: PairScorer, pairs: list[tuple[str, str]], *, name: str) -> list[float]:
    """``scorer``'s scores for ``pairs``, trusting nothing it returns: one number in [0, 1] per
    pair, or a :class:`DetectorError` naming ``name`` (its own failures are translated too)."""
    try:
        scores: list[object] = list(scorer.contradiction_scores(pairs))  # e.g. None: not a list
    except TemporalRagError:
        raise
    except Exception as error:
        raise DetectorError(f"{name}: the scorer {scorer!r} failed: {error}") from error
    if len(scores) != len(pairs):
        raise DetectorError(
            f"{name}: the scorer returned {len(scores)} scores for {len(pairs)} pairs"
        )
    checked = []
    for score in scores:
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise DetectorError(f"{name}: the scorer returned a non-number {score!r}")
        value = float(score)  # numpy or torch scalars become floats
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise DetectorError(f"{name}: the scorer returned {score!r}, not in [0, 1]")
        checked.append(value)
    return checked


def _check_template(template: object) -> None:
    try:
        ok = isinstance(template, str) and template.format(query="\0q", text="\0t").count("\0") == 2
    except (KeyError, IndexError, ValueError):
        ok = False
    if not ok:
        raise InvalidInputError(
            "query_template",
            f"is {template!r}",
            "use a format string with exactly one {query} and one {text} field",
        )
