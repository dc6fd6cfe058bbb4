"""The PostgreSQL ledger's connections: the pool, error translation and the transactions.

A write is one transaction holding the ledger's advisory lock, taken with a lock timeout and
bounded retries (then :class:`LedgerBusyError`). It runs in psycopg's pipeline mode: a statement
is sent without waiting for the one before, and the client waits for the server only where it
reads a result. The write lock is held for as short a time as the reads of a write allow: the
BEGIN, the lock and the first reads go in one round trip, the inserts and updates in none, the
COMMIT in one. Errors of statements nobody read come back at the next read or at the COMMIT, as
the same psycopg exceptions, translated here.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from shared_core.errors import (
    InvalidInputError,
    LedgerBusyError,
    LedgerError,
    LedgerUnavailableError,
    MissingDependencyError,
)
from shared_core.ledger.backend import ParallelWriteRefused, WriteReads
from shared_core.ledger.postgres import schema
from shared_core.ledger.postgres import sql as statements

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

Opening = Callable[[Any], None]
"""Queues a transaction's first reads on its connection, right after the lock, and reads them."""


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingDependencyError(
            'PostgresLedger needs psycopg 3 and its pool: pip install "temporal-rag[postgres]"'
        ) from exc
    if not psycopg.Pipeline.is_supported():
        raise MissingDependencyError(
            "PostgresLedger needs psycopg's pipeline mode (libpq 14 or later): "
            'pip install "temporal-rag[postgres]" (psycopg[binary] ships its own libpq)'
        )
    return psycopg, psycopg_pool


def _check_arguments(url: str, schema_name: str, lock_timeout: float, connect: float) -> None:
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInputError(
            "url", f"is {url!r}", "pass a URL such as postgresql://user@host:5432/dbname"
        )
    if not isinstance(schema_name, str) or not _SCHEMA_NAME.fullmatch(schema_name):
        raise InvalidInputError(
            "schema", f"is {schema_name!r}", "use lower-case letters, digits and _"
        )
    for field, value in (("lock_timeout", lock_timeout), ("connect_timeout", connect)):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise InvalidInputError(field, f"is {value!r}", "pass a positive number of seconds")


class PostgresConnections:
    """The pooled connections of one ledger (one PostgreSQL schema) and its transactions.

    Not thread-safe by itself, like a backend: the ledger serialises calls. ``conn`` is the
    connection of the open transaction or snapshot (None between them).
    """

    def __init__(
        self,
        url: str,
        *,
        schema_name: str,
        pool_size: int,
        lock_timeout: float,
        busy_retries: int,
        connect_timeout: float,
    ) -> None:
        _check_arguments(url, schema_name, lock_timeout, connect_timeout)
        psycopg, pool_module = _psycopg()
        self._psycopg = psycopg
        self._errors = psycopg.errors
        self.schema_name = schema_name
        self.where = f"{redacted(url)} (schema {schema_name})"
        self._write_lock_id = lock_id(schema_name)
        self._mirror_lock_id = lock_id(f"{schema_name}:mirror")
        self.stamp_lock_id = lock_id(f"{schema_name}:stamp")  # see schema.STAMPING
        self._mirror = threading.Lock()
        self._lock_timeout_ms = int(lock_timeout * 1000)
        self._busy_retries = busy_retries
        self._connect_timeout = connect_timeout
        self.conn: Any = None
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

    def _configure(self, conn: Any) -> None:
        from psycopg import sql

        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema_name)))

    def open(self, *, create: bool) -> None:
        """Connect, and create or upgrade the ledger's schema (``create=False``: open only)."""
        try:
            with self.translated():
                self._pool.open(wait=True, timeout=self._connect_timeout)
                with self._pool.connection() as conn:
                    schema.install(
                        conn, self.schema_name, self._write_lock_id, self.where, create=create
                    )
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        """Close every connection (idempotent)."""
        self._pool.close()

    @contextmanager
    def translated(self) -> Iterator[None]:
        """psycopg's errors as the ledger's: busy, unavailable, or any other LedgerError."""
        try:
            yield
        except self._psycopg.Error as exc:
            raise self._translated(exc) from exc

    def _translated(self, exc: Any) -> Exception:
        """psycopg's ``exc`` as the ledger's error (a refused stamp stays inside the ledger)."""
        if exc.sqlstate == schema.STAMP_REFUSED:
            return ParallelWriteRefused(str(exc))
        if isinstance(exc, self._errors.LockNotAvailable | self._errors.QueryCanceled):
            return LedgerBusyError(f"ledger {self.where} is busy: {exc}")
        if isinstance(exc, self._psycopg.OperationalError):  # refused or lost, pool timeout
            return LedgerUnavailableError(
                f"ledger {self.where} is unreachable: {exc}; nothing of the failed call was "
                "kept, retry once the server answers"
            )
        return LedgerError(f"ledger {self.where}: {exc}")

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """The open transaction's or snapshot's connection, else a pooled one for one call."""
        with self.translated():
            if self.conn is not None:
                yield self.conn
                return
            with self._pool.connection() as conn:
                yield conn

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(
        self, opening: Opening, closing: Callable[[Any], None], *, shared: bool = False
    ) -> Iterator[None]:
        """A write transaction in pipeline mode, holding the ledger's write lock (``shared``:
        in shared mode, beside other parallel writes; they lock what they touch themselves).

        ``opening`` reads what the write starts from (in the round trip of the lock);
        ``closing`` queues the last statements before the COMMIT. Any exception rolls back.
        """
        with self.translated(), self._pool.connection() as conn, conn.pipeline() as pipeline:
            try:
                self._begin_locked(conn, pipeline, opening, shared)
                self.conn = conn
                yield
                closing(conn)
                conn.execute("COMMIT")
                pipeline.sync()  # errors of statements whose results nobody read come here
            except BaseException:
                self._roll_back(conn, pipeline)
                raise
            finally:
                self.conn = None

    def _begin_locked(self, conn: Any, pipeline: Any, opening: Opening, shared: bool) -> None:
        """BEGIN, take the write lock and run ``opening`` (one round trip); bounded retries."""
        for attempt in range(self._busy_retries + 1):
            try:
                conn.execute("BEGIN")
                conn.execute(
                    statements.WRITE_LOCKS[shared],
                    (f"{self._lock_timeout_ms}ms", self._write_lock_id),
                )
                # Statements after the lock's: in READ COMMITTED each takes its snapshot when it
                # starts, so they see every commit made before the lock was granted.
                opening(conn)
                return
            except self._errors.LockNotAvailable as exc:
                self._roll_back(conn, pipeline)
                if attempt == self._busy_retries:
                    raise LedgerBusyError(
                        f"ledger {self.where} stayed locked by other writers for "
                        f"{self._busy_retries + 1} x {self._lock_timeout_ms / 1000:g}s; retry "
                        "later or raise lock_timeout"
                    ) from exc
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))

    def _roll_back(self, conn: Any, pipeline: Any) -> None:
        """End a failed transaction: collect what the pipeline still owes, then roll back."""
        with suppress(self._psycopg.Error):  # the errors the server skipped statements after
            pipeline.sync()
        # psycopg's rollback also forgets the statements it prepared: one it asked the server
        # to prepare in a pipeline that an error aborted was never prepared.
        with suppress(self._psycopg.Error):  # a lost connection has rolled back already
            conn.rollback()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One consistent view for several reads (a read-only REPEATABLE READ transaction)."""
        if self.conn is not None:  # already inside a transaction: its view is consistent
            yield
            return
        with self.translated(), self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self.conn = conn
            try:
                yield
            finally:
                self.conn = None
                conn.execute("COMMIT")

    @contextmanager
    def mirror_lock(self) -> Iterator[None]:
        """The ledger's mirror lock, held on a connection of its own (see Backend)."""
        # A session lock on a connection of its own: the mirror's reads go on in between. The
        # thread lock first, so that waiting threads of this process do not take the pool.
        with self._mirror, self.translated(), self._pool.connection() as conn:
            conn.execute(statements.MIRROR_LOCK, (self._mirror_lock_id,))
            try:
                yield
            finally:
                conn.execute(statements.MIRROR_UNLOCK, (self._mirror_lock_id,))


def lock_id(schema_name: str) -> int:
    """The ledger's advisory lock: a signed 64-bit number derived from its schema's name."""
    digest = hashlib.blake2b(f"temporal-rag:{schema_name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def scope_locks(schema_name: str, reads: WriteReads) -> list[int]:
    """The advisory locks a parallel write takes (sorted, so that writers never wait on each
    other in a circle): one per key, fact id and prose text it names."""
    names = [f"key:{k.namespace}\0{k.subject}\0{k.relation}" for k in reads.keys]
    names += [f"fact:{fact_id}" for fact_id in reads.fact_ids]
    names += [f"prose:{p.namespace}\0{p.text_key}" for p in reads.prose]
    return sorted({lock_id(f"{schema_name}:{name}") for name in names})


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


__all__ = ["PostgresConnections", "lock_id", "redacted", "scope_locks"]
