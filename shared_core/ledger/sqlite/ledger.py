"""The embedded default ledger: one SQLite file (stdlib sqlite3, WAL, STRICT tables)."""

from __future__ import annotations

from pathlib import Path

from shared_core.clock import Clock
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.sqlite.backend import SQLiteBackend
from shared_core.ledger.sqlite.connection import Durability

__all__ = ["SQLiteLedger"]


class SQLiteLedger(Ledger):
    """The embedded default ledger in one SQLite file (created if missing).

    ``durability="full"`` (default) fsyncs every commit: acknowledged writes survive a power
    loss. ``"normal"`` survives a crash of the process, not of the machine, and is faster.
    ``create=False`` opens an existing ledger only (LedgerNotFoundError otherwise).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        durability: Durability = "full",
        busy_timeout: float = 5.0,
        busy_retries: int = 3,
        create: bool = True,
    ) -> None:
        backend = SQLiteBackend(
            path,
            durability=durability,
            busy_timeout=busy_timeout,
            busy_retries=busy_retries,
            create=create,
        )
        super().__init__(backend, clock=clock)
        self.path = backend.path
