"""temporal-rag's core: facts, the bi-temporal ledger and the supersession rule.

Nothing here imports LangChain or LlamaIndex; heavy libraries are imported lazily by the modules
that need them.
"""

from shared_core.clock import Clock, ManualClock, SystemClock
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

__all__ = [
    "Cardinality",
    "Clock",
    "Decision",
    "Explanation",
    "Fact",
    "FactKey",
    "FactStatus",
    "InMemoryLedger",
    "Ledger",
    "LedgerStore",
    "ManualClock",
    "Reason",
    "ReasonKind",
    "SQLiteLedger",
    "StoredStatement",
    "SystemClock",
    "WriteResult",
]
