"""The PostgreSQL ledger's queries that only read (and the helpers every query runs through).

:class:`~shared_core.ledger.postgres.PostgresBackend` builds on :class:`PostgresQueries`: it
adds the write transactions, the keys, the streams and the changes.
"""

from __future__ import annotations

from typing import Any

from shared_core.clock import OPEN, Instant
from shared_core.facts import Cardinality, FactKey
from shared_core.ledger import postgres_schema
from shared_core.ledger import schema as codecs
from shared_core.ledger.backend import FactRow
from shared_core.ledger.postgres_connection import PostgresConnections
from shared_core.ledger.records import StatementRow, VersionRow


class PostgresQueries:
    """Read-only queries of one ledger's rows, on its pooled connections (``_db``)."""

    def __init__(self, db: PostgresConnections) -> None:
        self._db = db

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        where = ["left(namespace, %s) = %s", "valid_from <= %s", "valid_to > %s"]
        params: list[Any] = [len(prefix), prefix, valid_at, valid_at]
        if known_at >= OPEN - 1:
            where.append(postgres_schema.BELIEVED_SQL)
        else:
            where += ["recorded_at <= %s", "retired_at > %s"]
            params += [known_at, known_at]
        sql = f"SELECT DISTINCT namespace FROM versions WHERE {' AND '.join(where)}"
        return [str(row[0]) for row in self._all(sql, params)]

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

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        if not row_ids:
            return set()
        params: list[Any] = [namespace, known_at, known_at]
        sql = postgres_schema.VISIBLE_ROWS
        if valid_at is not None:
            sql, params = postgres_schema.VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        return {row[0] for row in self._all(sql, [*params, list(row_ids)])}

    def list_visible_rows(
        self, namespace: str, valid_at: Instant | None, known_at: Instant, limit: int
    ) -> list[int] | None:
        params: list[Any] = [namespace, known_at, known_at]
        sql = postgres_schema.LIST_VISIBLE_ROWS
        if valid_at is not None:
            sql, params = postgres_schema.LIST_VISIBLE_ROWS_VALID, [*params, valid_at, valid_at]
        rows = self._all(sql, [*params, limit + 1])
        return None if len(rows) > limit else [row[0] for row in rows]

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

    # ------------------------------------------------------------------ helpers
    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        with self._db.connection() as conn:
            conn.execute(sql, params)

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self._db.connection() as conn:
            return conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple[Any, ...] | list[Any]) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return list(conn.execute(sql, params).fetchall())

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


__all__ = ["PostgresQueries"]
