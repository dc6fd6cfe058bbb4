"""The PostgreSQL ledger: :class:`~shared_core.ledger.postgres.ledger.PostgresLedger` over its
backend, connections, read-ahead, stamping of parallel writes, schema and SQL."""
