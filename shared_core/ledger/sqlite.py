"""The embedded default ledger: one SQLite file (stdlib sqlite3, WAL, STRICT tables).

Every write is one ``BEGIN IMMEDIATE`` transaction (a batch is one too), so several processes
can share a file: writers queue on SQLite's lock, with bounded retries and then a clear error
(:mod:`shared_core.ledger.sqlite_connection`: opening, schema, durability, transactions, error
translation). This module holds the Backend's queries. All SQL is parameterised; the only
literal spliced into SQL is the ``OPEN`` sentinel constant, so that SQLite can use the partial
indexes over believed rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from shared_core.clock import OPEN, Clock, Instant
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger import schema
from shared_core.ledger.backend import NO_READS, FactRow, VersionQuery, WriteReads
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.records import LedgerDump, StatementRow, VersionRow
from shared_core.ledger.sqlite_connection import Durability, SQLiteConnection
from shared_core.supersession import StreamState, Version

__all__ = ["Durability", "SQLiteBackend", "SQLiteLedger"]


class SQLiteBackend:
    """Statement and version rows in one SQLite file; see the Backend protocol."""

    reads_ahead = False  # its reads are local: nothing to gain by naming them first
    parallel_writes = False  # SQLite has one writer at a time

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability = "full",
        busy_timeout: float = 5.0,
        busy_retries: int = 3,
        create: bool = True,
    ) -> None:
        self._db = SQLiteConnection(
            path,
            durability=durability,
            busy_timeout=busy_timeout,
            busy_retries=busy_retries,
            create=create,
        )
        self.path = self._db.path
        self._conn = self._db.conn
        self._keys: dict[FactKey, int] = {}
        self._pending_keys: dict[FactKey, int] = {}

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self, *, reads: WriteReads = NO_READS) -> Iterator[None]:
        del reads  # see reads_ahead
        with self._db.transaction():
            try:
                yield
            except BaseException:
                self._pending_keys.clear()
                raise
        self._keys.update(self._pending_keys)  # keys inserted by it are cached once committed
        self._pending_keys.clear()

    def snapshot(self) -> AbstractContextManager[None]:
        return self._db.snapshot()

    def moved_record_time(self) -> tuple[Instant, Instant] | None:
        return None  # never parallel: a write is stamped when it is planned

    def revision(self) -> tuple[int, int]:
        return self._db.revision()

    def mirror_lock(self) -> AbstractContextManager[None]:
        return self._db.mirror_lock()

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ bookkeeping
    def last_record(self) -> tuple[Instant, int]:
        row = self._one("SELECT last_recorded_at, last_seq FROM ledger_clock WHERE id = 1")
        return (row[0], row[1]) if row else (0, 0)

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        self._conn.execute(
            "INSERT INTO ledger_clock (id, last_recorded_at, last_seq) VALUES (1, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET last_recorded_at = excluded.last_recorded_at, "
            "last_seq = excluded.last_seq",
            (recorded_at, seq),
        )

    def cardinality(self, relation: str) -> Cardinality | None:
        row = self._one("SELECT cardinality FROM relations WHERE relation = ?", (relation,))
        return Cardinality(row[0]) if row else None

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        self._conn.execute(
            "INSERT INTO relations (relation, cardinality, declared_at) VALUES (?, ?, ?) "
            "ON CONFLICT (relation) DO UPDATE SET cardinality = excluded.cardinality, "
            "declared_at = excluded.declared_at",
            (relation, str(cardinality), at),
        )

    def relation_in_use(self, relation: str) -> bool:
        return self._one("SELECT 1 FROM keys WHERE relation = ? LIMIT 1", (relation,)) is not None

    def key_id(self, key: FactKey) -> int | None:
        found = self._keys.get(key) or self._pending_keys.get(key)
        if found is not None:
            return found
        row = self._one(
            "SELECT key_id FROM keys WHERE namespace = ? AND subject = ? AND relation = ?",
            tuple(key),
        )
        if row is None:
            return None
        self._keys[key] = row[0]
        return int(row[0])

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        found = {key: self.key_id(key) for key in keys}  # local lookups: one each is cheap
        return {key: key_id for key, key_id in found.items() if key_id is not None}

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        found = self.key_id(key)
        if found is not None:
            return found, False
        with self._db.translated():
            cursor = self._conn.execute(
                "INSERT INTO keys (namespace, subject, relation) VALUES (?, ?, ?)", tuple(key)
            )
        assert cursor.lastrowid is not None
        self._pending_keys[key] = cursor.lastrowid  # cached for good only once committed
        return cursor.lastrowid, True

    # ------------------------------------------------------------------ streams
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        everything = (key_id, stream, -(2**63))
        with self._db.translated():
            statements = self._conn.execute(schema.STREAM_STATEMENTS, everything).fetchall()
            versions = self._conn.execute(schema.STREAM_VERSIONS, everything).fetchall()
        return schema.decode_stream_state(statements, versions, start=None)

    def load_tail(self, key_id: int | None, stream: str, before: Instant) -> StreamState:
        suffix = (key_id, stream, key_id, stream, before)
        with self._db.translated():
            statements = self._conn.execute(schema.SUFFIX_STATEMENTS, suffix).fetchall()
            versions = self._conn.execute(schema.SUFFIX_VERSIONS, suffix).fetchall()
        start = schema.suffix_start([row[3] for row in versions], before)
        return schema.decode_stream_state(statements, versions, start=start)

    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        rows = self._conn.execute(
            f"SELECT DISTINCT stream FROM statements WHERE key_id IS ? AND {schema.BELIEVED_SQL}",
            (key_id,),
        )
        return {stream: self.load_stream(key_id, stream) for (stream,) in rows.fetchall()}

    def insert_statement(self, row: StatementRow) -> None:
        self._conn.execute(schema.INSERT_STATEMENT, schema.statement_columns(row))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        self._conn.execute(schema.RETIRE_STATEMENT, (at, *schema.reason_columns(reason), seq))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        cursor = self._conn.execute(
            schema.INSERT_VERSION,
            (
                version.fact_id,
                version.head_seq,
                namespace,
                key_id,
                stream,
                version.value,
                version.valid_from,
                version.valid_to,
                *schema.reason_columns(version.end),
                at,
                OPEN,
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        self._conn.execute(schema.RETIRE_VERSION, (at, *schema.reason_columns(reason), row_id))

    # ------------------------------------------------------------------ reads
    def statement(self, seq: int) -> StatementRow:
        return self._statements("WHERE seq = ?", (seq,))[0]

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        known: set[str] = set()
        with self._db.translated():
            for start in range(0, len(fact_ids), 500):  # under SQLite's variable limit
                chunk = fact_ids[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT DISTINCT fact_id FROM statements WHERE fact_id IN ({marks})", chunk
                )
                known.update(row[0] for row in rows)
        return known

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        return self._statements("WHERE fact_id = ? ORDER BY seq", (fact_id,))

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        clause = (
            f"WHERE key_id IS NULL AND {schema.BELIEVED_SQL} AND namespace = ? AND text_key = ? "
            "AND valid_to IS ? AND (? IS NULL OR valid_from = ?) LIMIT 1"
        )
        found = self._statements(clause, (namespace, text_key, valid_to, valid_from, valid_from))
        return found[0] if found else None

    def query(self, query: VersionQuery) -> list[FactRow]:
        where = ["v.valid_from <= ?", "v.valid_to > ?"]
        params: list[Any] = [query.valid_at, query.valid_at]
        if query.known_at >= OPEN - 1:
            where.append(f"v.{schema.BELIEVED_SQL}")
        else:
            where += ["v.recorded_at <= ?", "v.retired_at > ?"]
            params += [query.known_at, query.known_at]
        if query.subject is not None and query.relation is not None:
            key_id = self.key_id(FactKey(query.namespace, query.subject, query.relation))
            if key_id is None:
                return []
            where.insert(0, "v.key_id = ?")  # one key: its own index, whatever the ledger size
            params.insert(0, key_id)
        elif query.subject is not None or query.relation is not None:
            column = "subject" if query.subject is not None else "relation"
            where.insert(
                0, f"v.key_id IN (SELECT key_id FROM keys WHERE namespace = ? AND {column} = ?)"
            )
            params[:0] = [query.namespace, getattr(query, column)]
        else:
            where.insert(0, "v.namespace = ?")
            params.insert(0, query.namespace)
        sql = (
            f"{schema.FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id "
            f"WHERE {' AND '.join(where)} "
            "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
        )
        return self._fact_rows(sql, params)

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        where = ["namespace >= ?", "substr(namespace, 1, ?) = ?", "valid_from <= ?"]
        params: list[Any] = [prefix, len(prefix), prefix, valid_at, valid_at]
        where.append("valid_to > ?")
        if known_at >= OPEN - 1:
            where.append(schema.BELIEVED_SQL)
        else:
            where += ["recorded_at <= ?", "retired_at > ?"]
            params += [known_at, known_at]
        sql = f"SELECT DISTINCT namespace FROM versions WHERE {' AND '.join(where)}"
        with self._db.translated():
            return [row[0] for row in self._conn.execute(sql, params).fetchall()]

    def key_versions(self, key_id: int, known_at: Instant) -> list[FactRow]:
        sql = f"{schema.FACT_SELECT} WHERE v.key_id = ? AND v.recorded_at <= ? ORDER BY v.row_id"
        return self._fact_rows(sql, [key_id, known_at])

    def versions_of_fact(self, fact_id: str) -> list[FactRow]:
        return self._fact_rows(
            f"{schema.FACT_SELECT} WHERE v.fact_id = ? ORDER BY v.row_id", [fact_id]
        )

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        if not row_ids:
            return []
        marks = ", ".join("?" * len(row_ids))
        rows = self._fact_rows(f"{schema.FACT_SELECT} WHERE v.row_id IN ({marks})", list(row_ids))
        by_id = {row[0].row_id: row for row in rows}
        return [by_id[row_id] for row_id in row_ids if row_id in by_id]

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        if not row_ids:
            return set()
        params: list[Any] = [namespace, known_at, known_at]
        sql = schema.VISIBLE_ROWS
        if valid_at is not None:
            sql, params = schema.VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        marks = ", ".join("?" * len(row_ids))
        with self._db.translated():
            rows = self._conn.execute(f"{sql} AND row_id IN ({marks})", [*params, *row_ids])
            return {row[0] for row in rows}

    def list_visible_rows(
        self, namespace: str, valid_at: Instant | None, known_at: Instant, limit: int
    ) -> list[int] | None:
        params: list[Any] = [namespace, known_at, known_at]
        sql = schema.LIST_VISIBLE_ROWS
        if valid_at is not None:
            sql, params = schema.LIST_VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        with self._db.translated():
            rows = self._conn.execute(sql, [*params, limit + 1]).fetchall()
        return None if len(rows) > limit else [row[0] for row in rows]

    def changed_versions(
        self, after_row: int, retired_from: Instant, *, strict: bool, limit: int
    ) -> list[FactRow]:
        start = retired_from + 1 if strict else retired_from
        retired = self._fact_rows(schema.RETIRED_SINCE, [start, after_row])
        inserted = self._fact_rows(schema.INSERTED_AFTER, [after_row, limit])
        return retired + inserted

    def count_retired_at(self, at: Instant) -> int:
        return int(self._one(schema.COUNT_RETIRED_AT, (at,))[0])

    def last_row_id(self) -> int:
        return int(self._one("SELECT coalesce(max(row_id), 0) FROM versions")[0])

    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        statements = self._statements("ORDER BY seq", ())
        with self._db.translated():
            rows = self._conn.execute(
                f"SELECT {schema.VERSION_COLUMNS} FROM versions ORDER BY row_id"
            )
            return statements, [schema.decode_version(row) for row in rows.fetchall()]

    def relations(self) -> dict[str, Cardinality]:
        with self._db.translated():
            rows = self._conn.execute("SELECT relation, cardinality FROM relations").fetchall()
        return {relation: Cardinality(value) for relation, value in rows}

    def keys(self) -> dict[int, FactKey]:
        with self._db.translated():
            rows = self._conn.execute("SELECT key_id, namespace, subject, relation FROM keys")
            return {row[0]: FactKey(*row[1:]) for row in rows.fetchall()}

    def restore(self, dump: LedgerDump) -> None:
        for relation, cardinality in dump.relations:
            self.set_cardinality(relation, cardinality, dump.last_record[0])
        self._conn.executemany(
            "INSERT INTO keys (key_id, namespace, subject, relation) VALUES (?, ?, ?, ?)",
            [(key_id, *key) for key_id, key in dump.keys],
        )
        for row in dump.statements:
            self.insert_statement(row)
        self._conn.executemany(
            schema.RESTORE_VERSION, [schema.version_columns(v) for v in dump.versions]
        )
        self.set_last_record(*dump.last_record)

    # ------------------------------------------------------------------ helpers
    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self._db.translated():
            return self._conn.execute(sql, params).fetchone()

    def _statements(self, clause: str, params: tuple[Any, ...]) -> list[StatementRow]:
        with self._db.translated():
            rows = self._conn.execute(
                f"SELECT {schema.STATEMENT_COLUMNS} FROM statements {clause}", params
            ).fetchall()
        return [schema.decode_statement(row) for row in rows]

    def _fact_rows(self, sql: str, params: list[Any]) -> list[FactRow]:
        with self._db.translated():
            rows = self._conn.execute(sql, params).fetchall()
        return [
            (
                schema.decode_version(row[: schema.N_VERSION]),
                schema.decode_statement(row[schema.N_VERSION :]),
            )
            for row in rows
        ]


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
