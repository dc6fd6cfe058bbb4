"""The SQLite ledger: :class:`~shared_core.ledger.sqlite.ledger.SQLiteLedger` over its backend,
connection, checkpoint thread, schema and SQL."""
