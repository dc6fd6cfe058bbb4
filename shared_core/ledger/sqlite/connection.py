"""The SQLite ledger's connection: the file, its schema, error translation and transactions.

One stdlib sqlite3 connection per ledger, in WAL mode; ``durability`` sets how often SQLite
syncs to disk, and a :class:`~shared_core.ledger.sqlite.checkpointer.WalCheckpointer` copies
the log back into the file beside the writers. A write is one ``BEGIN IMMEDIATE``
transaction, so several processes can share a file: writers queue on SQLite's lock, with
bounded retries and then a clear error. A file that is not a ledger (or of a newer schema) is
refused before anything is written to it; an older schema is migrated. SQLite's errors are
translated into the ledger's here.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

from shared_core.errors import (
    InvalidInputError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerError,
    LedgerNotFoundError,
    NotALedgerError,
    SchemaVersionError,
)
from shared_core.ledger.sqlite import schema
from shared_core.ledger.sqlite.checkpointer import SET_BACKSTOP, WalCheckpointer

Durability = Literal["full", "normal"]


class SQLiteConnection:
    """The connection to one SQLite ledger file and its transactions.

    Not thread-safe by itself, like a backend: the ledger serialises calls. ``conn`` is the
    connection (in autocommit mode: every transaction here is explicit).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability,
        busy_timeout: float,
        busy_retries: int,
        create: bool,
    ) -> None:
        if durability not in ("full", "normal"):
            raise InvalidInputError(
                "durability", f"{durability!r} is unknown", "use 'full' or 'normal'"
            )
        self.path = Path(path)
        self._busy_retries = busy_retries
        self._busy_timeout = busy_timeout
        _refuse_foreign_file(self.path)
        if not create and not self.path.exists():
            raise LedgerNotFoundError(f"no ledger at {self.path}: the file does not exist")
        if not create and self.path.stat().st_size == 0:
            raise LedgerNotFoundError(f"{self.path} is an empty file, not a ledger")
        try:
            self.conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
            )
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger {self.path}: {exc}") from exc
        self.commits = 0
        self._mirror = threading.Lock()
        self._checkpointer: WalCheckpointer | None = None
        try:
            with self.translated():
                self._open_schema(durability, create=create)
        except BaseException:
            self.conn.close()
            raise
        if str(self.path) != ":memory:":
            self._checkpointer = WalCheckpointer(self.path, full=durability == "full")
            weakref.finalize(self, self._checkpointer.close)  # a ledger dropped unclosed

    # ------------------------------------------------------------------ setup
    def _open_schema(self, durability: Durability, *, create: bool) -> None:
        tables = self._table_names()
        if not tables and not create:
            raise LedgerNotFoundError(f"{self.path} holds no ledger (an empty SQLite file)")
        if tables and "schema_migrations" not in tables:
            raise NotALedgerError(f"{self.path} is an SQLite file but not a temporal-rag ledger")
        if (
            tables
            and self.conn.execute("PRAGMA application_id").fetchone()[0] != schema.APPLICATION_ID
        ):
            raise NotALedgerError(f"{self.path} was not written by temporal-rag")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(
            "PRAGMA synchronous=FULL" if durability == "full" else "PRAGMA synchronous=NORMAL"
        )
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute(SET_BACKSTOP)  # SQLite's own checkpoint, beside the checkpointer's
        # 64 MiB of page cache: a ledger of 100k versions stays in it. SQLite walks the cache's
        # hash table at the end of every write, about 10% of a write's CPU at a million
        # versions; 8 MiB saves most of that but made reads of one key slower (benchmarks/README).
        self.conn.execute("PRAGMA cache_size=-65536")
        with self.transaction():
            if "schema_migrations" not in self._table_names():  # re-checked under the lock
                self.conn.execute(schema.SET_APPLICATION_ID)
                for statement in schema.SCHEMA:
                    self.conn.execute(statement)
                self.conn.execute(
                    schema.APPLIED, (schema.SCHEMA_VERSION, int(time.time() * 1_000_000))
                )
        found = self.conn.execute(schema.FOUND_VERSION).fetchone()[0]
        if found is None or found > schema.SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self.path} has schema version {found}; this temporal-rag reads up to "
                f"{schema.SCHEMA_VERSION}: upgrade temporal-rag"
            )
        if found < schema.SCHEMA_VERSION:
            self._migrate(found)

    def _migrate(self, found: int) -> None:
        with self.transaction():
            for version in range(found + 1, schema.SCHEMA_VERSION + 1):
                for statement in schema.MIGRATIONS[version]:
                    self.conn.execute(statement)
                self.conn.execute(schema.APPLIED, (version, int(time.time() * 1_000_000)))

    def _table_names(self) -> set[str]:
        rows = self.conn.execute(schema.TABLE_NAMES)
        return {row[0] for row in rows}

    @contextmanager
    def translated(self) -> Iterator[None]:
        """SQLite's errors as the ledger's: busy, not a ledger, damaged, or any other."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise LedgerBusyError(f"ledger {self.path} is busy: {exc}") from exc
            raise LedgerError(f"ledger {self.path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            message = str(exc)
            if "not a database" in message:
                raise NotALedgerError(f"{self.path} is not an SQLite ledger file") from exc
            if "malformed" in message or "corrupt" in message:
                raise LedgerCorruptError(f"ledger {self.path} is damaged: {exc}") from exc
            raise LedgerError(f"ledger {self.path}: {exc}") from exc
        except UnicodeDecodeError as exc:  # damaged text (a name, a statement) is not UTF-8
            raise LedgerCorruptError(f"ledger {self.path} is damaged: {exc}") from exc

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction: committed, or rolled back on any error."""
        with self.translated():
            self._begin()
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            self.commits += 1
        if self._checkpointer is not None:
            self._checkpointer.wake()

    def revision(self) -> tuple[int, int]:
        # data_version moves when another connection commits; our own commits are counted.
        with self.translated():
            return int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.commits

    @contextmanager
    def mirror_lock(self) -> Iterator[None]:
        # A lock file beside the ledger: the SQLite lock would also stop the writers. An
        # in-memory database (":memory:") has no other process to wait for.
        if str(self.path) == ":memory:":
            with self._mirror:
                yield
            return
        with self._mirror, _file_lock(self.path.with_name(self.path.name + ".mirror-lock")):
            yield

    def _begin(self) -> None:
        for attempt in range(self._busy_retries + 1):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if attempt == self._busy_retries:
                    raise LedgerBusyError(
                        f"ledger {self.path} stayed locked by other writers for "
                        f"{self._busy_retries + 1} x {self._busy_timeout:g}s; retry later or "
                        "raise busy_timeout"
                    ) from exc
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: one consistent view of the file while it lasts."""
        with self.translated():
            self.conn.execute("BEGIN")
            try:
                yield
            finally:
                self.conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection (after refreshing the planner's statistics)."""
        # Fresh statistics for the query planner; closing must not fail on a damaged file.
        with suppress(sqlite3.Error):
            self.conn.execute("PRAGMA optimize")
        if self._checkpointer is not None:
            self._checkpointer.close()
        self.conn.close()


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` between processes (POSIX flock; elsewhere the
    in-process lock alone)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _refuse_foreign_file(path: Path) -> None:
    if path.is_dir():
        raise NotALedgerError(f"{path} is a directory; pass the path of a ledger file")
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                raise NotALedgerError(f"{path} is not an SQLite ledger file (nothing was changed)")
