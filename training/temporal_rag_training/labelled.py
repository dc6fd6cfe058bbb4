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
    "bare_change",
    "same_subject_news",
)
POSITIVE_KINDS = frozenset({"explicit_change", "implied_change", "retraction", "bare_change"})
RESTATING_KINDS = frozenset({"paraphrase"})
VERDICTS = ("neither", "ends", "restates")
"""The three answers of the v2 judge, in the order of its logits."""


def verdict_of(kind: str) -> int:
    """The index in :data:`VERDICTS` of a pair kind: ends, restates or neither."""
    if kind in POSITIVE_KINDS:
        return VERDICTS.index("ends")
    if kind in RESTATING_KINDS:
        return VERDICTS.index("restates")
    return VERDICTS.index("neither")


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """One training pair: does ``newer`` make ``older`` no longer true?"""

    older: str
    newer: str
    label: int  # 1: the newer makes the older no longer true; 0: both can hold
    kind: str  # one of KINDS
    family: str  # the attribute family it came from
