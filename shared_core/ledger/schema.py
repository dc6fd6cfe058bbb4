"""The SQLite ledger's schema, version 1.

Later versions add migrations here and a row to ``schema_migrations``; a file whose version is
newer than the library's is refused (SchemaVersionError) rather than misread.
"""

from __future__ import annotations

from shared_core.clock import OPEN

SCHEMA_VERSION = 1
APPLICATION_ID = 0x54524147  # "TRAG": marks the file as a temporal-rag ledger

BELIEVED_SQL = f"retired_at = {OPEN}"
"""The SQL condition of a believed row (a literal, so the partial indexes apply)."""

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY,
        applied_at INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE ledger_clock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        last_recorded_at INTEGER NOT NULL,
        last_seq INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE relations (
        relation TEXT PRIMARY KEY,
        cardinality TEXT NOT NULL CHECK (cardinality IN ('one', 'many')),
        declared_at INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE keys (
        key_id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        UNIQUE (namespace, subject, relation)
    ) STRICT""",
    "CREATE INDEX keys_relation ON keys (relation, namespace)",
    """CREATE TABLE statements (
        seq INTEGER PRIMARY KEY,
        fact_id TEXT NOT NULL,
        namespace TEXT NOT NULL,
        key_id INTEGER REFERENCES keys (key_id),
        stream TEXT NOT NULL,
        subject TEXT,
        relation TEXT,
        object TEXT,
        value TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('assertion', 'retraction')),
        text TEXT NOT NULL,
        text_key TEXT NOT NULL,
        valid_from INTEGER NOT NULL,
        valid_to INTEGER,
        recorded_at INTEGER NOT NULL,
        retired_at INTEGER NOT NULL,
        retire_kind TEXT,
        retire_by TEXT,
        retire_rule TEXT,
        retire_score REAL,
        metadata TEXT NOT NULL
    ) STRICT""",
    "CREATE INDEX statements_fact ON statements (fact_id)",
    f"CREATE INDEX statements_stream ON statements (key_id, stream, valid_from) "
    f"WHERE {BELIEVED_SQL}",
    f"CREATE INDEX statements_prose ON statements (namespace, text_key) "
    f"WHERE key_id IS NULL AND {BELIEVED_SQL}",
    """CREATE TABLE versions (
        row_id INTEGER PRIMARY KEY,
        fact_id TEXT NOT NULL,
        head_seq INTEGER NOT NULL REFERENCES statements (seq),
        namespace TEXT NOT NULL,
        key_id INTEGER REFERENCES keys (key_id),
        stream TEXT NOT NULL,
        value TEXT NOT NULL,
        valid_from INTEGER NOT NULL,
        valid_to INTEGER NOT NULL,
        end_kind TEXT,
        end_by TEXT,
        end_rule TEXT,
        end_score REAL,
        recorded_at INTEGER NOT NULL,
        retired_at INTEGER NOT NULL,
        retire_kind TEXT,
        retire_by TEXT,
        retire_rule TEXT,
        retire_score REAL,
        CHECK (valid_from < valid_to),
        CHECK (recorded_at <= retired_at)
    ) STRICT""",
    "CREATE INDEX versions_fact ON versions (fact_id)",
    "CREATE INDEX versions_key ON versions (key_id, valid_from)",
    f"CREATE INDEX versions_stream ON versions (key_id, stream, valid_from) WHERE {BELIEVED_SQL}",
    f"CREATE INDEX versions_believed ON versions (namespace, valid_to) WHERE {BELIEVED_SQL}",
)
