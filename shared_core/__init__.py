"""temporal-rag's runtime: facts, the bi-temporal ledger, the supersession rule, Phi_T and its
conflict detectors, and TemporalMemory (the ledger, a vector index and an embedder behind one
object). The contract it follows is docs/design.md in the repository.

Nothing here imports LangChain or LlamaIndex (the adapters do), nor the benchmark or the training
pipeline (distributions of their own); heavy libraries are imported lazily by the modules that
need them.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _distribution_version

from shared_core.clock import Clock, ManualClock, SystemClock
from shared_core.detectors import (
    KappaScorer,
    KeyConflictDetector,
    LLMConflictDetector,
    LLMGroupDetector,
    NLIConflictDetector,
    kappa_detector,
)
from shared_core.embedders import CallableEmbedder, Embedder, HashingEmbedder, MiniLMEmbedder
from shared_core.errors import (
    CardinalityConflictError,
    DetectorError,
    EmbedderError,
    EmbedderMismatchError,
    ExtractorError,
    FactIdConflictError,
    FactNotFoundError,
    FolderInUseError,
    IndexSyncError,
    InvalidInputError,
    InvalidInputTypeError,
    InvalidOperationError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerError,
    LedgerNotFoundError,
    LedgerUnavailableError,
    LLMError,
    MissingDependencyError,
    ModelNotFoundError,
    NeedsAsyncError,
    NotALedgerError,
    NothingToRetractError,
    NotPicklableError,
    NotRetiredError,
    SchemaVersionError,
    TemporalRagError,
    VectorIndexError,
)
from shared_core.extractors import (
    ExtractedFact,
    Extraction,
    Extractor,
    MetadataExtractor,
    NoExtraction,
)
from shared_core.facts import Cardinality, Decision, Fact, FactKey, FactStatus, Reason, ReasonKind
from shared_core.index import ChromaIndex, NumpyIndex, VectorIndex
from shared_core.judging import ClaimJudge, LLMExtractor, ProseJudge, claim_judge, kappa_judge
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
from shared_core.llm_calls import AsyncTextLLM, TextLLM, TextLLMPair
from shared_core.llms import LocalLLM
from shared_core.memory import (
    Added,
    ExtractionReport,
    Hit,
    MemoryConfig,
    ReconcileReport,
    SearchOptions,
    TemporalMemory,
)
from shared_core.phi_t import (
    AnyConflict,
    Candidate,
    Conflict,
    ConflictDetector,
    DominanceResult,
    NeverConflicts,
    temporal_dominance,
)
from shared_core.recency import RecencyBuffer

try:
    __version__ = _distribution_version("temporal-rag")
except _PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

# The public surface, by topic; tests/unit/test_public_api.py pins it. Everything else is
# importable from its own module (shared_core.detectors.frames, shared_core.index.base, ...).
__all__ = [  # noqa: RUF022  (grouped by topic, not sorted)
    # the memory
    "Added",
    "ExtractionReport",
    "Hit",
    "MemoryConfig",
    "ReconcileReport",
    "SearchOptions",
    "TemporalMemory",
    # facts and the supersession rule
    "Cardinality",
    "Decision",
    "Fact",
    "FactKey",
    "FactStatus",
    "Reason",
    "ReasonKind",
    # ledgers
    "Explanation",
    "InMemoryLedger",
    "Ledger",
    "LedgerStore",
    "PostgresLedger",
    "ProseSupersession",
    "SQLiteLedger",
    "StoredStatement",
    "WriteResult",
    # vector indexes and embedders
    "CallableEmbedder",
    "ChromaIndex",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "NumpyIndex",
    "VectorIndex",
    # write time: extractors and prose judges
    "ClaimJudge",
    "ExtractedFact",
    "Extraction",
    "Extractor",
    "LLMExtractor",
    "MetadataExtractor",
    "NoExtraction",
    "ProseJudge",
    "claim_judge",
    "kappa_judge",
    # read time: Phi_T and its conflict detectors
    "AnyConflict",
    "Candidate",
    "Conflict",
    "ConflictDetector",
    "DominanceResult",
    "KappaScorer",
    "KeyConflictDetector",
    "LLMConflictDetector",
    "LLMGroupDetector",
    "NLIConflictDetector",
    "NeverConflicts",
    "RecencyBuffer",
    "kappa_detector",
    "temporal_dominance",
    # LLM callables
    "AsyncTextLLM",
    "LocalLLM",
    "TextLLM",
    "TextLLMPair",
    # clocks
    "Clock",
    "ManualClock",
    "SystemClock",
    # errors (their tree is drawn in shared_core.errors)
    "CardinalityConflictError",
    "DetectorError",
    "EmbedderError",
    "EmbedderMismatchError",
    "FolderInUseError",
    "ExtractorError",
    "FactIdConflictError",
    "FactNotFoundError",
    "IndexSyncError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "InvalidOperationError",
    "LLMError",
    "LedgerBusyError",
    "LedgerCorruptError",
    "LedgerError",
    "LedgerNotFoundError",
    "LedgerUnavailableError",
    "MissingDependencyError",
    "ModelNotFoundError",
    "NeedsAsyncError",
    "NotALedgerError",
    "NotPicklableError",
    "NotRetiredError",
    "NothingToRetractError",
    "SchemaVersionError",
    "TemporalRagError",
    "VectorIndexError",
]
