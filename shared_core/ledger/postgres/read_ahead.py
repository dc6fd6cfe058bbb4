"""A PostgreSQL write's first reads, sent in the round trip that takes its lock.

Every write holds the ledger's one write lock from the round trip that takes it to its COMMIT,
so each round trip in between is time no other writer can use. A write names what it will
read first (:class:`~shared_core.ledger.backend.WriteReads`: its fact ids, the tails of the
streams it writes, the stored prose it may repeat); :class:`ReadAhead` queues those reads in
the lock's round trip and answers the backend's first calls from their rows.

An answer is given only while it is still what the query would return, so that a batch of many
facts gains too: the known fact ids grow with the statements the write inserts; a stream's tail
is given once, and dropped when the write inserts into that stream or retires one of its rows
(a retired row the write never loaded could be of any stream: then every tail not yet given is
dropped); stored prose is given once, and dropped when the write inserts prose with the same
text or retires the statement found.
"""

from __future__ import annotations

from typing import Any

from shared_core.clock import Instant
from shared_core.ledger.backend import ProseRead, TailRead, WriteReads
from shared_core.ledger.postgres import sql
from shared_core.ledger.sql_backend import prose_params

Rows = list[tuple[Any, ...]]


class ReadAhead:
    """The answers of one write's first reads (empty between writes)."""

    def __init__(self) -> None:
        self._asked: frozenset[str] = frozenset()
        self._known: set[str] = set()
        self._tails: dict[tuple[int, str], tuple[Instant, Rows, Rows]] = {}
        self._prose: dict[ProseRead, Rows] = {}
        self._pending: list[tuple[object, Any, Any]] = []
        # the stream of each statement and version row the write loaded, by seq and by row id
        self._statement_streams: dict[int, tuple[int | None, str]] = {}
        self._version_streams: dict[int, tuple[int | None, str]] = {}

    def send(self, conn: Any, reads: WriteReads) -> None:
        """Queue the reads on ``conn`` (in pipeline mode: sent with the next flush)."""
        self.clear()
        if reads.fact_ids:
            ids = list(dict.fromkeys(reads.fact_ids))
            self._asked = frozenset(ids)
            cursor = conn.execute(sql.KNOWN_FACT_IDS, (ids,))
            self._pending.append((None, cursor, None))
        for tail in reads.tails:
            params = tail_params(tail.key_id, tail.stream, tail.before)
            versions = conn.execute(sql.SUFFIX_VERSIONS_HEADED, params)
            statements = conn.execute(sql.SUFFIX_STATEMENTS, params)
            self._pending.append((tail, versions, statements))
        for prose in reads.prose:
            params = prose_params(prose.namespace, prose.text_key, prose.valid_from, prose.valid_to)
            self._pending.append((prose, conn.execute(sql.FIND_PROSE, params), None))

    def receive(self) -> None:
        """Read the rows of what :meth:`send` queued (after the lock's round trip)."""
        pending, self._pending = self._pending, []
        for read, first, then in pending:
            if read is None:
                self._known = {row[0] for row in first.fetchall()}
            elif isinstance(read, TailRead):
                key = (read.key_id, read.stream)
                self._tails[key] = (read.before, list(first.fetchall()), list(then.fetchall()))
            elif isinstance(read, ProseRead):
                self._prose[read] = list(first.fetchall())

    def clear(self) -> None:
        """Forget every answer (at the end of a write)."""
        self._asked, self._known = frozenset(), set()
        self._tails.clear()
        self._prose.clear()
        self._pending.clear()
        self._statement_streams.clear()
        self._version_streams.clear()

    # ------------------------------------------------------------------ answers
    def known_fact_ids(self, fact_ids: list[str]) -> set[str] | None:
        """Which of these ids are used, if all of them were asked; else None."""
        if not fact_ids or not self._asked.issuperset(fact_ids):
            return None
        return self._known.intersection(fact_ids)

    def tail(
        self, key_id: int | None, stream: str, before: Instant
    ) -> tuple[Instant, Rows, Rows] | None:
        """The suffix rows read for this stream from an instant no later than ``before``
        (given once), as (that instant, version rows, statement rows); else None."""
        if key_id is None:
            return None
        found = self._tails.pop((key_id, stream), None)
        return found if found is not None and found[0] <= before else None

    def prose(self, read: ProseRead) -> Rows | None:
        """The stored prose rows for exactly this lookup (given once); else None."""
        return self._prose.pop(read, None)

    # ------------------------------------------------------------------ what the write changes
    def loaded(self, key_id: int | None, stream: str, seqs: list[int], row_ids: list[int]) -> None:
        """The write loaded these rows of a stream (so a retirement of one names its stream)."""
        self._statement_streams.update(dict.fromkeys(seqs, (key_id, stream)))
        self._version_streams.update(dict.fromkeys(row_ids, (key_id, stream)))

    def inserted_statement(
        self, fact_id: str, key_id: int | None, stream: str, namespace: str, text_key: str
    ) -> None:
        self._known.add(fact_id)
        self.inserted_version(key_id, stream)
        if key_id is None:
            for read in [
                r for r in self._prose if (r.namespace, r.text_key) == (namespace, text_key)
            ]:
                del self._prose[read]

    def inserted_version(self, key_id: int | None, stream: str) -> None:
        if key_id is not None:
            self._tails.pop((key_id, stream), None)

    def retired_statement(self, seq: int) -> None:
        for read in [r for r, rows in self._prose.items() if rows and rows[0][0] == seq]:
            del self._prose[read]
        self._drop_tail(self._statement_streams.get(seq))

    def retired_version(self, row_id: int) -> None:
        self._drop_tail(self._version_streams.get(row_id))

    def _drop_tail(self, stream: tuple[int | None, str] | None) -> None:
        if stream is None:
            self._tails.clear()
        elif stream[0] is not None:
            self._tails.pop((stream[0], stream[1]), None)


def tail_params(key_id: int | None, stream: str, before: Instant) -> tuple[Any, ...]:
    """The parameters of both suffix reads (sql.SUFFIX_VERSIONS_HEADED and
    sql.SUFFIX_STATEMENTS, or their _PROSE twins when ``key_id`` is None)."""
    params = (*((key_id,) if key_id is not None else ()), stream)
    return (*params, *params, before)


__all__ = ["ReadAhead", "tail_params"]
