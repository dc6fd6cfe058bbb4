"""The server ledger: PostgreSQL through psycopg 3 and its connection pool.

``pip install "temporal-rag[postgres]"``. The rows, rules and guarantees are the SQLite
ledger's; one ledger lives in one PostgreSQL schema (``temporal_rag`` unless told), so several
ledgers share a database. Every write is one transaction holding the ledger's advisory lock,
taken with a lock timeout and bounded retries (then :class:`LedgerBusyError`): writers from any
number of processes and connections see each other's commits and never interleave a
supersession, and version row ids grow in commit order, which the change feed relies on. A
lost connection is :class:`LedgerUnavailableError` and leaves nothing half-written (the
transaction rolls back on the server); the pool replaces the connection for the next call.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from shared_core.clock import OPEN, Clock, Instant
from shared_core.errors import (
    InvalidInputError,
    LedgerBusyError,
    LedgerError,
    LedgerNotFoundError,
    LedgerUnavailableError,
    MissingDependencyError,
    NotALedgerError,
    SchemaVersionError,
)
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger import postgres_schema
from shared_core.ledger import schema as codecs
from shared_core.ledger.backend import FactRow, VersionQuery
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.records import LedgerDump, StatementRow, VersionRow
from shared_core.supersession import StreamState, Version

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingDependencyError(
            'PostgresLedger needs psycopg 3 and its pool: pip install "temporal-rag[postgres]"'
        ) from exc
    return psycopg, psycopg_pool


class PostgresBackend:
    """Statement and version rows in one PostgreSQL schema; see the Backend protocol."""

    def __init__(
        self,
        url: str,
        *,
        schema_name: str = "temporal_rag",
        pool_size: int = 2,
        lock_timeout: float = 5.0,
        busy_retries: int = 3,
        connect_timeout: float = 10.0,
        create: bool = True,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
            raise InvalidInputError(
                "url", f"is {url!r}", "pass a URL such as postgresql://user@host:5432/dbname"
            )
        if not isinstance(schema_name, str) or not _SCHEMA_NAME.fullmatch(schema_name):
            raise InvalidInputError(
                "schema", f"is {schema_name!r}", "use lower-case letters, digits and _"
            )
        for field, value in (("lock_timeout", lock_timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise InvalidInputError(field, f"is {value!r}", "pass a positive number of seconds")
        psycopg, pool_module = _psycopg()
        self._errors = psycopg.errors
        self._psycopg = psycopg
        self.url = url
        self.schema_name = schema_name
        self._where = f"{_redacted(url)} (schema {schema_name})"
        self._write_lock_id = lock_id(schema_name)
        self._mirror_lock_id = lock_id(f"{schema_name}:mirror")
        self._mirror = threading.Lock()
        self._lock_timeout_ms = int(lock_timeout * 1000)
        self._busy_retries = busy_retries
        self._keys: dict[FactKey, int] = {}
        self._pending_keys: dict[FactKey, int] = {}
        self._commits = 0
        self._conn: Any = None  # the connection of the open transaction or snapshot
        self._clock_moved = False  # the open transaction has moved the revision already
        self._pool = pool_module.ConnectionPool(
            url,
            min_size=1,
            max_size=max(2, pool_size),  # the mirror lock holds one while the ledger reads
            kwargs={"connect_timeout": max(1, int(connect_timeout)), "autocommit": True},
            configure=self._configure,
            check=pool_module.ConnectionPool.check_connection,
            timeout=connect_timeout,
            open=False,
            name=f"temporal-rag-{schema_name}",
        )
        try:
            with self._translated():
                self._pool.open(wait=True, timeout=connect_timeout)
                self._open_schema(create=create)
        except BaseException:
            self._pool.close()
            raise

    def _configure(self, conn: Any) -> None:
        from psycopg import sql

        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema_name)))

    # ------------------------------------------------------------------ setup
    def _open_schema(self, *, create: bool) -> None:
        from psycopg import sql

        with self._pool.connection() as conn:
            exists = conn.execute(
                "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s",
                (self.schema_name,),
            ).fetchone()
            if exists is None and not create:
                raise LedgerNotFoundError(f"no ledger at {self._where}: the schema does not exist")
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_lock_id,))
                name = sql.Identifier(self.schema_name)
                conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
                tables = self._table_names(conn)
                if tables and "schema_migrations" not in tables:
                    raise NotALedgerError(
                        f"{self._where} holds tables but no temporal-rag ledger (nothing changed)"
                    )
                if not tables:
                    if not create:
                        raise LedgerNotFoundError(f"{self._where} holds no ledger")
                    for statement in postgres_schema.SCHEMA:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (%s, %s)",
                        (postgres_schema.SCHEMA_VERSION, int(time.time() * 1_000_000)),
                    )
                found = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
                if found is None or found > postgres_schema.SCHEMA_VERSION:
                    raise SchemaVersionError(
                        f"{self._where} has schema version {found}; this temporal-rag reads up "
                        f"to {postgres_schema.SCHEMA_VERSION}: upgrade temporal-rag"
                    )
                for version in range(found + 1, postgres_schema.SCHEMA_VERSION + 1):
                    for statement in postgres_schema.MIGRATIONS[version]:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (%s, %s)",
                        (version, int(time.time() * 1_000_000)),
                    )

    def _table_names(self, conn: Any) -> set[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (self.schema_name,),
        )
        return {row[0] for row in rows}

    @contextmanager
    def _translated(self) -> Iterator[None]:
        errors = self._errors
        try:
            yield
        except (errors.LockNotAvailable, errors.QueryCanceled) as exc:
            raise LedgerBusyError(f"ledger {self._where} is busy: {exc}") from exc
        except self._psycopg.OperationalError as exc:  # connection refused or lost, pool timeout
            raise LedgerUnavailableError(
                f"ledger {self._where} is unreachable: {exc}; nothing of the failed call was "
                "kept, retry once the server answers"
            ) from exc
        except self._psycopg.Error as exc:
            raise LedgerError(f"ledger {self._where}: {exc}") from exc

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._translated(), self._pool.connection() as conn:
            self._begin_locked(conn)
            self._conn = conn
            try:
                yield
                if not self._clock_moved:  # set_last_record moves the revision with the clock
                    conn.execute("UPDATE ledger_clock SET revision = revision + 1 WHERE id = 1")
                conn.execute("COMMIT")
            except BaseException:
                self._pending_keys.clear()
                with suppress(self._psycopg.Error):  # a lost connection has rolled back already
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._conn = None
                self._clock_moved = False
        self._commits += 1
        self._keys.update(self._pending_keys)
        self._pending_keys.clear()

    def _begin_locked(self, conn: Any) -> None:
        """BEGIN and take the ledger's write lock (one round trip), with bounded retries."""
        for attempt in range(self._busy_retries + 1):
            conn.execute("BEGIN")
            try:
                conn.execute(
                    "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s)",
                    (f"{self._lock_timeout_ms}ms", self._write_lock_id),
                )
                return
            except self._errors.LockNotAvailable as exc:
                conn.execute("ROLLBACK")
                if attempt == self._busy_retries:
                    raise LedgerBusyError(
                        f"ledger {self._where} stayed locked by other writers for "
                        f"{self._busy_retries + 1} x {self._lock_timeout_ms / 1000:g}s; retry "
                        "later or raise lock_timeout"
                    ) from exc
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        if self._conn is not None:  # already inside a transaction: its view is consistent
            yield
            return
        with self._translated(), self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._conn = conn
            try:
                yield
            finally:
                self._conn = None
                conn.execute("COMMIT")

    @contextmanager
    def mirror_lock(self) -> Iterator[None]:
        # A session lock on a connection of its own: the mirror's reads go on in between. The
        # thread lock first, so that waiting threads of this process do not take the pool.
        with self._mirror, self._translated(), self._pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (self._mirror_lock_id,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (self._mirror_lock_id,))

    def revision(self) -> tuple[int, int]:
        row = self._one("SELECT revision FROM ledger_clock WHERE id = 1")
        return int(row[0]), self._commits

    def close(self) -> None:
        self._pool.close()

    # ------------------------------------------------------------------ bookkeeping
    def last_record(self) -> tuple[Instant, int]:
        row = self._one("SELECT last_recorded_at, last_seq FROM ledger_clock WHERE id = 1")
        return int(row[0]), int(row[1])

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        self._execute(
            "UPDATE ledger_clock SET last_recorded_at = %s, last_seq = %s, "
            "revision = revision + 1 WHERE id = 1",
            (recorded_at, seq),
        )
        self._clock_moved = True

    def cardinality(self, relation: str) -> Cardinality | None:
        row = self._one("SELECT cardinality FROM relations WHERE relation = %s", (relation,))
        return Cardinality(row[0]) if row else None

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        self._execute(
            "INSERT INTO relations (relation, cardinality, declared_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (relation) DO UPDATE SET cardinality = excluded.cardinality, "
            "declared_at = excluded.declared_at",
            (relation, str(cardinality), at),
        )

    def relation_in_use(self, relation: str) -> bool:
        return self._one("SELECT 1 FROM keys WHERE relation = %s LIMIT 1", (relation,)) is not None

    def key_id(self, key: FactKey) -> int | None:
        found = self._keys.get(key) or self._pending_keys.get(key)
        if found is not None:
            return found
        row = self._one(
            "SELECT key_id FROM keys WHERE namespace = %s AND subject = %s AND relation = %s",
            tuple(key),
        )
        if row is None:
            return None
        self._keys[key] = int(row[0])
        return int(row[0])

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        found = self.key_id(key)
        if found is not None:
            return found, False
        row = self._one(
            "INSERT INTO keys (namespace, subject, relation) VALUES (%s, %s, %s) RETURNING key_id",
            tuple(key),
        )
        self._pending_keys[key] = int(row[0])  # cached for good only once committed
        return int(row[0]), True

    # ------------------------------------------------------------------ streams
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        everything = -(2**63)
        statements = self._stream_rows("statements", key_id, stream, everything)
        versions = self._stream_rows("versions", key_id, stream, everything)
        return _state(statements, versions, complete=True)

    def load_tail(self, key_id: int | None, stream: str) -> StreamState:
        last = self._stream_rows("last", key_id, stream, None)
        if not last:
            return self.load_stream(key_id, stream)
        statements = self._stream_rows("statements", key_id, stream, last[0][3])
        return _state(statements, last, complete=False)

    def _stream_rows(
        self, what: str, key_id: int | None, stream: str, since: Instant | None
    ) -> list[tuple[Any, ...]]:
        """A stream's rows: a key's by its id, prose by ``key_id IS NULL`` (both indexed)."""
        keyed = key_id is not None
        sql = {
            ("statements", True): postgres_schema.STREAM_STATEMENTS,
            ("statements", False): postgres_schema.STREAM_STATEMENTS_PROSE,
            ("versions", True): postgres_schema.STREAM_VERSIONS,
            ("versions", False): postgres_schema.STREAM_VERSIONS_PROSE,
            ("last", True): postgres_schema.LAST_VERSION,
            ("last", False): postgres_schema.LAST_VERSION_PROSE,
        }[(what, keyed)]
        params = (*((key_id,) if keyed else ()), stream, *(() if since is None else (since,)))
        return self._all(sql, params)

    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        rows = self._all(
            "SELECT DISTINCT stream FROM statements WHERE key_id = %s AND "
            f"{postgres_schema.BELIEVED_SQL}",
            (key_id,),
        )
        return {stream: self.load_stream(key_id, stream) for (stream,) in rows}

    def insert_statement(self, row: StatementRow) -> None:
        self._execute(postgres_schema.INSERT_STATEMENT, codecs.statement_columns(row))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        self._execute(postgres_schema.RETIRE_STATEMENT, (at, *codecs.reason_columns(reason), seq))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        row = self._one(
            postgres_schema.INSERT_VERSION,
            (
                version.fact_id,
                version.head_seq,
                namespace,
                key_id,
                stream,
                version.value,
                version.valid_from,
                version.valid_to,
                *codecs.reason_columns(version.end),
                at,
                OPEN,
            ),
        )
        return int(row[0])

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        self._execute(postgres_schema.RETIRE_VERSION, (at, *codecs.reason_columns(reason), row_id))

    # ------------------------------------------------------------------ reads
    def statement(self, seq: int) -> StatementRow:
        return self._statements("WHERE seq = %s", (seq,))[0]

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        rows = self._all(
            "SELECT DISTINCT fact_id FROM statements WHERE fact_id = ANY(%s)", (fact_ids,)
        )
        return {row[0] for row in rows}

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        return self._statements("WHERE fact_id = %s ORDER BY seq", (fact_id,))

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        clause = (
            f"WHERE key_id IS NULL AND {postgres_schema.BELIEVED_SQL} AND namespace = %s "
            "AND text_key = %s AND valid_to IS NOT DISTINCT FROM %s "
            "AND (%s::bigint IS NULL OR valid_from = %s) LIMIT 1"
        )
        found = self._statements(clause, (namespace, text_key, valid_to, valid_from, valid_from))
        return found[0] if found else None

    def query(self, query: VersionQuery) -> list[FactRow]:
        where = ["v.valid_from <= %s", "v.valid_to > %s"]
        params: list[Any] = [query.valid_at, query.valid_at]
        if query.known_at >= OPEN - 1:
            where.append(f"v.{postgres_schema.BELIEVED_SQL}")
        else:
            where += ["v.recorded_at <= %s", "v.retired_at > %s"]
            params += [query.known_at, query.known_at]
        if query.subject is not None and query.relation is not None:
            key_id = self.key_id(FactKey(query.namespace, query.subject, query.relation))
            if key_id is None:
                return []
            where.insert(0, "v.key_id = %s")
            params.insert(0, key_id)
        elif query.subject is not None or query.relation is not None:
            column = "subject" if query.subject is not None else "relation"
            where.insert(
                0, f"v.key_id IN (SELECT key_id FROM keys WHERE namespace = %s AND {column} = %s)"
            )
            params[:0] = [query.namespace, getattr(query, column)]
        else:
            where.insert(0, "v.namespace = %s")
            params.insert(0, query.namespace)
        sql = (
            f"{postgres_schema.FACT_SELECT} LEFT JOIN keys k ON k.key_id = v.key_id "
            f"WHERE {' AND '.join(where)} "
            "ORDER BY v.key_id IS NULL, k.subject, k.relation, v.valid_from, v.row_id"
        )
        return self._fact_rows(sql, params)

    def key_versions(self, key_id: int, known_at: Instant) -> list[FactRow]:
        sql = (
            f"{postgres_schema.FACT_SELECT} WHERE v.key_id = %s AND v.recorded_at <= %s "
            "ORDER BY v.row_id"
        )
        return self._fact_rows(sql, [key_id, known_at])

    def versions_of_fact(self, fact_id: str) -> list[FactRow]:
        return self._fact_rows(
            f"{postgres_schema.FACT_SELECT} WHERE v.fact_id = %s ORDER BY v.row_id", [fact_id]
        )

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        if not row_ids:
            return []
        rows = self._fact_rows(
            f"{postgres_schema.FACT_SELECT} WHERE v.row_id = ANY(%s)", [list(row_ids)]
        )
        by_id = {row[0].row_id: row for row in rows}
        return [by_id[row_id] for row_id in row_ids if row_id in by_id]

    def changed_versions(
        self, after_row: int, retired_from: Instant, *, strict: bool, limit: int
    ) -> list[FactRow]:
        start = retired_from + 1 if strict else retired_from
        retired = self._fact_rows(postgres_schema.RETIRED_SINCE, [start, after_row])
        inserted = self._fact_rows(postgres_schema.INSERTED_AFTER, [after_row, limit])
        return retired + inserted

    def count_retired_at(self, at: Instant) -> int:
        return int(self._one(postgres_schema.COUNT_RETIRED_AT, (at,))[0])

    def last_row_id(self) -> int:
        return int(self._one("SELECT coalesce(max(row_id), 0) FROM versions")[0])

    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        statements = self._statements("ORDER BY seq", ())
        rows = self._all(
            f"SELECT {postgres_schema.VERSION_COLUMNS} FROM versions ORDER BY row_id", ()
        )
        return statements, [codecs.decode_version(row) for row in rows]

    def relations(self) -> dict[str, Cardinality]:
        rows = self._all("SELECT relation, cardinality FROM relations", ())
        return {relation: Cardinality(value) for relation, value in rows}

    def keys(self) -> dict[int, FactKey]:
        rows = self._all("SELECT key_id, namespace, subject, relation FROM keys", ())
        return {int(row[0]): FactKey(*row[1:]) for row in rows}

    def restore(self, dump: LedgerDump) -> None:
        for relation, cardinality in dump.relations:
            self.set_cardinality(relation, cardinality, dump.last_record[0])
        with self._cursor() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO keys (key_id, namespace, subject, relation) VALUES (%s, %s, %s, %s)",
                [(key_id, *key) for key_id, key in dump.keys],
            )
            for row in dump.statements:
                self.insert_statement(row)
            cursor.executemany(
                postgres_schema.RESTORE_VERSION,
                [codecs.version_columns(v) for v in dump.versions],
            )
            # new ids continue after the restored ones
            cursor.execute(postgres_schema.RESTART_KEY_IDS)
            cursor.execute(postgres_schema.RESTART_ROW_IDS)
            # fresh planner statistics: before autovacuum comes by, a bulk-loaded table looks
            # empty to the planner, and a key's reads scanned the believed rows of every key
            cursor.execute("ANALYZE keys, statements, versions")
        self.set_last_record(*dump.last_record)

    # ------------------------------------------------------------------ helpers
    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        """The open transaction's or snapshot's connection, else a pooled one for one call."""
        with self._translated():
            if self._conn is not None:
                yield self._conn
                return
            with self._pool.connection() as conn:
                yield conn

    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        with self._cursor() as conn:
            conn.execute(sql, params)

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self._cursor() as conn:
            return conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple[Any, ...] | list[Any]) -> list[tuple[Any, ...]]:
        with self._cursor() as conn:
            return list(conn.execute(sql, params).fetchall())

    def _statements(self, clause: str, params: tuple[Any, ...]) -> list[StatementRow]:
        rows = self._all(
            f"SELECT {postgres_schema.STATEMENT_COLUMNS} FROM statements {clause}", params
        )
        return [codecs.decode_statement(row) for row in rows]

    def _fact_rows(self, sql: str, params: list[Any]) -> list[FactRow]:
        return [
            (
                codecs.decode_version(row[: postgres_schema.N_VERSION]),
                codecs.decode_statement(row[postgres_schema.N_VERSION :]),
            )
            for row in self._all(sql, params)
        ]


def _state(
    statements: list[tuple[Any, ...]], versions: list[tuple[Any, ...]], *, complete: bool
) -> StreamState:
    return StreamState(
        tuple(codecs.decode_stream_statement(row) for row in statements),
        tuple(codecs.decode_stream_version(row) for row in versions),
        complete=complete,
    )


def lock_id(schema_name: str) -> int:
    """The ledger's advisory lock: a signed 64-bit number derived from its schema's name."""
    digest = hashlib.blake2b(f"temporal-rag:{schema_name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


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
        self.url = _redacted(url)
        self.schema = schema


__all__ = ["PostgresBackend", "PostgresLedger", "lock_id"]
