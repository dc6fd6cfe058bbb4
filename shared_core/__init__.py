"""temporal-rag's runtime: facts, the bi-temporal ledger, the supersession rule, Phi_T and its
conflict detectors, and TemporalMemory (the ledger, a vector index and an embedder behind one
object). The contract it follows is docs/design.md in the repository.

Nothing here imports LangChain or LlamaIndex (the adapters do), nor the benchmark or the training
pipeline (distributions of their own); heavy libraries are imported lazily by the modules that
need them.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

from shared_core.clock import Clock, ManualClock, SystemClock
from shared_core.detectors.frames import Frame, FrameHead, FrameProfile
from shared_core.detectors.kappa import KappaScorer, Verdict, kappa_detector
from shared_core.detectors.key import KeyConflictDetector
from shared_core.dominance import (
    AnyConflict,
    Candidate,
    Conflict,
    ConflictDetector,
    DominanceResult,
    NeverConflicts,
    Shadow,
    shadows_by_survivor,
    temporal_dominance,
)
from shared_core.embedders import CallableEmbedder, Embedder, HashingEmbedder, MiniLMEmbedder
from shared_core.extractors import (
    ExtractedFact,
    Extraction,
    Extractor,
    LLMExtractor,
    MetadataExtractor,
    NoExtraction,
)
from shared_core.facts import Cardinality, Decision, Fact, FactKey, FactStatus, Reason, ReasonKind
from shared_core.index import ChromaIndex, IndexMatch, NumpyIndex, VectorIndex
from shared_core.ledger import (
    Explanation,
    InMemoryLedger,
    Ledger,
    LedgerStore,
    PostgresLedger,
    ProseSupersession,
    SQLiteLedger,
    StoredStatement,
    WriteResult,
)
from shared_core.memory import (
    Added,
    ClaimJudge,
    Hit,
    MemoryConfig,
    ProseJudge,
    ReconcileReport,
    SearchOptions,
    TemporalMemory,
    claim_judge,
    kappa_judge,
)
from shared_core.recency import RecencyBuffer, merge_candidates

try:
    __version__ = _distribution_version("temporal-rag")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "Added",
    "AnyConflict",
    "CallableEmbedder",
    "Candidate",
    "Cardinality",
    "ChromaIndex",
    "ClaimJudge",
    "Clock",
    "Conflict",
    "ConflictDetector",
    "Decision",
    "DominanceResult",
    "Embedder",
    "Explanation",
    "ExtractedFact",
    "Extraction",
    "Extractor",
    "Fact",
    "FactKey",
    "FactStatus",
    "Frame",
    "FrameHead",
    "FrameProfile",
    "HashingEmbedder",
    "Hit",
    "InMemoryLedger",
    "IndexMatch",
    "KappaScorer",
    "KeyConflictDetector",
    "LLMExtractor",
    "Ledger",
    "LedgerStore",
    "ManualClock",
    "MemoryConfig",
    "MetadataExtractor",
    "MiniLMEmbedder",
    "NeverConflicts",
    "NoExtraction",
    "NumpyIndex",
    "PostgresLedger",
    "ProseJudge",
    "ProseSupersession",
    "Reason",
    "ReasonKind",
    "RecencyBuffer",
    "ReconcileReport",
    "SQLiteLedger",
    "SearchOptions",
    "Shadow",
    "StoredStatement",
    "SystemClock",
    "TemporalMemory",
    "VectorIndex",
    "Verdict",
    "WriteResult",
    "claim_judge",
    "kappa_detector",
    "kappa_judge",
    "merge_candidates",
    "shadows_by_survivor",
    "temporal_dominance",
]
