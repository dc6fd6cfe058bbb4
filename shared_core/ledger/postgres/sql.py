"""Every statement the PostgreSQL ledger runs on its rows, written out for PostgreSQL.

Module constants only, each a string literal (the column lists of
:mod:`shared_core.ledger.codecs` spliced in where a row is read whole):
tests/unit/test_no_unsafe_loading.py proves it. Values always travel as psycopg's ``%s``
parameters; the only value written into the text is ``OPEN`` (9223372036854775807, in
``retired_at = OPEN``: a believed row), so that the partial indexes over believed rows apply.
A stream's reads come in two forms, for a key (``key_id = %s``) and for prose (``key_id IS
NULL``, one parameter fewer): PostgreSQL's NULL-safe ``IS NOT DISTINCT FROM`` cannot use an
index, and a scan of every version row on each write made writes slow down with the ledger's
size.
"""

from __future__ import annotations

from shared_core.ledger.codecs import FACT_COLUMNS, STATEMENT_COLUMNS, VERSION_COLUMNS

# ---------------------------------------------------------------------- the record clock, keys
LAST_RECORD = "SELECT last_recorded_at, last_seq FROM ledger_clock WHERE id = 1"
SET_LAST_RECORD = (
    "UPDATE ledger_clock SET last_recorded_at = %s, last_seq = %s, "
    "revision = revision + 1 WHERE id = 1"
)
REVISION = "SELECT revision FROM ledger_clock WHERE id = 1"
NEXT_REVISION = "UPDATE ledger_clock SET revision = revision + 1 WHERE id = 1"
CARDINALITY = "SELECT cardinality FROM relations WHERE relation = %s"
SET_CARDINALITY = (
    "INSERT INTO relations (relation, cardinality, declared_at) VALUES (%s, %s, %s) "
    "ON CONFLICT (relation) DO UPDATE SET cardinality = excluded.cardinality, "
    "declared_at = excluded.declared_at"
)
RELATIONS = "SELECT relation, cardinality FROM relations"
RELATION_IN_USE = "SELECT 1 FROM keys WHERE relation = %s LIMIT 1"
KEY_ID = "SELECT key_id FROM keys WHERE namespace = %s AND subject = %s AND relation = %s"
# The stored ids of several keys: three arrays, namespaces, subjects and relations, in step.
KEY_IDS = (
    "SELECT k.key_id, k.namespace, k.subject, k.relation FROM keys k "
    "JOIN unnest(%s::text[], %s::text[], %s::text[]) AS w (namespace, subject, relation) "
    "ON k.namespace = w.namespace AND k.subject = w.subject AND k.relation = w.relation"
)
INSERT_KEY = (
    "INSERT INTO keys (namespace, subject, relation) VALUES (%s, %s, %s) "
    "ON CONFLICT (namespace, subject, relation) DO NOTHING RETURNING key_id"
)
RESTORE_KEY = "INSERT INTO keys (key_id, namespace, subject, relation) VALUES (%s, %s, %s, %s)"
KEYS = "SELECT key_id, namespace, subject, relation FROM keys"

# ---------------------------------------------------------------------- a write's start
# A write's first read, in the round trip of its lock: the record clock and the next row id.
# The identity column's sequence is read as a relation (not MVCC: its latest value).
WRITE_START = (
    "SELECT c.last_recorded_at, c.last_seq, s.last_value + s.is_called::int "
    "FROM ledger_clock c, versions_row_id_seq s WHERE c.id = 1"
)
# A version's row id is given, not drawn from the sequence, so that a write needs no round trip
# to learn it: WRITE_START reads the next one after the lock, and ROW_IDS_USED (before the
# COMMIT) moves the sequence past the ids taken, for whatever draws from it next.
ROW_IDS_USED = "SELECT setval('versions_row_id_seq', %s)"
# The write lock, whole or shared (a parallel write: writes that lock the whole ledger wait),
# by whether it is shared; then a parallel write's locks of what it names, in the order given,
# and its first read, the record clock alone.
WRITE_LOCKS = {
    False: "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s)",
    True: "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock_shared(%s)",
}
SCOPE_LOCKS = "SELECT count(pg_advisory_xact_lock(lock)) FROM unnest(%s::BIGINT[]) AS lock"
PARALLEL_START = "SELECT last_recorded_at FROM ledger_clock WHERE id = 1"
MIRROR_LOCK = "SELECT pg_advisory_lock(%s)"
MIRROR_UNLOCK = "SELECT pg_advisory_unlock(%s)"

# ---------------------------------------------------------------------- streams
# A stream's believed statements and versions valid from an instant on (params: key_id unless
# prose, stream, instant).
STREAM_STATEMENTS = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id = %s AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= %s"
)
STREAM_STATEMENTS_PROSE = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id IS NULL AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= %s"
)
STREAM_VERSIONS = (
    "SELECT fact_id, head_seq, value, valid_from, valid_to, end_kind, end_by, end_rule, "
    "end_score, row_id, recorded_at FROM versions WHERE key_id = %s AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= %s ORDER BY valid_from"
)
STREAM_VERSIONS_PROSE = (
    "SELECT fact_id, head_seq, value, valid_from, valid_to, end_kind, end_by, end_rule, "
    "end_score, row_id, recorded_at FROM versions WHERE key_id IS NULL AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= %s ORDER BY valid_from"
)
# What a statement valid from an instant can change, in one round trip: the suffix of a
# stream's versions (from the start of the version before the latest believed version that
# starts before the instant on, or the whole stream when fewer than two start before it), each
# with its head statement (a write that closes a version builds its result from it without
# reading it again), and of its statements (params: key_id unless prose, stream, twice; then
# the instant).
SUFFIX_VERSIONS_HEADED = (
    "SELECT v.fact_id, v.head_seq, v.value, v.valid_from, v.valid_to, v.end_kind, v.end_by, "
    "v.end_rule, v.end_score, v.row_id, v.recorded_at, s.seq, s.fact_id, s.namespace, "
    "s.key_id, s.stream, s.subject, s.relation, s.object, s.value, s.kind, s.text, s.text_key, "
    "s.valid_from, s.valid_to, s.recorded_at, s.retired_at, s.retire_kind, s.retire_by, "
    "s.retire_rule, s.retire_score, s.metadata, s.end_kind, s.end_by, s.end_rule, s.end_score "
    "FROM versions v JOIN statements s ON s.seq = v.head_seq WHERE v.key_id = %s "
    "AND v.stream = %s AND v.retired_at = 9223372036854775807 AND v.valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id = %s AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from < %s "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808) ORDER BY v.valid_from"
)
SUFFIX_VERSIONS_HEADED_PROSE = (
    "SELECT v.fact_id, v.head_seq, v.value, v.valid_from, v.valid_to, v.end_kind, v.end_by, "
    "v.end_rule, v.end_score, v.row_id, v.recorded_at, s.seq, s.fact_id, s.namespace, "
    "s.key_id, s.stream, s.subject, s.relation, s.object, s.value, s.kind, s.text, s.text_key, "
    "s.valid_from, s.valid_to, s.recorded_at, s.retired_at, s.retire_kind, s.retire_by, "
    "s.retire_rule, s.retire_score, s.metadata, s.end_kind, s.end_by, s.end_rule, s.end_score "
    "FROM versions v JOIN statements s ON s.seq = v.head_seq WHERE v.key_id IS NULL "
    "AND v.stream = %s AND v.retired_at = 9223372036854775807 AND v.valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id IS NULL AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from < %s "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808) ORDER BY v.valid_from"
)
SUFFIX_STATEMENTS = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id = %s AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id = %s AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from < %s "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808)"
)
SUFFIX_STATEMENTS_PROSE = (
    "SELECT seq, fact_id, key_id, value, kind, valid_from, valid_to, text_key, end_kind, end_by, "
    "end_rule, end_score FROM statements WHERE key_id IS NULL AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from >= coalesce(("
    "SELECT valid_from FROM versions WHERE key_id IS NULL AND stream = %s "
    "AND retired_at = 9223372036854775807 AND valid_from < %s "
    "ORDER BY valid_from DESC LIMIT 1 OFFSET 1), -9223372036854775808)"
)
# A stream's two reads, by whether it is a key's (True) or prose (False).
STREAM_READS = {
    True: (STREAM_STATEMENTS, STREAM_VERSIONS),
    False: (STREAM_STATEMENTS_PROSE, STREAM_VERSIONS_PROSE),
}
SUFFIX_READS = {
    True: (SUFFIX_VERSIONS_HEADED, SUFFIX_STATEMENTS),
    False: (SUFFIX_VERSIONS_HEADED_PROSE, SUFFIX_STATEMENTS_PROSE),
}
STREAMS_OF_KEY = (
    "SELECT DISTINCT stream FROM statements WHERE key_id = %s AND retired_at = 9223372036854775807"
)

# ---------------------------------------------------------------------- the write path
INSERT_STATEMENT = (
    f"INSERT INTO statements ({STATEMENT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_VERSION = (
    "INSERT INTO versions (row_id, fact_id, head_seq, namespace, key_id, stream, value, "
    "valid_from, valid_to, end_kind, end_by, end_rule, end_score, recorded_at, retired_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
RESTORE_VERSION = (
    f"INSERT INTO versions ({VERSION_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
RETIRE_STATEMENT = (
    "UPDATE statements SET retired_at = %s, retire_kind = %s, retire_by = %s, "
    "retire_rule = %s, retire_score = %s WHERE seq = %s AND retired_at = 9223372036854775807"
)
RETIRE_VERSION = (
    "UPDATE versions SET retired_at = %s, retire_kind = %s, retire_by = %s, "
    "retire_rule = %s, retire_score = %s WHERE row_id = %s AND retired_at = 9223372036854775807"
)
# After a restore, new ids continue after the restored ones.
RESTART_KEY_IDS = (
    "SELECT setval(pg_get_serial_sequence('keys', 'key_id'), "
    "coalesce((SELECT max(key_id) FROM keys), 0) + 1, false)"
)
RESTART_ROW_IDS = (
    "SELECT setval(pg_get_serial_sequence('versions', 'row_id'), "
    "coalesce((SELECT max(row_id) FROM versions), 0) + 1, false)"
)
ANALYZE = "ANALYZE keys, statements, versions"

# ---------------------------------------------------------------------- a parallel write
STAMP_WRITE = "SELECT stamp_write(%s, %s, %s, %s, %s, %s)"
# The changes of a parallel write, stamped (see schema.STAMPING): the write path's four
# changes, their provisional seqs, row ids and record time wrapped in the stamped_* functions.
STAMPED_INSERT_STATEMENT = (
    f"INSERT INTO statements ({STATEMENT_COLUMNS}) VALUES (stamped_seq(%s), %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, stamped_time(%s), stamped_time(%s), stamped_time(%s), %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
STAMPED_INSERT_VERSION = (
    "INSERT INTO versions (row_id, fact_id, head_seq, namespace, key_id, stream, value, "
    "valid_from, valid_to, end_kind, end_by, end_rule, end_score, recorded_at, retired_at) "
    "VALUES (stamped_row(%s), %s, stamped_seq(%s), %s, %s, %s, %s, stamped_time(%s), "
    "stamped_time(%s), %s, %s, %s, %s, stamped_time(%s), %s)"
)
STAMPED_RETIRE_STATEMENT = (
    "UPDATE statements SET retired_at = stamped_time(%s), retire_kind = %s, retire_by = %s, "
    "retire_rule = %s, retire_score = %s WHERE seq = stamped_seq(%s) "
    "AND retired_at = 9223372036854775807"
)
STAMPED_RETIRE_VERSION = (
    "UPDATE versions SET retired_at = stamped_time(%s), retire_kind = %s, retire_by = %s, "
    "retire_rule = %s, retire_score = %s WHERE row_id = stamped_row(%s) "
    "AND retired_at = 9223372036854775807"
)
STAMPED = {
    INSERT_STATEMENT: STAMPED_INSERT_STATEMENT,
    INSERT_VERSION: STAMPED_INSERT_VERSION,
    RETIRE_STATEMENT: STAMPED_RETIRE_STATEMENT,
    RETIRE_VERSION: STAMPED_RETIRE_VERSION,
}
"""Each change of the write path by its plain SQL: its stamped form."""

# ---------------------------------------------------------------------- statements
STATEMENT_BY_SEQ = f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE seq = %s"
STATEMENTS_OF_FACT = f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE fact_id = %s ORDER BY seq"
ALL_STATEMENTS = f"SELECT {STATEMENT_COLUMNS} FROM statements ORDER BY seq"
KNOWN_FACT_IDS = "SELECT DISTINCT fact_id FROM statements WHERE fact_id = ANY(%s)"
# Believed prose with this text key and valid time (valid_from NULL: any); params: namespace,
# text_key, valid_to, valid_from, valid_from.
FIND_PROSE = (
    f"SELECT {STATEMENT_COLUMNS} FROM statements WHERE key_id IS NULL "
    "AND retired_at = 9223372036854775807 AND namespace = %s AND text_key = %s "
    "AND valid_to IS NOT DISTINCT FROM %s AND (%s::bigint IS NULL OR valid_from = %s) LIMIT 1"
)

# ---------------------------------------------------------------------- versions
FACT_SELECT = f"SELECT {FACT_COLUMNS} FROM versions v JOIN statements s ON s.seq = v.head_seq"
# A VersionQuery: its scope (one key; a subject's or a relation's keys of a namespace; a whole
# namespace), then valid_at twice, then known_at twice unless the query reads what is believed
# now. Ordered by subject, relation, valid_from and row id, prose last.
QUERY_KEY = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id = %s "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_KEY_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id = %s "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.recorded_at <= %s AND v.retired_at > %s "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_SUBJECT = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = %s AND subject = %s) "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_SUBJECT_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = %s AND subject = %s) "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.recorded_at <= %s AND v.retired_at > %s "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_RELATION = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = %s AND relation = %s) "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_RELATION_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.key_id IN "
    "(SELECT key_id FROM keys WHERE namespace = %s AND relation = %s) "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.recorded_at <= %s AND v.retired_at > %s "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_NAMESPACE = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.namespace = %s "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.retired_at = 9223372036854775807 "
    "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
)
QUERY_NAMESPACE_KNOWN = (
    f"{FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id WHERE v.namespace = %s "
    "AND v.valid_from <= %s AND v.valid_to > %s AND v.recorded_at <= %s AND v.retired_at > %s "
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
# The namespaces with a prefix that hold a visible version; params: the prefix's length, the
# prefix, valid_at twice (then known_at twice).
NAMESPACES = (
    "SELECT DISTINCT namespace FROM versions WHERE left(namespace, %s) = %s "
    "AND valid_from <= %s AND valid_to > %s AND retired_at = 9223372036854775807"
)
NAMESPACES_KNOWN = (
    "SELECT DISTINCT namespace FROM versions WHERE left(namespace, %s) = %s "
    "AND valid_from <= %s AND valid_to > %s AND recorded_at <= %s AND retired_at > %s"
)
KEY_VERSIONS = f"{FACT_SELECT} WHERE v.key_id = %s AND v.recorded_at <= %s ORDER BY v.row_id"
VERSIONS_OF_FACT = f"{FACT_SELECT} WHERE v.fact_id = %s ORDER BY v.row_id"
VERSIONS_BY_ROW = f"{FACT_SELECT} WHERE v.row_id = ANY(%s)"
ALL_VERSIONS = f"SELECT {VERSION_COLUMNS} FROM versions ORDER BY row_id"
LAST_ROW_ID = "SELECT coalesce(max(row_id), 0) FROM versions"
# Which of some version rows a search may show; params: namespace, known_at twice (then
# valid_at twice), the row ids.
VISIBLE_ROWS = (
    "SELECT row_id FROM versions WHERE namespace = %s AND recorded_at <= %s "
    "AND retired_at > %s AND row_id = ANY(%s)"
)
VISIBLE_ROWS_VALID = (
    "SELECT row_id FROM versions WHERE namespace = %s AND recorded_at <= %s "
    "AND retired_at > %s AND valid_from <= %s AND valid_to > %s AND row_id = ANY(%s)"
)
# Every visible row, by row id, at most the LIMIT (one more than the caller's limit tells it
# there are too many).
LIST_VISIBLE_ROWS = (
    "SELECT row_id FROM versions WHERE namespace = %s AND recorded_at <= %s "
    "AND retired_at > %s ORDER BY row_id LIMIT %s"
)
LIST_VISIBLE_ROWS_VALID = (
    "SELECT row_id FROM versions WHERE namespace = %s AND recorded_at <= %s "
    "AND retired_at > %s AND valid_from <= %s AND valid_to > %s ORDER BY row_id LIMIT %s"
)

# ---------------------------------------------------------------------- the change feed
RETIRED_SINCE = (
    f"{FACT_SELECT} WHERE v.retired_at >= %s AND v.retired_at < 9223372036854775807 "
    "AND v.row_id <= %s ORDER BY v.row_id"
)
INSERTED_AFTER = f"{FACT_SELECT} WHERE v.row_id > %s ORDER BY v.row_id LIMIT %s"
COUNT_RETIRED_AT = (
    "SELECT count(*) FROM versions WHERE retired_at = %s AND retired_at < 9223372036854775807"
)
