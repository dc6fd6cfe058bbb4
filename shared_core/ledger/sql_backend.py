"""What the SQL backends (SQLite, PostgreSQL) do alike: the reads whose logic is the same.

:class:`SQLBackend` runs its statements through ``_one`` / ``_all`` / ``_execute``, which each
backend provides on its connection, and takes the statements from class attributes each
backend sets from its own SQL module (``sqlite/sql.py``, ``postgres/sql.py``): the logic is
written once, the SQL once per dialect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from shared_core.clock import OPEN, Instant
from shared_core.facts import Cardinality, FactKey
from shared_core.ledger import codecs
from shared_core.ledger.backend import FactRow, VersionQuery
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.supersession import StreamState

Params = tuple[Any, ...] | list[Any]


class SQLBackend(ABC):
    """The shared part of a Backend over SQL tables (see the Backend protocol), and the cache of
    key ids (a key's id never changes once committed)."""

    CARDINALITY: ClassVar[str]
    SET_CARDINALITY: ClassVar[str]
    RELATIONS: ClassVar[str]
    RELATION_IN_USE: ClassVar[str]
    KEY_ID: ClassVar[str]
    KEYS: ClassVar[str]
    STREAMS_OF_KEY: ClassVar[str]
    STATEMENT_BY_SEQ: ClassVar[str]
    STATEMENTS_OF_FACT: ClassVar[str]
    ALL_STATEMENTS: ClassVar[str]
    FIND_PROSE: ClassVar[str]
    QUERIES: ClassVar[dict[tuple[str, bool], str]]
    KEY_VERSIONS: ClassVar[str]
    VERSIONS_OF_FACT: ClassVar[str]
    ALL_VERSIONS: ClassVar[str]
    LAST_ROW_ID: ClassVar[str]
    LIST_VISIBLE_ROWS: ClassVar[str]
    LIST_VISIBLE_ROWS_VALID: ClassVar[str]
    RETIRED_SINCE: ClassVar[str]
    INSERTED_AFTER: ClassVar[str]
    COUNT_RETIRED_AT: ClassVar[str]

    def __init__(self) -> None:
        self._keys: dict[FactKey, int] = {}
        self._pending_keys: dict[FactKey, int] = {}  # inserted by the open transaction

    # ------------------------------------------------------------------ run by each backend
    @abstractmethod
    def _one(self, statement: str, params: Params = ()) -> Any:
        """The first row of a query (None if none)."""

    @abstractmethod
    def _all(self, statement: str, params: Params) -> list[tuple[Any, ...]]:
        """Every row of a query."""

    @abstractmethod
    def _execute(self, statement: str, params: Params) -> None:
        """Run a statement that returns no rows."""

    def _reading(self) -> None:  # noqa: B027  (a hook: most backends have nothing to check)
        """Called before a read of rows a write may have changed (a check, where there is one)."""

    @abstractmethod
    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        """See the Backend protocol."""

    # ------------------------------------------------------------------ relations and keys
    def cardinality(self, relation: str) -> Cardinality | None:
        row = self._one(self.CARDINALITY, (relation,))
        return Cardinality(row[0]) if row else None

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None:
        self._execute(self.SET_CARDINALITY, (relation, str(cardinality), at))

    def relation_in_use(self, relation: str) -> bool:
        return self._one(self.RELATION_IN_USE, (relation,)) is not None

    def relations(self) -> dict[str, Cardinality]:
        return {relation: Cardinality(value) for relation, value in self._all(self.RELATIONS, ())}

    def key_id(self, key: FactKey) -> int | None:
        found = self._keys.get(key) or self._pending_keys.get(key)
        if found is not None:
            return found
        row = self._one(self.KEY_ID, tuple(key))
        if row is None:
            return None
        self._keep_keys({key: int(row[0])})
        return int(row[0])

    def _keep_keys(self, committed: dict[FactKey, int]) -> None:
        """Cache the ids of committed keys for good."""
        self._keys.update(committed)

    def keys(self) -> dict[int, FactKey]:
        return {int(row[0]): FactKey(*row[1:]) for row in self._all(self.KEYS, ())}

    # ------------------------------------------------------------------ statements
    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        self._reading()
        rows = self._all(self.STREAMS_OF_KEY, (key_id,))
        return {stream: self.load_stream(key_id, stream) for (stream,) in rows}

    def statement(self, seq: int) -> StatementRow:
        self._reading()
        return self._statements(self.STATEMENT_BY_SEQ, (seq,))[0]

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        self._reading()
        return self._statements(self.STATEMENTS_OF_FACT, (fact_id,))

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        self._reading()
        found = self._statements(
            self.FIND_PROSE, prose_params(namespace, text_key, valid_from, valid_to)
        )
        return found[0] if found else None

    # ------------------------------------------------------------------ versions
    def query(self, query: VersionQuery) -> list[FactRow]:
        scope: list[Any]
        if query.subject is not None and query.relation is not None:
            key_id = self.key_id(FactKey(query.namespace, query.subject, query.relation))
            if key_id is None:
                return []
            kind, scope = "key", [key_id]  # one key: its own index, whatever the ledger size
        elif query.subject is not None:
            kind, scope = "subject", [query.namespace, query.subject]
        elif query.relation is not None:
            kind, scope = "relation", [query.namespace, query.relation]
        else:
            kind, scope = "namespace", [query.namespace]
        known = query.known_at < OPEN - 1  # else: what is believed now (the partial indexes)
        params = [*scope, query.valid_at, query.valid_at]
        if known:
            params += [query.known_at, query.known_at]
        return self._fact_rows(self.QUERIES[kind, known], params)

    def key_versions(self, key_id: int, known_at: Instant) -> list[FactRow]:
        return self._fact_rows(self.KEY_VERSIONS, [key_id, known_at])

    def versions_of_fact(self, fact_id: str) -> list[FactRow]:
        return self._fact_rows(self.VERSIONS_OF_FACT, [fact_id])

    def list_visible_rows(
        self, namespace: str, valid_at: Instant | None, known_at: Instant, limit: int
    ) -> list[int] | None:
        params: list[Any] = [namespace, known_at, known_at]
        sql = self.LIST_VISIBLE_ROWS
        if valid_at is not None:
            sql, params = self.LIST_VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        rows = self._all(sql, [*params, limit + 1])
        return None if len(rows) > limit else [row[0] for row in rows]

    def changed_versions(
        self, after_row: int, retired_from: Instant, *, strict: bool, limit: int
    ) -> list[FactRow]:
        start = retired_from + 1 if strict else retired_from
        retired = self._fact_rows(self.RETIRED_SINCE, [start, after_row])
        inserted = self._fact_rows(self.INSERTED_AFTER, [after_row, limit])
        return retired + inserted

    def count_retired_at(self, at: Instant) -> int:
        return int(self._one(self.COUNT_RETIRED_AT, (at,))[0])

    def last_row_id(self) -> int:
        return int(self._one(self.LAST_ROW_ID)[0])

    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        statements = self._statements(self.ALL_STATEMENTS, ())
        versions = [codecs.decode_version(row) for row in self._all(self.ALL_VERSIONS, ())]
        return statements, versions

    # ------------------------------------------------------------------ helpers
    def _statements(self, sql: str, params: Params) -> list[StatementRow]:
        return [codecs.decode_statement(row) for row in self._all(sql, params)]

    def _fact_rows(self, sql: str, params: Params) -> list[FactRow]:
        return [codecs.decode_fact_row(row) for row in self._all(sql, params)]


def prose_params(
    namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
) -> tuple[Any, ...]:
    """FIND_PROSE's parameters (either dialect's)."""
    return namespace, text_key, valid_to, valid_from, valid_from


__all__ = ["Params", "SQLBackend", "prose_params"]
