"""Labelled (older, newer) statement pairs for training kappa, the supersession cross-encoder.

Each :class:`LabelledPair` holds a statement said first (``older``), one said later (``newer``)
and ``label`` 1 when, once the newer is said, the older is no longer true (changed, implied to
have changed, retracted), else 0 (a paraphrase, another attribute, one more value of a
multi-valued attribute, another event, another person, something unrelated). The texts come from
the attribute families and pair tables of the data files in ``families/`` (loaded on first
use): people, software, organisations, multi-valued attributes and events, with source
prefixes, chatty lowercase, asides and timestamps as noise. Deterministic: the same ``seed``
gives the same pairs. Standard library only.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable, Iterable, Mapping

from shared_core.errors import InvalidInputError
from temporal_rag_training.builder import Builder
from temporal_rag_training.families import families
from temporal_rag_training.labelled import KINDS, POSITIVE_KINDS, LabelledPair
from temporal_rag_training.tables import table_names

__all__ = [
    "DEFAULT_MIX",
    "KINDS",
    "MAX_COUNT",
    "POSITIVE_KINDS",
    "V2_MIX",
    "LabelledPair",
    "family_names",
    "generate_pairs",
    "quotas",
    "write_jsonl",
]

DEFAULT_MIX: Mapping[str, float] = {
    "explicit_change": 0.18,
    "implied_change": 0.20,
    "retraction": 0.10,
    "paraphrase": 0.14,
    "compatible": 0.14,
    "multi_valued": 0.08,
    "separate_events": 0.06,
    "other_person": 0.06,
    "unrelated": 0.04,
}
V2_MIX: Mapping[str, float] = {
    "explicit_change": 0.11,
    "implied_change": 0.10,
    "retraction": 0.07,
    "bare_change": 0.12,
    "paraphrase": 0.18,
    "compatible": 0.12,
    "same_subject_news": 0.10,
    "multi_valued": 0.06,
    "separate_events": 0.05,
    "other_person": 0.06,
    "unrelated": 0.03,
}
"""The mix of kappa-minilm-v2: plain value changes, restatements and news about the same
subject (the three things real memories are mostly made of) get larger shares."""
MAX_COUNT = 5_000_000


def family_names() -> tuple[str, ...]:
    """The family name of every pair source: the attribute families, then the pair tables."""
    return tuple(family.name for family in families()) + table_names()


def _check_mix(mix: Mapping[str, float] | None) -> dict[str, float]:
    if mix is None:
        return dict(DEFAULT_MIX)
    if not isinstance(mix, Mapping):
        raise InvalidInputError(
            "mix", f"is a {type(mix).__name__}", "pass a mapping of kind to fraction"
        )
    for kind, fraction in mix.items():
        if kind not in KINDS:
            raise InvalidInputError("mix", f"has an unknown kind {kind!r}", f"use kinds of {KINDS}")
        if (
            isinstance(fraction, bool)
            or not isinstance(fraction, int | float)
            or not math.isfinite(fraction)
            or fraction < 0
        ):
            raise InvalidInputError(
                "mix", f"gives {kind!r} the fraction {fraction!r}", "use finite numbers >= 0"
            )
    total = float(sum(mix.values()))
    if total <= 0:
        raise InvalidInputError("mix", "has no positive fraction", "give at least one kind > 0")
    return {kind: float(mix.get(kind, 0.0)) / total for kind in KINDS}


def quotas(count: int, mix: Mapping[str, float]) -> dict[str, int]:
    """How many pairs of each kind: the fractions of ``count``, largest remainders rounded up."""
    exact = {kind: count * mix.get(kind, 0.0) for kind in KINDS}
    out = {kind: math.floor(value) for kind, value in exact.items()}
    rest = count - sum(out.values())
    order = sorted(KINDS, key=lambda kind: (-(exact[kind] - out[kind]), KINDS.index(kind)))
    for kind in order[:rest]:
        out[kind] += 1
    return out


def generate_pairs(
    *,
    seed: int,
    count: int,
    mix: Mapping[str, float] | None = None,
    phrasing_share: float = 0.0,
) -> list[LabelledPair]:
    """``count`` distinct labelled pairs, kinds in the proportions of ``mix`` (default
    :data:`DEFAULT_MIX`; normalised to sum 1), shuffled; the same ``seed`` gives the same list.
    ``phrasing_share`` (in [0, 1]) of the plain statements are said with the families' extra
    phrasings (:mod:`temporal_rag_training.phrasings`), and half that share of the news beside
    a value is news that states no attribute; 0 gives the pairs kappa-minilm-v3 trained on."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError("seed", f"is {seed!r}", "pass an int")
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
        raise InvalidInputError("count", f"is {count!r}", f"pass an int from 0 to {MAX_COUNT}")
    if (
        isinstance(phrasing_share, bool)
        or not isinstance(phrasing_share, int | float)
        or not 0 <= phrasing_share <= 1
    ):
        raise InvalidInputError(
            "phrasing_share", f"is {phrasing_share!r}", "pass a number from 0 to 1"
        )
    fractions = _check_mix(mix)
    rng = random.Random(seed)
    builder = Builder(rng, phrasing_share=float(phrasing_share))
    seen: set[tuple[str, str]] = set()
    pairs: list[LabelledPair] = []
    for kind, wanted in quotas(count, fractions).items():
        make: Callable[[], LabelledPair | None] = getattr(builder, kind)
        made = failures = 0
        while made < wanted:
            pair = make()
            if pair is None or (pair.older, pair.newer) in seen:
                failures += 1
                if failures > 50 * wanted + 5000:
                    raise InvalidInputError(
                        "count",
                        f"only {made} distinct {kind} pairs could be made",
                        "ask for fewer pairs or give this kind a smaller share of the mix",
                    )
                continue
            seen.add((pair.older, pair.newer))
            pairs.append(pair)
            made += 1
    rng.shuffle(pairs)
    return pairs


def write_jsonl(pairs: Iterable[LabelledPair], path: str | os.PathLike[str]) -> int:
    """Write one JSON object per pair ({"older", "newer", "label", "kind", "family"}) to
    ``path``; returns the number written."""
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index, pair in enumerate(pairs):
            if not isinstance(pair, LabelledPair):
                raise InvalidInputError(
                    f"pairs[{index}]", f"is a {type(pair).__name__}", "pass LabelledPair objects"
                )
            record = {
                "older": pair.older,
                "newer": pair.newer,
                "label": pair.label,
                "kind": pair.kind,
                "family": pair.family,
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written
