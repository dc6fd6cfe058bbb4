"""temporal-rag's core: facts, the bi-temporal ledger, the supersession rule and Phi_T.

Nothing here imports LangChain or LlamaIndex; heavy libraries are imported lazily by the modules
that need them.
"""

from shared_core.clock import Clock, ManualClock, SystemClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.dominance import (
    AnyConflict,
    Candidate,
    Conflict,
    ConflictDetector,
    DominanceResult,
    NeverConflicts,
    Shadow,
    temporal_dominance,
)
from shared_core.facts import Cardinality, Decision, Fact, FactKey, FactStatus, Reason, ReasonKind
from shared_core.ledger import (
    Explanation,
    InMemoryLedger,
    Ledger,
    LedgerStore,
    SQLiteLedger,
    StoredStatement,
    WriteResult,
)
from shared_core.recency import RecencyBuffer, merge_candidates

__all__ = [
    "AnyConflict",
    "Candidate",
    "Cardinality",
    "Clock",
    "Conflict",
    "ConflictDetector",
    "Decision",
    "DominanceResult",
    "Explanation",
    "Fact",
    "FactKey",
    "FactStatus",
    "InMemoryLedger",
    "KeyConflictDetector",
    "Ledger",
    "LedgerStore",
    "ManualClock",
    "NeverConflicts",
    "Reason",
    "ReasonKind",
    "RecencyBuffer",
    "SQLiteLedger",
    "Shadow",
    "StoredStatement",
    "SystemClock",
    "WriteResult",
    "merge_candidates",
    "temporal_dominance",
]
