"""Every statement the SQLite ledger runs on its rows, written out for SQLite.

Module constants only, each a string literal (the column lists of
:mod:`shared_core.ledger.codecs` spliced in where a row is read whole):
tests/unit/test_no_unsafe_loading.py proves it. Values always travel as ``?`` parameters; the
only value written into the text is ``OPEN`` (9223372036854775807, in ``retired_at = OPEN``: a
believed row), so that SQLite can use the partial indexes over believed rows. sqlite3 caches a
prepared statement by its text, so each is one string built once.
"""

from __future__ import annotations

from shared_core.ledger.codecs import FACT_COLUMNS, STATEMENT_COLUMNS, VERSION_COLUMNS

# ---------------------------------------------------------------------- the record clock, keys
LAST_RECORD = "SELECT last_recorded_at, last_seq FROM ledger_clock WHERE id = 1"
SET_LAST_RECORD = (
    "INSERT INTO ledger_clock (id, last_recorded_at, last_seq) VALUES (1, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET last_recorded_at = excluded.last_recorded_at, "
    "last_seq = excluded.last_seq"
)
CARDINALITY = "SELECT cardinality FROM relations WHERE relation = ?"
SET_CARDINALITY = (
    "INSERT INTO relations (relation, cardinality, declared_at) VALUES (?, ?, ?) "
    "ON CONFLICT (relation) DO UPDATE SET cardinality = excluded.cardinality, "
    "declared_at = excluded.declared_at"
)
RELATIONS = "SELECT relation, cardinality FROM relations"
RELATION_IN_USE = "SELECT 1 FROM keys WHERE relation = ? LIMIT 1"
KEY_ID = "SELECT key_id FROM keys WHERE namespace = ? AND subject = ? AND relation = ?"
INSERT_KEY = "INSERT INTO keys (namespace, subject, relation) VALUES (?, ?, ?)"
RESTORE_KEY = "INSERT INTO keys (key_id, namespace, subject, relation) VALUES (?, ?, ?, ?)"
KEYS = "SELECT key_id, namespace, subject, relation FROM keys"

# ---------------------------------------------------------------------- streams
# A stream's believed statements and versions valid from an instant on (params: key_id,
# stream, instant); ``key_id IS ?`` matches prose (NULL) too.
STREAM_STATEMENTS = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from >= ?"
)
STREAM_VERSIONS = (
    "SELECT fact_id, head_seq, value, valid_from, valid_to, end_kind, end_by, end_rule, "
    "end_score, row_id, recorded_at FROM versions WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from >= ? ORDER BY valid_from"
)
# The suffix a statement valid from an instant can change (StreamState.before, the general
# case): from the start of the version before the latest believed version that starts before
# the instant on, or the whole stream when fewer than two start before it, which the caller
# tells from the versions read (params: key_id, stream, key_id, stream, instant).
SUFFIX_STATEMENTS = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from < ? "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808)"
)
SUFFIX_VERSIONS = (
    "SELECT fact_id, head_seq, value, valid_from, valid_to, end_kind, end_by, end_rule, "
    "end_score, row_id, recorded_at FROM versions WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id IS ? AND stream = ? "
    "AND retired_at = 9223372036854775807 AND valid_from < ? "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808) ORDER BY valid_from"
)
STREAMS_OF_KEY = (
    "SELECT DISTINCT stream FROM statements WHERE key_id IS ? AND retired_at = 9223372036854775807"
)

# ---------------------------------------------------------------------- the write path
INSERT_STATEMENT = (
    f"INSERT INTO statements ({STATEMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_VERSION = (
    "INSERT INTO versions (fact_id, head_seq, namespace, key_id, stream, value, valid_from, "
    "valid_to, end_kind, end_by, end_rule, end_score, recorded_at, retired_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RESTORE_VERSION = (
    f"INSERT INTO versions ({VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?)"
)
RETIRE_STATEMENT = (
    "UPDATE statements SET retired_at = ?, retire_kind = ?, retire_by = ?, retire_rule = ?, "
    "retire_score = ? WHERE seq = ? AND retired_at = 9223372036854775807"
)
RETIRE_VERSION = (
    "UPDATE versions SET retired_at = ?, retire_kind = ?, retire_by = ?, retire_rule = ?, "
    "retire_score = ? WHERE row_id = ? AND retired_at = 9223372036854775807"
)

# ---------------------------------------------------------------------- statements
STATEMENT_BY_SEQ = f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE seq = ?"
STATEMENTS_OF_FACT = f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE fact_id = ? ORDER BY seq"
ALL_STATEMENTS = f"SELECT {STATEMENT_COLUMNS} FROM statements ORDER BY seq"
# Which of some fact ids are used: the marks of the ids follow, as ``(?, ?, ...)``.
KNOWN_FACT_IDS_IN = "SELECT DISTINCT fact_id FROM statements WHERE fact_id IN "
# Believed prose with this text key and valid time (valid_from NULL: any); params: namespace,
# text_key, valid_to, valid_from, valid_from.
FIND_PROSE = (
    f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE key_id IS NULL "
    "AND retired_at = 9223372036854775807 AND namespace = ? AND text_key = ? "
    "AND valid_to IS ? AND (? IS NULL OR valid_from = ?) LIMIT 1"
)

# ---------------------------------------------------------------------- versions
FACT_SELECT = f"SELECT {FACT_COLUMNS} FROM versions v JOIN statements s ON s.seq = v.head_seq"
# A VersionQuery: its scope (one key; a subject's or a relation's keys of a namespace; a whole
# namespace), then valid_at twice, then known_at twice unless the query reads what is believed
# now. Ordered by subject, relation, valid_from and row id, prose last.
QUERY_KEY = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id = ? "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_KEY_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id = ? "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.recorded_at <= ? AND v.retired_at > ? "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_SUBJECT = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = ? AND subject = ?) "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_SUBJECT_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = ? AND subject = ?) "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.recorded_at <= ? AND v.retired_at > ? "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_RELATION = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = ? AND relation = ?) "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_RELATION_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = ? AND relation = ?) "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.recorded_at <= ? AND v.retired_at > ? "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_NAMESPACE = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.namespace = ? "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_NAMESPACE_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.namespace = ? "
    "AND v.valid_from <= ? AND v.valid_to > ? AND v.recorded_at <= ? AND v.retired_at > ? "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERIES = {
    ("key", False): QUERY_KEY,
    ("key", True): QUERY_KEY_KNOWN,
    ("subject", False): QUERY_SUBJECT,
    ("subject", True): QUERY_SUBJECT_KNOWN,
    ("relation", False): QUERY_RELATION,
    ("relation", True): QUERY_RELATION_KNOWN,
    ("namespace", False): QUERY_NAMESPACE,
    ("namespace", True): QUERY_NAMESPACE_KNOWN,
}
"""The query of a VersionQuery, by (scope, whether it reads as known at a past instant)."""
# The namespaces with a prefix (``namespace >= prefix`` lets the index start there) that hold a
# visible version; params: prefix, its length, prefix, valid_at twice (then known_at twice).
NAMESPACES = (
    "SELECT DISTINCT namespace FROM versions WHERE namespace >= ? "
    "AND substr(namespace, 1, ?) = ? AND valid_from <= ? AND valid_to > ? "
    "AND retired_at = 9223372036854775807"
)
NAMESPACES_KNOWN = (
    "SELECT DISTINCT namespace FROM versions WHERE namespace >= ? "
    "AND substr(namespace, 1, ?) = ? AND valid_from <= ? AND valid_to > ? "
    "AND recorded_at <= ? AND retired_at > ?"
)
KEY_VERSIONS = f"{FACT_SELECT} WHERE v.key_id = ? AND v.recorded_at <= ? ORDER BY v.row_id"
VERSIONS_OF_FACT = f"{FACT_SELECT} WHERE v.fact_id = ? ORDER BY v.row_id"
# Some version rows: the marks of their ids follow, as ``(?, ?, ...)``.
VERSIONS_BY_ROW_IN = f"{FACT_SELECT} WHERE v.row_id IN "
ALL_VERSIONS = f"SELECT {VERSION_COLUMNS} FROM versions ORDER BY row_id"
LAST_ROW_ID = "SELECT coalesce(max(row_id), 0) FROM versions"
# Which of some version rows a search may show (the marks of the row ids follow, as
# ``(?, ?, ...)``); params: namespace, known_at twice (then valid_at twice).
VISIBLE_ROWS_IN = (
    "SELECT row_id FROM versions WHERE namespace = ? AND recorded_at <= ? AND retired_at > ? "
    "AND row_id IN "
)
VISIBLE_ROWS_VALID_IN = (
    "SELECT row_id FROM versions WHERE namespace = ? AND recorded_at <= ? AND retired_at > ? "
    "AND valid_from <= ? AND valid_to > ? AND row_id IN "
)
# Every visible row, by row id, at most the LIMIT (one more than the caller's limit tells it
# there are too many).
LIST_VISIBLE_ROWS = (
    "SELECT row_id FROM versions WHERE namespace = ? AND recorded_at <= ? AND retired_at > ? "
    "ORDER BY row_id LIMIT ?"
)
LIST_VISIBLE_ROWS_VALID = (
    "SELECT row_id FROM versions WHERE namespace = ? AND recorded_at <= ? AND retired_at > ? "
    "AND valid_from <= ? AND valid_to > ? ORDER BY row_id LIMIT ?"
)

# ---------------------------------------------------------------------- the change feed
RETIRED_SINCE = (
    f"{FACT_SELECT} WHERE v.retired_at >= ? AND v.retired_at < 9223372036854775807 "
    "AND v.row_id <= ? ORDER BY v.row_id"
)
INSERTED_AFTER = f"{FACT_SELECT} WHERE v.row_id > ? ORDER BY v.row_id LIMIT ?"
COUNT_RETIRED_AT = (
    "SELECT count(*) FROM versions WHERE retired_at = ? AND retired_at < 9223372036854775807"
)
