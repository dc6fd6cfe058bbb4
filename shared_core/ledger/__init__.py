"""The bi-temporal fact ledger: a Protocol, one implementation over pluggable storage."""

from shared_core.ledger.in_memory import InMemoryLedger
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres.ledger import PostgresLedger
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.ledger.results import (
    ChangeCursor,
    ChangeSet,
    Explanation,
    StoredStatement,
    StoredVersion,
    VersionRecord,
    WriteResult,
)
from shared_core.ledger.sqlite.connection import Durability
from shared_core.ledger.sqlite.ledger import SQLiteLedger

__all__ = [
    "ChangeCursor",
    "ChangeSet",
    "Durability",
    "Explanation",
    "InMemoryLedger",
    "Ledger",
    "LedgerStore",
    "PostgresLedger",
    "ProseSupersession",
    "SQLiteLedger",
    "StatementRow",
    "StoredStatement",
    "StoredVersion",
    "VersionRecord",
    "VersionRow",
    "WriteResult",
]
