"""The SQLite ledger's schema (version 3), the SQL of its hot paths, and its row codecs.

Later versions add migrations here and a row to ``schema_migrations``; a file whose version is
newer than the library's is refused (SchemaVersionError) rather than misread.
"""

from __future__ import annotations

from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.facts import Reason, ReasonKind, decode_object, encode_object
from shared_core.ledger.records import StatementRow, VersionRow, light_statement
from shared_core.supersession import Statement, StreamState, Version

SCHEMA_VERSION = 3
APPLICATION_ID = 0x54524147  # "TRAG": marks the file as a temporal-rag ledger

BELIEVED_SQL = f"retired_at = {OPEN}"
"""The SQL condition of a believed row (a literal, so the partial indexes apply)."""

RETIRED_SQL = f"retired_at < {OPEN}"
_V2 = (  # version 2: the change feed finds retirements without a scan
    f"CREATE INDEX versions_retired ON versions (retired_at) WHERE {RETIRED_SQL}",
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
    *_V2,
)
MIGRATIONS: dict[int, tuple[str, ...]] = {2: _V2, 3: _V3}
"""The statements that bring a file from the previous version to this one."""

STATEMENT_COLUMNS = (
    "seq, fact_id, namespace, key_id, stream, subject, relation, object, value, kind, text, "
    "text_key, valid_from, valid_to, recorded_at, retired_at, retire_kind, retire_by, "
    "retire_rule, retire_score, metadata, end_kind, end_by, end_rule, end_score"
)
VERSION_COLUMNS = (
    "row_id, fact_id, head_seq, namespace, key_id, stream, value, valid_from, valid_to, "
    "end_kind, end_by, end_rule, end_score, recorded_at, retired_at, retire_kind, retire_by, "
    "retire_rule, retire_score"
)
FACT_SELECT = (
    "SELECT "
    + ", ".join(f"v.{c.strip()}" for c in VERSION_COLUMNS.split(","))
    + ", "
    + ", ".join(f"s.{c.strip()}" for c in STATEMENT_COLUMNS.split(","))
    + " FROM versions v JOIN statements s ON s.seq = v.head_seq"
)
N_VERSION = len(VERSION_COLUMNS.split(","))
RETIRED_SINCE = (
    f"{FACT_SELECT} WHERE v.retired_at >= ? AND v.{RETIRED_SQL} AND v.row_id <= ? ORDER BY v.row_id"
)
COUNT_RETIRED_AT = f"SELECT count(*) FROM versions WHERE retired_at = ? AND {RETIRED_SQL}"
INSERTED_AFTER = f"{FACT_SELECT} WHERE v.row_id > ? ORDER BY v.row_id LIMIT ?"
# which of some version rows a search may show (the row ids follow, as ``AND row_id IN (...)``)
VISIBLE_ROWS = (
    "SELECT row_id FROM versions WHERE namespace = ? AND recorded_at <= ? AND retired_at > ?"
)
VISIBLE_ROWS_VALID = VISIBLE_ROWS + " AND valid_from <= ? AND valid_to > ?"
# Every visible row, by row id, at most the LIMIT (one more than the caller's limit tells it
# there are too many).
LIST_VISIBLE_ROWS = VISIBLE_ROWS + " ORDER BY row_id LIMIT ?"
LIST_VISIBLE_ROWS_VALID = VISIBLE_ROWS_VALID + " ORDER BY row_id LIMIT ?"
# The write path's statements, built once (sqlite3 caches prepared statements by their text).
INSERT_STATEMENT = (
    f"INSERT INTO statements ({STATEMENT_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(STATEMENT_COLUMNS.split(',')))})"
)
INSERT_VERSION = (
    "INSERT INTO versions (fact_id, head_seq, namespace, key_id, stream, value, valid_from, "
    "valid_to, end_kind, end_by, end_rule, end_score, recorded_at, retired_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RESTORE_VERSION = (
    f"INSERT INTO versions ({VERSION_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(VERSION_COLUMNS.split(',')))})"
)
RETIRE = (
    "UPDATE {table} SET retired_at = ?, retire_kind = ?, retire_by = ?, retire_rule = ?, "
    f"retire_score = ? WHERE {{column}} = ? AND {BELIEVED_SQL}"
)
RETIRE_STATEMENT = RETIRE.format(table="statements", column="seq")
RETIRE_VERSION = RETIRE.format(table="versions", column="row_id")
_VERSION_FIELDS = (
    "SELECT fact_id, head_seq, value, valid_from, valid_to, end_kind, end_by, end_rule, "
    "end_score, row_id, recorded_at FROM versions "
)
STREAM_STATEMENTS = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements "
    f"WHERE key_id IS ? AND stream = ? AND {BELIEVED_SQL} AND valid_from >= ?"
)
STREAM_VERSIONS = (
    f"{_VERSION_FIELDS} WHERE key_id IS ? AND stream = ? AND {BELIEVED_SQL} AND valid_from >= ? "
    "ORDER BY valid_from"
)
# The suffix a statement valid from an instant can change (StreamState.before, the general
# case): from the start of the version before the latest believed version that starts before
# the instant on, or the whole stream when fewer than two start before it, which the caller
# tells from the versions read (params: key_id, stream, key_id, stream, instant).
SUFFIX_FROM = (
    "coalesce((SELECT valid_from FROM versions WHERE key_id IS ? AND stream = ? AND "
    f"{BELIEVED_SQL} AND valid_from < ? ORDER BY valid_from DESC LIMIT 1 OFFSET 1), "
    "-9223372036854775808)"
)
SUFFIX_STATEMENTS = STREAM_STATEMENTS.replace("valid_from >= ?", "valid_from >= " + SUFFIX_FROM)
SUFFIX_VERSIONS = STREAM_VERSIONS.replace("valid_from >= ?", "valid_from >= " + SUFFIX_FROM)


def suffix_start(valid_froms: list[Instant], before: Instant) -> Instant | None:
    """Where the rows of SUFFIX_VERSIONS (their ``valid_from``, in order) start a suffix, or
    None when they are the whole stream (fewer than two start before ``before``)."""
    if sum(1 for v in valid_froms if v < before) < 2:
        return None
    return valid_froms[0]


def decode_reason(
    kind: str | None, by: str | None, rule: str | None, score: float | None
) -> Reason | None:
    return None if kind is None else Reason(ReasonKind(kind), by, rule or "", score)


def reason_columns(reason: Reason | None) -> tuple[Any, ...]:
    if reason is None:
        return (None, None, None, None)
    return (str(reason.kind), reason.by, reason.rule, reason.score)


def decode_statement(row: tuple[Any, ...]) -> StatementRow:
    return StatementRow(
        seq=row[0],
        fact_id=row[1],
        namespace=row[2],
        key_id=row[3],
        stream=row[4],
        subject=row[5],
        relation=row[6],
        object=None if row[7] is None else decode_object(row[7]),
        value=row[8],
        kind=row[9],
        text=row[10],
        text_key=row[11],
        valid_from=row[12],
        valid_to=row[13],
        recorded_at=row[14],
        retired_at=row[15],
        retire_reason=decode_reason(*row[16:20]),
        metadata=row[20],
        end_reason=decode_reason(*row[21:25]),
    )


def decode_stream_statement(row: tuple[Any, ...]) -> Statement:
    """A row of STREAM_STATEMENTS as the rule's Statement."""
    seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key = row[:8]
    end = decode_reason(*row[8:12])
    return light_statement(seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end)


def statement_columns(row: StatementRow) -> tuple[Any, ...]:
    """A statement row's values in STATEMENT_COLUMNS order (decode_statement's inverse)."""
    return (
        row.seq,
        row.fact_id,
        row.namespace,
        row.key_id,
        row.stream,
        row.subject,
        row.relation,
        None if row.object is None else encode_object(row.object),
        row.value,
        row.kind,
        row.text,
        row.text_key,
        row.valid_from,
        row.valid_to,
        row.recorded_at,
        row.retired_at,
        *reason_columns(row.retire_reason),
        row.metadata,
        *reason_columns(row.end_reason),
    )


def version_columns(row: VersionRow) -> tuple[Any, ...]:
    """A version row's values in VERSION_COLUMNS order (decode_version's inverse)."""
    return (
        row.row_id,
        row.fact_id,
        row.head_seq,
        row.namespace,
        row.key_id,
        row.stream,
        row.value,
        row.valid_from,
        row.valid_to,
        *reason_columns(row.end),
        row.recorded_at,
        row.retired_at,
        *reason_columns(row.retire_reason),
    )


def decode_version(row: tuple[Any, ...]) -> VersionRow:
    return VersionRow(
        row_id=row[0],
        fact_id=row[1],
        head_seq=row[2],
        namespace=row[3],
        key_id=row[4],
        stream=row[5],
        value=row[6],
        valid_from=row[7],
        valid_to=row[8],
        end=decode_reason(*row[9:13]),
        recorded_at=row[13],
        retired_at=row[14],
        retire_reason=decode_reason(*row[15:19]),
    )


def decode_stream_version(row: tuple[Any, ...]) -> Version:
    """A row of STREAM_VERSIONS or SUFFIX_VERSIONS as the rule's Version."""
    end = decode_reason(row[5], row[6], row[7], row[8])
    return Version(row[0], row[1], row[2], row[3], row[4], end, row[9], row[10])


def decode_stream_state(
    statements: list[tuple[Any, ...]], versions: list[tuple[Any, ...]], *, start: Instant | None
) -> StreamState:
    """The stream state rows of STREAM_/SUFFIX_STATEMENTS and _VERSIONS hold: complete, or the
    suffix from ``start`` on."""
    return StreamState(
        tuple(decode_stream_statement(row) for row in statements),
        tuple(decode_stream_version(row) for row in versions),
        complete=start is None,
        start=start,
    )
