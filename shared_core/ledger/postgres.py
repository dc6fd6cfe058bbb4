"""The server ledger: PostgreSQL through psycopg 3 and its connection pool.

``pip install "temporal-rag[postgres]"``. The rows, rules and guarantees are the SQLite
ledger's; one ledger lives in one PostgreSQL schema (``temporal_rag`` unless told), so several
ledgers share a database. Every write is one transaction holding the ledger's advisory lock
(:mod:`shared_core.ledger.postgres_connection`: lock timeout, bounded retries, then
:class:`LedgerBusyError`): writers from any number of processes and connections see each other's
commits and never interleave a supersession, and version row ids grow in commit order, which the
change feed relies on. A lost connection is :class:`LedgerUnavailableError` and leaves nothing
half-written (the transaction rolls back on the server); the pool replaces the connection for
the next call. A write's first reads go in the round trip of its lock
(:mod:`shared_core.ledger.postgres_reads`). This module holds the Backend's queries.

A write of new facts runs in parallel with others (``WriteReads.parallel``): it holds the write
lock shared and locks only the keys, fact ids and prose texts it names; it reads and plans,
queues its changes with provisional seqs, row ids and record time, and sends them behind one
``stamp_write`` call that takes the stamp lock (postgres_schema.STAMPING), so that another
writer waits only while the server applies the changes and commits, never for this client.
Writes that cannot name what they touch (retract, correct, retire, ...) take the write lock
whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from shared_core.clock import OPEN, Clock, Instant
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger import postgres_schema
from shared_core.ledger import schema as codecs
from shared_core.ledger.backend import NO_READS, FactRow, ProseRead, VersionQuery, WriteReads
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres_connection import (
    PostgresConnections,
    lock_id,
    redacted,
    scope_locks,
)
from shared_core.ledger.postgres_queries import PostgresQueries
from shared_core.ledger.postgres_reads import ReadAhead
from shared_core.ledger.postgres_stamping import StampedWrite
from shared_core.ledger.records import LedgerDump, StatementRow
from shared_core.supersession import StreamState, Version


class PostgresBackend(PostgresQueries):
    """Statement and version rows in one PostgreSQL schema; see the Backend protocol."""

    reads_ahead = True  # a write's first reads go in the round trip of its lock
    parallel_writes = True  # see the module's docstring

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
        super().__init__(
            PostgresConnections(
                url,
                schema_name=schema_name,
                pool_size=pool_size,
                lock_timeout=lock_timeout,
                busy_retries=busy_retries,
                connect_timeout=connect_timeout,
            )
        )
        self.url = url
        self.schema_name = schema_name
        self._keys: dict[FactKey, int] = {}
        self._pending_keys: dict[FactKey, int] = {}
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
            conn.execute(postgres_schema.SCOPE_LOCKS, (locks,))
            start = conn.execute(postgres_schema.PARALLEL_START)
            self._ahead.send(conn, self._reads)
            (last_time,) = start.fetchone()  # the locks, the clock and the reads: one round trip
            self._clock = int(last_time), postgres_schema.PROVISIONAL
            self._first_row = self._next_row = postgres_schema.PROVISIONAL
        else:
            start = conn.execute(postgres_schema.WRITE_START)
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
                seqs=last_seq - postgres_schema.PROVISIONAL,
                rows=self._next_row - self._first_row,
            )
            return
        if self._next_row > self._first_row:
            conn.execute(postgres_schema.ROW_IDS_USED, (self._next_row - 1,))
        if not self._clock_moved:  # set_last_record moves the revision with the clock
            conn.execute("UPDATE ledger_clock SET revision = revision + 1 WHERE id = 1")

    def _record_time_moved(self) -> tuple[Instant, Instant] | None:
        """(planned, stamped) record time of the parallel write just committed, if they differ."""
        assert self._clock is not None
        with self._db.translated():
            stamped = self._stamped.stamped_at()
        planned = self._clock[0]
        return None if stamped == planned else (planned, stamped)

    def moved_record_time(self) -> tuple[Instant, Instant] | None:
        return self._moved

    def _change(self, sql: str, params: tuple[Any, ...]) -> None:
        """Run a change now, or hold it back until a parallel write commits."""
        if self._reads.parallel:
            self._stamped.queue(sql, params)
        else:
            self._execute(sql, params)

    def snapshot(self) -> AbstractContextManager[None]:
        return self._db.snapshot()

    def mirror_lock(self) -> AbstractContextManager[None]:
        return self._db.mirror_lock()

    def revision(self) -> tuple[int, int]:
        row = self._one("SELECT revision FROM ledger_clock WHERE id = 1")
        return int(row[0]), self._commits

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ bookkeeping
    def last_record(self) -> tuple[Instant, int]:
        if self._clock is not None:
            return self._clock
        row = self._one("SELECT last_recorded_at, last_seq FROM ledger_clock WHERE id = 1")
        return int(row[0]), int(row[1])

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        if self._reads.parallel:  # stamp_write moves the clock
            self._clock = recorded_at, seq
            return
        self._execute(
            "UPDATE ledger_clock SET last_recorded_at = %s, last_seq = %s, "
            "revision = revision + 1 WHERE id = 1",
            (recorded_at, seq),
        )
        self._clock = recorded_at, seq
        self._clock_moved = True

    def cardinality(self, relation: str) -> Cardinality | None:
        if relation in self._cardinalities:
            return self._cardinalities[relation]
        row = self._one("SELECT cardinality FROM relations WHERE relation = %s", (relation,))
        found = Cardinality(row[0]) if row else None
        if relation in self._used_relations:
            self._cardinalities[relation] = found
        return found

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        self._cardinalities.pop(relation, None)
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
        self._keep_keys({key: int(row[0])})
        return int(row[0])

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        found = {key: self._keys.get(key) or self._pending_keys.get(key) for key in keys}
        missing = list(dict.fromkeys(key for key, key_id in found.items() if key_id is None))
        if missing:
            columns = [list(column) for column in zip(*missing, strict=True)]
            rows = self._all(postgres_schema.KEY_IDS, columns)
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
        row = self._one(postgres_schema.INSERT_KEY, tuple(key))
        if row is None:
            stored = self.key_id(key)
            assert stored is not None, "a conflicting key is stored"
            return stored, False
        self._pending_keys[key] = int(row[0])  # cached for good only once committed
        return int(row[0]), True

    def _keep_keys(self, committed: dict[FactKey, int]) -> None:
        self._keys.update(committed)
        self._used_relations.update(key.relation for key in committed)

    # ------------------------------------------------------------------ streams
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        # A key's stream by its id, prose by ``key_id IS NULL``: both indexed.
        self._stamped.reading()
        keyed = key_id is not None
        params = (*((key_id,) if keyed else ()), stream, -(2**63))
        reads = postgres_schema.STREAM_READS[keyed]
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
            reads = postgres_schema.SUFFIX_READS[key_id is not None]
            suffix = postgres_schema.tail_params(key_id, stream, before)
            versions, statements = self._both(reads[0], suffix, reads[1], suffix)
        split = postgres_schema.N_STREAM_VERSION
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

    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        self._stamped.reading()
        rows = self._all(
            "SELECT DISTINCT stream FROM statements WHERE key_id = %s AND "
            f"{postgres_schema.BELIEVED_SQL}",
            (key_id,),
        )
        return {stream: self.load_stream(key_id, stream) for (stream,) in rows}

    def insert_statement(self, row: StatementRow) -> None:
        self._ahead.inserted_statement(
            row.fact_id, row.key_id, row.stream, row.namespace, row.text_key
        )
        self._change(postgres_schema.INSERT_STATEMENT, codecs.statement_columns(row))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        self._heads.pop(seq, None)
        self._ahead.retired_statement(seq)
        self._change(postgres_schema.RETIRE_STATEMENT, (at, *codecs.reason_columns(reason), seq))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        # under the write lock the next commit's ids start after it; in a parallel write it is
        # provisional, stamped at the commit
        row_id = self._next_row
        self._next_row += 1
        self._ahead.inserted_version(key_id, stream)
        self._change(
            postgres_schema.INSERT_VERSION,
            (
                row_id,
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
        return row_id

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        self._ahead.retired_version(row_id)
        self._change(postgres_schema.RETIRE_VERSION, (at, *codecs.reason_columns(reason), row_id))

    # ------------------------------------------------------------------ reads
    def statement(self, seq: int) -> StatementRow:
        cached = self._heads.get(seq)
        if cached is not None:
            return cached
        self._stamped.reading()
        return self._statements("WHERE seq = %s", (seq,))[0]

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        read_ahead = self._ahead.known_fact_ids(fact_ids)
        if read_ahead is not None:
            return read_ahead
        self._stamped.reading()
        return {row[0] for row in self._all(postgres_schema.KNOWN_FACT_IDS, (fact_ids,))}

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        self._stamped.reading()
        return self._statements("WHERE fact_id = %s ORDER BY seq", (fact_id,))

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        rows = self._ahead.prose(ProseRead(namespace, text_key, valid_from, valid_to))
        if rows is None:
            self._stamped.reading()
            params = postgres_schema.prose_params(namespace, text_key, valid_from, valid_to)
            rows = self._all(postgres_schema.FIND_PROSE, params)
        return codecs.decode_statement(rows[0]) if rows else None

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

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        if not row_ids:
            return []
        self._stamped.reading()
        rows = self._fact_rows(
            f"{postgres_schema.FACT_SELECT} WHERE v.row_id = ANY(%s)", [list(row_ids)]
        )
        by_id = {row[0].row_id: row for row in rows}
        return [by_id[row_id] for row_id in row_ids if row_id in by_id]

    def restore(self, dump: LedgerDump) -> None:
        for relation, cardinality in dump.relations:
            self.set_cardinality(relation, cardinality, dump.last_record[0])
        with self._db.connection() as conn, conn.cursor() as cursor:
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
        self.url = redacted(url)
        self.schema = schema


__all__ = ["PostgresBackend", "PostgresLedger", "lock_id"]
