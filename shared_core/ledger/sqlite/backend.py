"""The SQLite ledger's Backend: its rows in one file, through :class:`SQLiteConnection`.

Every write is one ``BEGIN IMMEDIATE`` transaction (a batch is one too), so several processes
can share a file: writers queue on SQLite's lock, with bounded retries and then a clear error
(:mod:`shared_core.ledger.sqlite.connection`: opening, schema, durability, transactions, error
translation). Its SQL is :mod:`shared_core.ledger.sqlite.sql`; the reads it shares with the
PostgreSQL backend are :class:`~shared_core.ledger.sql_backend.SQLBackend`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.facts import FactKey, Reason
from shared_core.ledger import codecs
from shared_core.ledger.backend import NO_READS, FactRow, WriteReads
from shared_core.ledger.records import LedgerDump, StatementRow
from shared_core.ledger.sql_backend import Params, SQLBackend
from shared_core.ledger.sqlite import sql
from shared_core.ledger.sqlite.connection import Durability, SQLiteConnection
from shared_core.supersession import StreamState, Version

__all__ = ["SQLiteBackend"]


class SQLiteBackend(SQLBackend):
    """Statement and version rows in one SQLite file; see the Backend protocol."""

    reads_ahead = False  # its reads are local: nothing to gain by naming them first
    parallel_writes = False  # SQLite has one writer at a time

    CARDINALITY = sql.CARDINALITY
    SET_CARDINALITY = sql.SET_CARDINALITY
    RELATIONS = sql.RELATIONS
    RELATION_IN_USE = sql.RELATION_IN_USE
    KEY_ID = sql.KEY_ID
    KEYS = sql.KEYS
    STREAMS_OF_KEY = sql.STREAMS_OF_KEY
    STATEMENT_BY_SEQ = sql.STATEMENT_BY_SEQ
    STATEMENTS_OF_FACT = sql.STATEMENTS_OF_FACT
    ALL_STATEMENTS = sql.ALL_STATEMENTS
    FIND_PROSE = sql.FIND_PROSE
    QUERIES = sql.QUERIES
    KEY_VERSIONS = sql.KEY_VERSIONS
    VERSIONS_OF_FACT = sql.VERSIONS_OF_FACT
    ALL_VERSIONS = sql.ALL_VERSIONS
    LAST_ROW_ID = sql.LAST_ROW_ID
    LIST_VISIBLE_ROWS = sql.LIST_VISIBLE_ROWS
    LIST_VISIBLE_ROWS_VALID = sql.LIST_VISIBLE_ROWS_VALID
    RETIRED_SINCE = sql.RETIRED_SINCE
    INSERTED_AFTER = sql.INSERTED_AFTER
    COUNT_RETIRED_AT = sql.COUNT_RETIRED_AT

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability = "full",
        busy_timeout: float = 5.0,
        busy_retries: int = 3,
        create: bool = True,
    ) -> None:
        super().__init__()
        self._db = SQLiteConnection(
            path,
            durability=durability,
            busy_timeout=busy_timeout,
            busy_retries=busy_retries,
            create=create,
        )
        self.path = self._db.path
        self._conn = self._db.conn

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
        self._keep_keys(self._pending_keys)  # keys inserted by it are cached once committed
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
        row = self._one(sql.LAST_RECORD)
        return (row[0], row[1]) if row else (0, 0)

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        self._conn.execute(sql.SET_LAST_RECORD, (recorded_at, seq))

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        found = {key: self.key_id(key) for key in keys}  # local lookups: one each is cheap
        return {key: key_id for key, key_id in found.items() if key_id is not None}

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        found = self.key_id(key)
        if found is not None:
            return found, False
        with self._db.translated():
            cursor = self._conn.execute(sql.INSERT_KEY, tuple(key))
        assert cursor.lastrowid is not None
        self._pending_keys[key] = cursor.lastrowid  # cached for good only once committed
        return cursor.lastrowid, True

    # ------------------------------------------------------------------ streams
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        everything = (key_id, stream, -(2**63))
        with self._db.translated():
            statements = self._conn.execute(sql.STREAM_STATEMENTS, everything).fetchall()
            versions = self._conn.execute(sql.STREAM_VERSIONS, everything).fetchall()
        return codecs.decode_stream_state(statements, versions, start=None)

    def load_tail(self, key_id: int | None, stream: str, before: Instant) -> StreamState:
        suffix = (key_id, stream, key_id, stream, before)
        with self._db.translated():
            statements = self._conn.execute(sql.SUFFIX_STATEMENTS, suffix).fetchall()
            versions = self._conn.execute(sql.SUFFIX_VERSIONS, suffix).fetchall()
        start = codecs.suffix_start([row[3] for row in versions], before)
        return codecs.decode_stream_state(statements, versions, start=start)

    def insert_statement(self, row: StatementRow) -> None:
        self._conn.execute(sql.INSERT_STATEMENT, codecs.statement_columns(row))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        self._conn.execute(sql.RETIRE_STATEMENT, (at, *codecs.reason_columns(reason), seq))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        columns = codecs.new_version_columns(
            version, namespace=namespace, key_id=key_id, stream=stream, at=at
        )
        cursor = self._conn.execute(sql.INSERT_VERSION, columns)
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        self._conn.execute(sql.RETIRE_VERSION, (at, *codecs.reason_columns(reason), row_id))

    # ------------------------------------------------------------------ reads
    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(fact_ids), 500):  # under SQLite's variable limit
            chunk = fact_ids[start : start + 500]
            known.update(row[0] for row in self._all(sql.KNOWN_FACT_IDS_IN + _marks(chunk), chunk))
        return known

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        params: list[Any] = [prefix, len(prefix), prefix, valid_at, valid_at]
        query = sql.NAMESPACES
        if known_at < OPEN - 1:
            query, params = sql.NAMESPACES_KNOWN, [*params, known_at, known_at]
        return [row[0] for row in self._all(query, params)]

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        if not row_ids:
            return []
        rows = self._fact_rows(sql.VERSIONS_BY_ROW_IN + _marks(row_ids), list(row_ids))
        by_id = {row[0].row_id: row for row in rows}
        return [by_id[row_id] for row_id in row_ids if row_id in by_id]

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        if not row_ids:
            return set()
        params: list[Any] = [namespace, known_at, known_at]
        query = sql.VISIBLE_ROWS_IN
        if valid_at is not None:
            query, params = sql.VISIBLE_ROWS_VALID_IN, [*params, valid_at, valid_at]
        return {row[0] for row in self._all(query + _marks(row_ids), [*params, *row_ids])}

    def restore(self, dump: LedgerDump) -> None:
        for relation, cardinality in dump.relations:
            self.set_cardinality(relation, cardinality, dump.last_record[0])
        self._conn.executemany(sql.RESTORE_KEY, [(key_id, *key) for key_id, key in dump.keys])
        for row in dump.statements:
            self.insert_statement(row)
        self._conn.executemany(
            sql.RESTORE_VERSION, [codecs.version_columns(v) for v in dump.versions]
        )
        self.set_last_record(*dump.last_record)

    # ------------------------------------------------------------------ helpers
    def _one(self, statement: str, params: Params = ()) -> Any:
        with self._db.translated():
            return self._conn.execute(statement, params).fetchone()

    def _all(self, statement: str, params: Params) -> list[tuple[Any, ...]]:
        with self._db.translated():
            return self._conn.execute(statement, params).fetchall()

    def _execute(self, statement: str, params: Params) -> None:
        with self._db.translated():
            self._conn.execute(statement, params)


def _marks(values: list[Any]) -> str:
    """The placeholders of an ``IN`` list of ``values``: ``(?, ?, ...)``."""
    return "(" + ", ".join("?" * len(values)) + ")"
