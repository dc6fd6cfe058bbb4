"""The PostgreSQL ledger's Backend: its rows in one schema, through psycopg 3 and its pool.

The rows, rules and guarantees are the SQLite ledger's; one ledger lives in one PostgreSQL
schema (``temporal_rag`` unless told), so several ledgers share a database. Every write is one
transaction holding the ledger's advisory lock
(:mod:`shared_core.ledger.postgres.connection`: lock timeout, bounded retries, then
:class:`LedgerBusyError`): writers from any number of processes and connections see each other's
commits and never interleave a supersession, and version row ids grow in commit order, which the
change feed relies on. A lost connection is :class:`LedgerUnavailableError` and leaves nothing
half-written (the transaction rolls back on the server); the pool replaces the connection for
the next call. A write's first reads go in the round trip of its lock
(:mod:`shared_core.ledger.postgres.read_ahead`). Its SQL is
:mod:`shared_core.ledger.postgres.sql`; the reads it shares with the SQLite backend are
:class:`~shared_core.ledger.sql_backend.SQLBackend`'s.

A write of new facts runs in parallel with others (``WriteReads.parallel``): it holds the write
lock shared and locks only the keys, fact ids and prose texts it names; it reads and plans,
queues its changes with provisional seqs, row ids and record time, and sends them behind one
``stamp_write`` call that takes the stamp lock (:data:`schema.STAMPING`), so that another
writer waits only while the server applies the changes and commits, never for this client.
Writes that cannot name what they touch (retract, correct, retire, ...) take the write lock
whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger import codecs
from shared_core.ledger.backend import NO_READS, FactRow, ProseRead, WriteReads
from shared_core.ledger.postgres import schema, sql
from shared_core.ledger.postgres.connection import PostgresConnections, scope_locks
from shared_core.ledger.postgres.read_ahead import ReadAhead, tail_params
from shared_core.ledger.postgres.stamping import StampedWrite
from shared_core.ledger.records import LedgerDump, StatementRow
from shared_core.ledger.sql_backend import Params, SQLBackend
from shared_core.supersession import StreamState, Version


class PostgresBackend(SQLBackend):
    """Statement and version rows in one PostgreSQL schema; see the Backend protocol."""

    reads_ahead = True  # a write's first reads go in the round trip of its lock
    parallel_writes = True  # see the module's docstring

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
        url: str,
        *,
        schema_name: str = "temporal_rag",
        pool_size: int = 2,
        lock_timeout: float = 5.0,
        busy_retries: int = 3,
        connect_timeout: float = 10.0,
        create: bool = True,
    ) -> None:
        super().__init__()
        self._db = PostgresConnections(
            url,
            schema_name=schema_name,
            pool_size=pool_size,
            lock_timeout=lock_timeout,
            busy_retries=busy_retries,
            connect_timeout=connect_timeout,
        )
        self.url = url
        self.schema_name = schema_name
        self._unstored_keys: set[FactKey] = set()  # looked up for the next write: not stored
        # Relations with a committed key: their cardinality can no longer change (declare
        # refuses), so it is cached for good.
        self._used_relations: set[str] = set()
        self._cardinalities: dict[str, Cardinality | None] = {}
        self._commits = 0
        # The open transaction's record clock and version row ids (read after its lock).
        self._clock: tuple[Instant, int] | None = None
        self._clock_moved = False
        self._first_row = self._next_row = 0
        self._heads: dict[int, StatementRow] = {}  # statements it read, as they stand in it
        self._reads = NO_READS  # the open transaction's first reads, and their answers
        self._ahead = ReadAhead()
        self._stamped = StampedWrite()  # a parallel write's changes, until its commit
        self._moved: tuple[Instant, Instant] | None = None  # what the last one's stamp moved
        self._db.open(create=create)

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self, *, reads: WriteReads = NO_READS) -> Iterator[None]:
        self._reads, self._moved = reads, None
        self._stamped.start(reads.times)
        try:
            with self._db.transaction(self._start_write, self._finish_write, shared=reads.parallel):
                yield
            if reads.parallel:
                self._moved = self._record_time_moved()
        except BaseException:
            self._pending_keys.clear()
            raise
        finally:
            self._clock = None
            self._clock_moved = False
            self._heads.clear()
            self._reads = NO_READS
            self._ahead.clear()
            self._unstored_keys.clear()
            self._stamped.clear()
        self._commits += 1
        self._keep_keys(self._pending_keys)
        self._pending_keys.clear()

    def _start_write(self, conn: Any) -> None:
        if self._reads.parallel:
            locks = scope_locks(self._db.schema_name, self._reads)
            conn.execute(sql.SCOPE_LOCKS, (locks,))
            start = conn.execute(sql.PARALLEL_START)
            self._ahead.send(conn, self._reads)
            (last_time,) = start.fetchone()  # the locks, the clock and the reads: one round trip
            self._clock = int(last_time), schema.PROVISIONAL
            self._first_row = self._next_row = schema.PROVISIONAL
        else:
            start = conn.execute(sql.WRITE_START)
            self._ahead.send(conn, self._reads)
            last_time, last_seq, next_row = start.fetchone()  # one round trip for all of them
            self._clock = int(last_time), int(last_seq)
            self._first_row = self._next_row = int(next_row)
        self._ahead.receive()

    def _finish_write(self, conn: Any) -> None:
        if self._reads.parallel:
            assert self._clock is not None
            planned, last_seq = self._clock
            self._stamped.send(
                conn,
                lock=self._db.stamp_lock_id,
                planned=planned,
                seqs=last_seq - schema.PROVISIONAL,
                rows=self._next_row - self._first_row,
            )
            return
        if self._next_row > self._first_row:
            conn.execute(sql.ROW_IDS_USED, (self._next_row - 1,))
        if not self._clock_moved:  # set_last_record moves the revision with the clock
            conn.execute(sql.NEXT_REVISION)

    def _record_time_moved(self) -> tuple[Instant, Instant] | None:
        """(planned, stamped) record time of the parallel write just committed, if they differ."""
        assert self._clock is not None
        with self._db.translated():
            stamped = self._stamped.stamped_at()
        planned = self._clock[0]
        return None if stamped == planned else (planned, stamped)

    def moved_record_time(self) -> tuple[Instant, Instant] | None:
        return self._moved

    def _change(self, statement: str, params: tuple[Any, ...]) -> None:
        """Run a change now, or hold it back until a parallel write commits."""
        if self._reads.parallel:
            self._stamped.queue(statement, params)
        else:
            self._execute(statement, params)

    def snapshot(self) -> AbstractContextManager[None]:
        return self._db.snapshot()

    def mirror_lock(self) -> AbstractContextManager[None]:
        return self._db.mirror_lock()

    def revision(self) -> tuple[int, int]:
        row = self._one(sql.REVISION)
        return int(row[0]), self._commits

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ bookkeeping
    def last_record(self) -> tuple[Instant, int]:
        if self._clock is not None:
            return self._clock
        row = self._one(sql.LAST_RECORD)
        return int(row[0]), int(row[1])

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        if self._reads.parallel:  # stamp_write moves the clock
            self._clock = recorded_at, seq
            return
        self._execute(sql.SET_LAST_RECORD, (recorded_at, seq))
        self._clock = recorded_at, seq
        self._clock_moved = True

    def cardinality(self, relation: str) -> Cardinality | None:
        if relation in self._cardinalities:
            return self._cardinalities[relation]
        found = super().cardinality(relation)
        if relation in self._used_relations:
            self._cardinalities[relation] = found
        return found

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        self._cardinalities.pop(relation, None)
        super().set_cardinality(relation, cardinality, at)

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        found = {key: self._keys.get(key) or self._pending_keys.get(key) for key in keys}
        missing = list(dict.fromkeys(key for key, key_id in found.items() if key_id is None))
        if missing:
            columns = [list(column) for column in zip(*missing, strict=True)]
            rows = self._all(sql.KEY_IDS, columns)
            self._keep_keys({FactKey(*row[1:]): int(row[0]) for row in rows})
            found.update({FactKey(*row[1:]): int(row[0]) for row in rows})
            self._unstored_keys.update(key for key in missing if found[key] is None)
        return {key: key_id for key, key_id in found.items() if key_id is not None}

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        # A key key_ids found missing just before is inserted at once (one round trip under
        # the lock, not two); if another writer stored it since, it is looked up after all.
        found = self._pending_keys.get(key)
        if found is None and key not in self._unstored_keys:
            found = self.key_id(key)
        if found is not None:
            return found, False
        row = self._one(sql.INSERT_KEY, tuple(key))
        if row is None:
            stored = self.key_id(key)
            assert stored is not None, "a conflicting key is stored"
            return stored, False
        self._pending_keys[key] = int(row[0])  # cached for good only once committed
        return int(row[0]), True

    def _keep_keys(self, committed: dict[FactKey, int]) -> None:
        super()._keep_keys(committed)
        self._used_relations.update(key.relation for key in committed)

    # ------------------------------------------------------------------ streams
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        # A key's stream by its id, prose by ``key_id IS NULL``: both indexed.
        self._stamped.reading()
        keyed = key_id is not None
        params = (*((key_id,) if keyed else ()), stream, -(2**63))
        reads = sql.STREAM_READS[keyed]
        statements, versions = self._both(reads[0], params, reads[1], params)
        return self._loaded(
            key_id, stream, codecs.decode_stream_state(statements, versions, start=None)
        )

    def load_tail(self, key_id: int | None, stream: str, before: Instant) -> StreamState:
        read_ahead = self._ahead.tail(key_id, stream, before)
        if read_ahead is not None:  # read from an earlier instant: a longer suffix
            before, versions, statements = read_ahead
        else:
            self._stamped.reading()
            reads = sql.SUFFIX_READS[key_id is not None]
            suffix = tail_params(key_id, stream, before)
            versions, statements = self._both(reads[0], suffix, reads[1], suffix)
        split = codecs.N_STREAM_VERSION
        if self._clock is not None:  # in a write, under its lock
            for row in versions:
                head = codecs.decode_statement(row[split:])
                self._heads[head.seq] = head
        start = codecs.suffix_start([row[3] for row in versions], before)
        state = codecs.decode_stream_state(
            statements, [row[:split] for row in versions], start=start
        )
        return self._loaded(key_id, stream, state)

    def _loaded(self, key_id: int | None, stream: str, state: StreamState) -> StreamState:
        if self._clock is not None:  # in a write: its retirements will name rows of it
            seqs = [s.seq for s in state.statements]
            row_ids = [v.row_id for v in state.versions if v.row_id is not None]
            self._ahead.loaded(key_id, stream, seqs, row_ids)
        if self._reads.parallel:  # its plan depends on these valid times
            self._stamped.loaded(state)
        return state

    def insert_statement(self, row: StatementRow) -> None:
        self._ahead.inserted_statement(
            row.fact_id, row.key_id, row.stream, row.namespace, row.text_key
        )
        self._change(sql.INSERT_STATEMENT, codecs.statement_columns(row))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        self._heads.pop(seq, None)
        self._ahead.retired_statement(seq)
        self._change(sql.RETIRE_STATEMENT, (at, *codecs.reason_columns(reason), seq))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        # under the write lock the next commit's ids start after it; in a parallel write it is
        # provisional, stamped at the commit
        row_id = self._next_row
        self._next_row += 1
        self._ahead.inserted_version(key_id, stream)
        columns = codecs.new_version_columns(
            version, namespace=namespace, key_id=key_id, stream=stream, at=at
        )
        self._change(sql.INSERT_VERSION, (row_id, *columns))
        return row_id

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        self._ahead.retired_version(row_id)
        self._change(sql.RETIRE_VERSION, (at, *codecs.reason_columns(reason), row_id))

    # ------------------------------------------------------------------ reads
    def statement(self, seq: int) -> StatementRow:
        cached = self._heads.get(seq)
        return cached if cached is not None else super().statement(seq)

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        read_ahead = self._ahead.known_fact_ids(fact_ids)
        if read_ahead is not None:
            return read_ahead
        self._stamped.reading()
        return {row[0] for row in self._all(sql.KNOWN_FACT_IDS, (fact_ids,))}

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        rows = self._ahead.prose(ProseRead(namespace, text_key, valid_from, valid_to))
        if rows is None:
            return super().find_prose(namespace, text_key, valid_from, valid_to)
        return codecs.decode_statement(rows[0]) if rows else None

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        params: list[Any] = [len(prefix), prefix, valid_at, valid_at]
        query = sql.NAMESPACES
        if known_at < OPEN - 1:
            query, params = sql.NAMESPACES_KNOWN, [*params, known_at, known_at]
        return [str(row[0]) for row in self._all(query, params)]

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        if not row_ids:
            return set()
        params: list[Any] = [namespace, known_at, known_at]
        query = sql.VISIBLE_ROWS
        if valid_at is not None:
            query, params = sql.VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        return {row[0] for row in self._all(query, [*params, list(row_ids)])}

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        if not row_ids:
            return []
        self._stamped.reading()
        rows = self._fact_rows(sql.VERSIONS_BY_ROW, [list(row_ids)])
        by_id = {row[0].row_id: row for row in rows}
        return [by_id[row_id] for row_id in row_ids if row_id in by_id]

    def restore(self, dump: LedgerDump) -> None:
        for relation, cardinality in dump.relations:
            self.set_cardinality(relation, cardinality, dump.last_record[0])
        with self._db.connection() as conn, conn.cursor() as cursor:
            cursor.executemany(sql.RESTORE_KEY, [(key_id, *key) for key_id, key in dump.keys])
            for row in dump.statements:
                self.insert_statement(row)
            cursor.executemany(
                sql.RESTORE_VERSION, [codecs.version_columns(v) for v in dump.versions]
            )
            # new ids continue after the restored ones
            cursor.execute(sql.RESTART_KEY_IDS)
            cursor.execute(sql.RESTART_ROW_IDS)
            # fresh planner statistics: before autovacuum comes by, a bulk-loaded table looks
            # empty to the planner, and a key's reads scanned the believed rows of every key
            cursor.execute(sql.ANALYZE)
        self.set_last_record(*dump.last_record)

    # ------------------------------------------------------------------ helpers
    def _reading(self) -> None:
        self._stamped.reading()

    def _execute(self, statement: str, params: Params) -> None:
        with self._db.connection() as conn:
            conn.execute(statement, params)

    def _one(self, statement: str, params: Params = ()) -> Any:
        with self._db.connection() as conn:
            return conn.execute(statement, params).fetchone()

    def _all(self, statement: str, params: Params) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return list(conn.execute(statement, params).fetchall())

    def _both(
        self, first: str, first_params: tuple[Any, ...], then: str, then_params: tuple[Any, ...]
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The rows of two queries, sent together (one round trip in a write's pipeline)."""
        with self._db.connection() as conn:
            first_rows, then_rows = (
                conn.execute(first, first_params),
                conn.execute(then, then_params),
            )
            return list(first_rows.fetchall()), list(then_rows.fetchall())


__all__ = ["PostgresBackend"]
