"""Conflict detectors (kappa) for Phi_T: by key, by NLI model (kappa-minilm, shipped, or any
local NLI model; :mod:`~shared_core.detectors.framed` scores only same-subject,
same-attribute pairs, with kept readings and verdicts), by LLM judge and by LLM grouping
(one call per retrieved set).

All are light to import: the NLI model's libraries (transformers, torch) load on first use only,
in :mod:`shared_core.detectors.transformers_nli`.
"""

from shared_core.detectors.framed import (
    FramedConflictDetector,
    FramedCounts,
    comparable,
    framed_kappa_detector,
)
from shared_core.detectors.framed_store import InMemoryReadings, InMemoryVerdicts, Reading
from shared_core.detectors.kappa import KappaScorer, kappa_detector
from shared_core.detectors.key import KeyConflictDetector
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.detectors.llm_groups import GROUPS_SCHEMA, GroupDetectorStats, LLMGroupDetector
from shared_core.detectors.nli import NLIConflictDetector, PairCounts, PairScorer
from shared_core.detectors.prefilters import AllPrefilters, CosinePrefilter, same_subject
from shared_core.detectors.transformers_nli import TransformersNLIScorer

__all__ = [
    "GROUPS_SCHEMA",
    "AllPrefilters",
    "CosinePrefilter",
    "FramedConflictDetector",
    "FramedCounts",
    "GroupDetectorStats",
    "InMemoryReadings",
    "InMemoryVerdicts",
    "KappaScorer",
    "KeyConflictDetector",
    "LLMConflictDetector",
    "LLMGroupDetector",
    "NLIConflictDetector",
    "PairCounts",
    "PairScorer",
    "Reading",
    "TransformersNLIScorer",
    "comparable",
    "framed_kappa_detector",
    "kappa_detector",
    "same_subject",
]
