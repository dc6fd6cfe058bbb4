"""Conflict detectors (kappa) for Phi_T: by key (here), NLI and LLM judges (heavy, lazy)."""

from shared_core.detectors.key import KeyConflictDetector

__all__ = ["KeyConflictDetector"]
