"""An in-memory ledger: the fake for tests, with the same semantics as the SQLite ledger.

Transactions are all-or-nothing through an undo log. Nothing survives the process.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from shared_core.clock import OPEN, Clock, Instant
from shared_core.errors import LedgerError
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger.backend import NO_READS, FactRow, VersionQuery, WriteReads
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.records import LedgerDump, StatementRow, VersionRow
from shared_core.supersession import StreamState, Version


class InMemoryBackend:
    """Rows in Python dicts; see :class:`~shared_core.ledger.backend.Backend`."""

    reads_ahead = False  # its reads are local: nothing to gain by naming them first
    parallel_writes = False  # one process's memory

    def __init__(self) -> None:
        self._statements: dict[int, StatementRow] = {}
        self._versions: dict[int, VersionRow] = {}
        self._keys: dict[FactKey, int] = {}
        self._key_names: dict[int, FactKey] = {}
        self._relations: dict[str, Cardinality] = {}
        self._by_stream: dict[tuple[int | None, str], list[int]] = defaultdict(list)
        self._versions_by_stream: dict[tuple[int | None, str], list[int]] = defaultdict(list)
        self._last: tuple[Instant, int] = (0, 0)
        self._commits = 0
        self._undo: list[Callable[[], object]] | None = None
        self._closed = False
        self._mirror = threading.Lock()

    @contextmanager
    def transaction(self, *, reads: WriteReads = NO_READS) -> Iterator[None]:
        del reads  # see reads_ahead
        self._check_open()
        self._undo = []
        try:
            yield
        except BaseException:
            for step in reversed(self._undo):
                step()
            raise
        else:
            self._commits += 1
        finally:
            self._undo = None

    def moved_record_time(self) -> tuple[Instant, Instant] | None:
        return None  # never parallel: a write is stamped when it is planned

    def revision(self) -> tuple[int, int]:
        return 0, self._commits

    @contextmanager
    def mirror_lock(self) -> Iterator[None]:
        with self._mirror:
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        self._check_open()
        yield

    def _log(self, step: Callable[[], object]) -> None:
        assert self._undo is not None, "writes happen only inside transaction()"
        self._undo.append(step)

    def _check_open(self) -> None:
        if self._closed:
            raise LedgerError("the ledger is closed")

    def last_record(self) -> tuple[Instant, int]:
        return self._last

    def set_last_record(self, recorded_at: Instant, seq: int) -> None:
        previous = self._last
        self._log(lambda: setattr(self, "_last", previous))
        self._last = (recorded_at, seq)

    def cardinality(self, relation: str) -> Cardinality | None:
        return self._relations.get(relation)

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        previous = self._relations.get(relation)
        self._log(lambda: self._restore_relation(relation, previous))
        self._relations[relation] = cardinality

    def _restore_relation(self, relation: str, previous: Cardinality | None) -> None:
        if previous is None:
            self._relations.pop(relation, None)
        else:
            self._relations[relation] = previous

    def relation_in_use(self, relation: str) -> bool:
        return any(key.relation == relation for key in self._keys)

    def key_id(self, key: FactKey) -> int | None:
        return self._keys.get(key)

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        return {key: self._keys[key] for key in keys if key in self._keys}

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        found = self._keys.get(key)
        if found is not None:
            return found, False
        new_id = max(self._key_names, default=0) + 1
        self._keys[key] = new_id
        self._key_names[new_id] = key
        self._log(lambda: (self._keys.pop(key), self._key_names.pop(new_id)))
        return new_id, True

    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        handle = (key_id, stream)
        statements = (self._statements[s] for s in self._by_stream.get(handle, ()))
        versions = (self._versions[r] for r in self._versions_by_stream.get(handle, ()))
        return StreamState(
            tuple(s.statement() for s in statements if s.believed),
            tuple(
                sorted(
                    (v.version() for v in versions if v.retired_at == OPEN),
                    key=lambda v: v.valid_from,
                )
            ),
        )

    def load_tail(self, key_id: int | None, stream: str, before: Instant) -> StreamState:
        return self.load_stream(key_id, stream).before(before)

    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        names = {stream for (kid, stream) in self._by_stream if kid == key_id}
        states = {name: self.load_stream(key_id, name) for name in names}
        return {name: state for name, state in states.items() if state.statements}

    def insert_statement(self, row: StatementRow) -> None:
        handle = (row.key_id, row.stream)
        self._statements[row.seq] = row
        self._by_stream[handle].append(row.seq)
        self._log(lambda: (self._statements.pop(row.seq), self._by_stream[handle].pop()))

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None:
        old = self._statements[seq]
        self._statements[seq] = replace(old, retired_at=at, retire_reason=reason)
        self._log(lambda: self._statements.__setitem__(seq, old))

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        row_id = max(self._versions, default=0) + 1
        handle = (key_id, stream)
        self._versions[row_id] = VersionRow(
            row_id,
            version.fact_id,
            version.head_seq,
            namespace,
            key_id,
            stream,
            version.value,
            version.valid_from,
            version.valid_to,
            version.end,
            at,
            OPEN,
            None,
        )
        self._versions_by_stream[handle].append(row_id)
        self._log(lambda: (self._versions.pop(row_id), self._versions_by_stream[handle].pop()))
        return row_id

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None:
        old = self._versions[row_id]
        self._versions[row_id] = replace(old, retired_at=at, retire_reason=reason)
        self._log(lambda: self._versions.__setitem__(row_id, old))

    def statement(self, seq: int) -> StatementRow:
        return self._statements[seq]

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        wanted = set(fact_ids)
        return {row.fact_id for row in self._statements.values() if row.fact_id in wanted}

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        return [row for row in self._statements.values() if row.fact_id == fact_id]

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        for row in self._statements.values():
            if (
                row.key_id is None
                and row.believed
                and row.namespace == namespace
                and row.text_key == text_key
                and row.valid_to == valid_to
                and (valid_from is None or row.valid_from == valid_from)
            ):
                return row
        return None

    def query(self, query: VersionQuery) -> list[FactRow]:
        found = []
        for row in self._versions.values():
            if row.namespace != query.namespace or not row.visible(query.valid_at, query.known_at):
                continue
            key = self._key_names.get(row.key_id) if row.key_id is not None else None
            if (query.subject is not None or query.relation is not None) and key is None:
                continue
            if key is not None and query.subject not in (None, key.subject):
                continue
            if key is not None and query.relation not in (None, key.relation):
                continue
            found.append(row)
        found.sort(key=self._order)
        return [self._with_head(row) for row in found]

    def _order(self, row: VersionRow) -> tuple[object, ...]:
        key = self._key_names.get(row.key_id) if row.key_id is not None else None
        names = ("", "") if key is None else (key.subject, key.relation)
        return (key is None, *names, row.valid_from, row.row_id)

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        return list(
            {
                row.namespace
                for row in self._versions.values()
                if row.namespace.startswith(prefix) and row.visible(valid_at, known_at)
            }
        )

    def key_versions(self, key_id: int, known_at: Instant) -> list[FactRow]:
        rows = [
            row
            for row in self._versions.values()
            if row.key_id == key_id and row.recorded_at <= known_at
        ]
        return [self._with_head(row) for row in rows]

    def versions_of_fact(self, fact_id: str) -> list[FactRow]:
        return [self._with_head(row) for row in self._versions.values() if row.fact_id == fact_id]

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        return [self._with_head(self._versions[i]) for i in row_ids if i in self._versions]

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        rows = (self._versions[i] for i in row_ids if i in self._versions)
        return {row.row_id for row in rows if _visible(row, namespace, valid_at, known_at)}

    def list_visible_rows(
        self, namespace: str, valid_at: Instant | None, known_at: Instant, limit: int
    ) -> list[int] | None:
        found = [
            row_id
            for row_id, row in sorted(self._versions.items())
            if _visible(row, namespace, valid_at, known_at)
        ]
        return None if len(found) > limit else found

    def changed_versions(
        self, after_row: int, retired_from: Instant, *, strict: bool, limit: int
    ) -> list[FactRow]:
        start = retired_from + 1 if strict else retired_from
        retired = [
            row
            for row_id, row in self._versions.items()
            if row_id <= after_row and start <= row.retired_at < OPEN
        ]
        inserted = [row for row_id, row in self._versions.items() if row_id > after_row][:limit]
        return [self._with_head(row) for row in (*retired, *inserted)]

    def count_retired_at(self, at: Instant) -> int:
        return sum(1 for row in self._versions.values() if row.retired_at == at < OPEN)

    def last_row_id(self) -> int:
        return max(self._versions, default=0)

    def _with_head(self, row: VersionRow) -> FactRow:
        return row, self._statements[row.head_seq]

    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        return list(self._statements.values()), list(self._versions.values())

    def relations(self) -> dict[str, Cardinality]:
        return dict(self._relations)

    def keys(self) -> dict[int, FactKey]:
        return dict(self._key_names)

    def restore(self, dump: LedgerDump) -> None:
        self._log(self._clear)  # the store was empty: undoing the restore empties it again
        self._relations.update(dump.relations)
        for key_id, key in dump.keys:
            self._keys[key] = key_id
            self._key_names[key_id] = key
        for row in dump.statements:
            self._statements[row.seq] = row
            self._by_stream[(row.key_id, row.stream)].append(row.seq)
        for version in dump.versions:
            self._versions[version.row_id] = version
            self._versions_by_stream[(version.key_id, version.stream)].append(version.row_id)
        self._last = dump.last_record

    def _clear(self) -> None:
        for table in (
            self._statements,
            self._versions,
            self._keys,
            self._key_names,
            self._relations,
            self._by_stream,
            self._versions_by_stream,
        ):
            table.clear()
        self._last = (0, 0)

    def close(self) -> None:
        self._closed = True


def _visible(row: VersionRow, namespace: str, valid_at: Instant | None, known_at: Instant) -> bool:
    return (
        row.namespace == namespace
        and row.recorded_at <= known_at < row.retired_at
        and (valid_at is None or row.valid_from <= valid_at < row.valid_to)
    )


class InMemoryLedger(Ledger):
    """A ledger that lives in memory (tests, notebooks, throwaway agents)."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        super().__init__(InMemoryBackend(), clock=clock)
