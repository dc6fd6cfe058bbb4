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
REAL_KINDS = ("revision_change", "supported_claim", "unsupported_claim", "same_page")
"""The kinds of the pairs read from VitaminC's real revisions (see
:mod:`temporal_rag_training.vitaminc`); the generator makes none of them."""
ALL_KINDS = KINDS + REAL_KINDS
POSITIVE_KINDS = frozenset(
    {"explicit_change", "implied_change", "retraction", "bare_change", "revision_change"}
)
RESTATING_KINDS = frozenset({"paraphrase", "supported_claim"})
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
    kind: str  # one of ALL_KINDS
    family: str  # the attribute family it came from
