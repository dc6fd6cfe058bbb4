"""The storage port under :class:`~shared_core.ledger.ledger.Ledger`.

A backend stores statement and version rows and answers a few indexed queries; every rule lives
in :mod:`shared_core.supersession` and in the ledger. Backends are not thread-safe by themselves:
the ledger serialises calls. Writes happen only inside ``transaction()``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from shared_core.clock import Instant
from shared_core.facts import Cardinality, FactKey, Reason
from shared_core.ledger.records import LedgerDump, StatementRow, VersionRow
from shared_core.supersession import StreamState, Version

FactRow = tuple[VersionRow, StatementRow]
"""A version record with the statement that names it (its text and display fields)."""


@dataclass(frozen=True, slots=True)
class VersionQuery:
    """Versions of a namespace visible at (valid_at, known_at), optionally of one subject/relation.

    ``subject`` and ``relation`` are normalised; ``None`` matches anything, prose included.
    """

    namespace: str
    valid_at: Instant
    known_at: Instant
    subject: str | None = None
    relation: str | None = None


@dataclass(frozen=True, slots=True)
class TailRead:
    """A ``load_tail(key_id, stream, before)`` a write expects to make."""

    key_id: int
    stream: str
    before: Instant


@dataclass(frozen=True, slots=True)
class ProseRead:
    """A ``find_prose(namespace, text_key, valid_from, valid_to)`` a write expects to make."""

    namespace: str
    text_key: str
    valid_from: Instant | None
    valid_to: Instant | None


@dataclass(frozen=True, slots=True)
class WriteReads:
    """The reads a write expects to start with, named before its transaction begins.

    A backend on a server may run them in the round trip that takes its write lock, and answer
    the write's first ``known_fact_ids``, ``load_tail`` and ``find_prose`` calls from them, so
    that the lock is held for fewer round trips; an embedded backend may ignore them. They
    are a hint: an answer given from them is one the call could get at that point of the
    transaction (a tail read from an earlier ``before`` is a longer suffix, which plans the
    same), and a call they do not cover is made as usual.

    A write the ledger marks ``parallel`` (only new facts, no explicit record time) also names
    its ``keys`` and the explicit valid times of its facts (``times``). A backend that writes
    in parallel (``Backend.parallel_writes``) may then run it beside writes of other keys:
    it locks what the write names instead of the whole ledger, plans with the record time
    it read, and stamps the record time, seqs and row ids when it commits (see
    :meth:`Backend.moved_record_time`). If it cannot finish the write that way it raises
    :class:`ParallelWriteRefused` with nothing kept, and the ledger runs the write again alone.
    """

    fact_ids: tuple[str, ...] = ()
    tails: tuple[TailRead, ...] = ()
    prose: tuple[ProseRead, ...] = ()
    keys: tuple[FactKey, ...] = ()
    times: tuple[Instant, ...] = ()
    parallel: bool = False


NO_READS = WriteReads()


class ParallelWriteRefused(Exception):  # noqa: N818  (control flow inside the ledger)
    """A backend could not finish a parallel write as planned (it read rows after it had
    queued changes, or its plan depended on the record time it would be stamped with).
    Nothing of it was kept. Never leaves the ledger, which runs the write again alone."""


class Backend(Protocol):
    """Rows in, rows out; one exclusive transaction at a time."""

    reads_ahead: bool
    """Whether ``transaction`` uses the reads it is told of (else nobody need name them)."""

    parallel_writes: bool
    """Whether ``transaction`` may run a write marked ``parallel`` beside others (see
    :class:`WriteReads`); else every transaction is exclusive."""

    def transaction(self, *, reads: WriteReads = NO_READS) -> AbstractContextManager[None]:
        """An exclusive, all-or-nothing unit of writes (rolled back on any exception);
        ``reads`` names what it will read first (see :class:`WriteReads`)."""
        ...

    def moved_record_time(self) -> tuple[Instant, Instant] | None:
        """After a parallel write committed: (the record time it was planned with, the one it
        was stamped with) when they differ, else None (another writer committed a later
        record time in between; every instant of the write that was the planned one is the
        stamped one)."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A consistent view for several reads."""
        ...

    def revision(self) -> tuple[int, int]:
        """Changes whenever a transaction commits, from this process or another (cheap)."""
        ...

    def mirror_lock(self) -> AbstractContextManager[None]:
        """Held while a vector index applies the change feed: mirrors of one ledger in several
        threads or processes apply it one at a time (writes go on meanwhile)."""
        ...

    def last_record(self) -> tuple[Instant, int]:
        """The latest record time and statement seq used so far ((0, 0) when empty)."""
        ...

    def set_last_record(self, recorded_at: Instant, seq: int) -> None: ...

    def cardinality(self, relation: str) -> Cardinality | None:
        """The declared cardinality of a normalised relation, or None if never declared."""
        ...

    def set_cardinality(self, relation: str, cardinality: Cardinality, at: Instant) -> None: ...

    def relation_in_use(self, relation: str) -> bool:
        """Whether any statement uses this normalised relation."""
        ...

    def key_id(self, key: FactKey) -> int | None:
        """The key's id, if any statement ever used the key."""
        ...

    def key_ids(self, keys: list[FactKey]) -> dict[FactKey, int]:
        """The ids of those of these keys any statement ever used (one lookup for all)."""
        ...

    def ensure_key(self, key: FactKey) -> tuple[int, bool]:
        """The key's id, created if needed; the flag says whether it was created now."""
        ...

    def load_stream(self, key_id: int | None, stream: str) -> StreamState:
        """The believed statements and version records of one stream (complete)."""
        ...

    def load_tail(self, key_id: int | None, stream: str, before: Instant) -> StreamState:
        """What a statement valid from ``before`` can change: the stream from the start of its
        latest believed version that starts before ``before`` on (``complete=False``,
        ``start`` set); the whole stream when no version starts before it."""
        ...

    def load_streams(self, key_id: int) -> dict[str, StreamState]:
        """Every stream of a key that has believed statements."""
        ...

    def insert_statement(self, row: StatementRow) -> None: ...

    def retire_statement(self, seq: int, at: Instant, reason: Reason) -> None: ...

    def insert_version(
        self, version: Version, *, namespace: str, key_id: int | None, stream: str, at: Instant
    ) -> int:
        """Store a version record recorded at ``at``; returns its row id."""
        ...

    def retire_version(self, row_id: int, at: Instant, reason: Reason) -> None: ...

    def statement(self, seq: int) -> StatementRow: ...

    def known_fact_ids(self, fact_ids: list[str]) -> set[str]:
        """Which of these ids any statement already uses."""
        ...

    def statements_of_fact(self, fact_id: str) -> list[StatementRow]:
        """Every record with this fact id, in record order."""
        ...

    def find_prose(
        self, namespace: str, text_key: str, valid_from: Instant | None, valid_to: Instant | None
    ) -> StatementRow | None:
        """A believed prose statement with this text (and times; ``valid_from=None``: any)."""
        ...

    def query(self, query: VersionQuery) -> list[FactRow]:
        """Visible versions, ordered by subject, relation, valid_from, row id (prose last)."""
        ...

    def key_versions(self, key_id: int, known_at: Instant) -> list[FactRow]:
        """Every version record of a key recorded at or before ``known_at``, by row id."""
        ...

    def namespaces(self, prefix: str, valid_at: Instant, known_at: Instant) -> list[str]:
        """The namespaces starting with ``prefix`` that hold a version visible at
        (``valid_at``, ``known_at``), each once, in any order."""
        ...

    def versions_of_fact(self, fact_id: str) -> list[FactRow]:
        """Every version record named ``fact_id``, by row id."""
        ...

    def versions_by_row(self, row_ids: list[int]) -> list[FactRow]:
        """The given version records, in the order asked."""
        ...

    def visible_rows(
        self, row_ids: list[int], namespace: str, valid_at: Instant | None, known_at: Instant
    ) -> set[int]:
        """Those of the given version rows that are in ``namespace``, believed at ``known_at``
        (``recorded_at <= known_at < retired_at``) and valid at ``valid_at`` (None: at any
        time), read without decoding them."""
        ...

    def list_visible_rows(
        self, namespace: str, valid_at: Instant | None, known_at: Instant, limit: int
    ) -> list[int] | None:
        """Every version row :meth:`visible_rows` would keep, when there are at most
        ``limit`` (else None), found without being given candidates."""
        ...

    def changed_versions(
        self, after_row: int, retired_from: Instant, *, strict: bool, limit: int
    ) -> list[FactRow]:
        """The change feed, by row id: up to ``limit`` rows inserted after ``after_row``, and
        every row up to ``after_row`` retired after ``retired_from`` (at it too unless
        ``strict``), as they stand now."""
        ...

    def count_retired_at(self, at: Instant) -> int:
        """How many version rows were retired at exactly ``at``."""
        ...

    def last_row_id(self) -> int:
        """The highest version row id (0 when empty)."""
        ...

    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        """Every row ever stored, in insertion order (for audits, backups and tests)."""
        ...

    def relations(self) -> dict[str, Cardinality]:
        """Every declared relation's cardinality."""
        ...

    def keys(self) -> dict[int, FactKey]:
        """Every key by id."""
        ...

    def restore(self, dump: LedgerDump) -> None:
        """Store every row of ``dump`` as it is (ids included) into this empty store, inside
        ``transaction()``; new ids continue after the restored ones."""
        ...

    def close(self) -> None: ...
