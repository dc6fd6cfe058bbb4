"""The SQLite ledger's schema (version 3) and its migrations.

Later versions add migrations here and a row to ``schema_migrations``; a file whose version is
newer than the library's is refused (SchemaVersionError) rather than misread.
"""

from __future__ import annotations

SCHEMA_VERSION = 3
APPLICATION_ID = 0x54524147  # "TRAG": marks the file as a temporal-rag ledger
SET_APPLICATION_ID = f"PRAGMA application_id={APPLICATION_ID}"

_V2 = (  # version 2: the change feed finds retirements without a scan
    "CREATE INDEX versions_retired ON versions (retired_at) WHERE retired_at < 9223372036854775807",
)
_V3 = (  # version 3: a retraction may carry why it ends what it closes (prose supersession)
    "ALTER TABLE statements ADD COLUMN end_kind TEXT",
    "ALTER TABLE statements ADD COLUMN end_by TEXT",
    "ALTER TABLE statements ADD COLUMN end_rule TEXT",
    "ALTER TABLE statements ADD COLUMN end_score REAL",
)

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
        metadata TEXT NOT NULL,
        end_kind TEXT,
        end_by TEXT,
        end_rule TEXT,
        end_score REAL
    ) STRICT""",
    "CREATE INDEX statements_fact ON statements (fact_id)",
    "CREATE INDEX statements_stream ON statements (key_id, stream, valid_from) "
    "WHERE retired_at = 9223372036854775807",
    "CREATE INDEX statements_prose ON statements (namespace, text_key) "
    "WHERE key_id IS NULL AND retired_at = 9223372036854775807",
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
    "CREATE INDEX versions_stream ON versions (key_id, stream, valid_from) "
    "WHERE retired_at = 9223372036854775807",
    "CREATE INDEX versions_believed ON versions (namespace, valid_to) "
    "WHERE retired_at = 9223372036854775807",
    *_V2,
)
"""A new file's tables and indexes (``retired_at = OPEN``: the partial indexes of believed rows)."""
MIGRATIONS: dict[int, tuple[str, ...]] = {2: _V2, 3: _V3}
"""The statements that bring a file from the previous version to this one."""

TABLE_NAMES = "SELECT name FROM sqlite_master WHERE type = 'table'"
FOUND_VERSION = "SELECT max(version) FROM schema_migrations"
APPLIED = "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"
"""Records a version as applied (params: version, microseconds since the epoch)."""
