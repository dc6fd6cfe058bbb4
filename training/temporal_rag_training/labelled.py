"""The labelled (older, newer) statement pair the generator makes, and the kinds of pairs."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = (
    "explicit_change",
    "implied_change",
    "retraction",
    "paraphrase",
    "compatible",
    "multi_valued",
    "separate_events",
    "other_person",
    "unrelated",
)
POSITIVE_KINDS = frozenset(KINDS[:3])


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """One training pair: does ``newer`` make ``older`` no longer true?"""

    older: str
    newer: str
    label: int  # 1: the newer makes the older no longer true; 0: both can hold
    kind: str  # one of KINDS
    family: str  # the attribute family it came from
