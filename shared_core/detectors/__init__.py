"""Conflict detectors (kappa) for Phi_T: by key, by NLI model (kappa-minilm, shipped, or any
local NLI model) and by LLM judge.

All are light to import: the NLI model's libraries (transformers, torch) load on first use only,
in :mod:`shared_core.detectors.transformers_nli`.
"""

from shared_core.detectors.kappa import KappaScorer, kappa_detector
from shared_core.detectors.key import KeyConflictDetector
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.detectors.nli import NLIConflictDetector, PairCounts, PairScorer
from shared_core.detectors.prefilters import AllPrefilters, CosinePrefilter, same_subject
from shared_core.detectors.transformers_nli import TransformersNLIScorer

__all__ = [
    "AllPrefilters",
    "CosinePrefilter",
    "KappaScorer",
    "KeyConflictDetector",
    "LLMConflictDetector",
    "NLIConflictDetector",
    "PairCounts",
    "PairScorer",
    "TransformersNLIScorer",
    "kappa_detector",
    "same_subject",
]
