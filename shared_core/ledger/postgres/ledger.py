"""The server ledger: PostgreSQL through psycopg 3 and its connection pool.

``pip install "temporal-rag[postgres]"``. The rows live in :class:`PostgresBackend`
(:mod:`shared_core.ledger.postgres.backend`), one ledger in one PostgreSQL schema.
"""

from __future__ import annotations

from shared_core.clock import Clock
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres.backend import PostgresBackend
from shared_core.ledger.postgres.connection import redacted

__all__ = ["PostgresLedger"]


class PostgresLedger(Ledger):
    """The ledger in a PostgreSQL database (created in ``schema`` if missing).

    ``url``: ``postgresql://user:password@host:5432/dbname``. ``schema``: the PostgreSQL schema
    that holds this ledger's tables (several ledgers can share a database). ``pool_size``:
    connections kept open. ``lock_timeout`` and ``busy_retries``: how long a write waits for
    other writers before :class:`LedgerBusyError`. ``create=False`` opens an existing ledger
    only (:class:`LedgerNotFoundError` otherwise).
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = "temporal_rag",
        clock: Clock | None = None,
        pool_size: int = 2,
        lock_timeout: float = 5.0,
        busy_retries: int = 3,
        connect_timeout: float = 10.0,
        create: bool = True,
    ) -> None:
        backend = PostgresBackend(
            url,
            schema_name=schema,
            pool_size=pool_size,
            lock_timeout=lock_timeout,
            busy_retries=busy_retries,
            connect_timeout=connect_timeout,
            create=create,
        )
        super().__init__(backend, clock=clock)
        self.url = redacted(url)
        self.schema = schema
