"""The ledger's reads: facts at a time, one fact's records, version rows by id.

:class:`LedgerReads` is the read side of :class:`~shared_core.ledger.ledger.Ledger` (a mixin:
it reads through the ledger's backend, under its lock). Every read takes a valid time and a
record time ("as known at"); both default to now.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from shared_core.clock import OPEN, Clock, Instant, to_instant
from shared_core.errors import FactNotFoundError, InvalidInputError
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    Fact,
    FactKey,
    check_namespace,
    key_relation,
    key_subject,
)
from shared_core.ledger.backend import Backend, FactRow, VersionQuery
from shared_core.ledger.records import KIND_RETRACTION, to_fact
from shared_core.ledger.results import Explanation, StoredVersion
from shared_core.ledger.views import as_known, version_record

__all__ = ["LedgerReads"]

_NOW_KNOWN = OPEN - 1  # "everything recorded so far": record time never runs ahead of the clock


class LedgerReads:
    """What a :class:`~shared_core.ledger.ledger.Ledger` answers (see each method)."""

    _backend: Backend
    _clock: Clock
    _lock: threading.RLock

    # ----------------------------------------------------------------- facts at a time
    def current(
        self,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        subject: str | None = None,
        relation: str | None = None,
    ) -> list[Fact]:
        """What is valid now, as known now."""
        return self.as_of(namespace=namespace, subject=subject, relation=relation)

    def as_of(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        subject: str | None = None,
        relation: str | None = None,
    ) -> list[Fact]:
        """The facts true at ``valid_at`` according to what was recorded up to ``known_at``.

        Both default to now. ``subject``/``relation`` narrow the answer (prose is included only
        when neither is given).
        """
        query = VersionQuery(
            namespace=check_namespace(namespace),
            valid_at=to_instant(valid_at, "valid_at") if valid_at else self._now(),
            known_at=to_instant(known_at, "known_at") if known_at else _NOW_KNOWN,
            subject=None if subject is None else key_subject(subject),
            relation=None if relation is None else key_relation(relation),
        )
        with self._lock:
            rows = self._backend.query(query)
        return [to_fact(*as_known(row, query.known_at)) for row in rows]

    def namespaces(
        self,
        *,
        prefix: str = "",
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        """The namespaces that hold a fact valid at ``valid_at`` as known at ``known_at`` (both
        default to now), those starting with ``prefix`` (a plain string prefix), sorted.

        Linear in the visible versions of the matching namespaces (one indexed query)."""
        if not isinstance(prefix, str):
            raise InvalidInputError("prefix", f"is a {type(prefix).__name__}", "pass a str")
        valid = to_instant(valid_at, "valid_at") if valid_at else self._now()
        known = to_instant(known_at, "known_at") if known_at else _NOW_KNOWN
        with self._lock:
            found = self._backend.namespaces(prefix, valid, known)
        return sorted(found)

    def history(
        self,
        subject: str,
        relation: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        known_at: datetime | None = None,
    ) -> list[Fact]:
        """Every version of one key in valid-time order, as known at ``known_at`` (default now).

        Versions believed then come with their valid interval and why they ended; versions
        retired by then (corrected, withdrawn, merged) are included with ``retired_at`` and
        ``retire_reason`` set.
        """
        key = FactKey(check_namespace(namespace), key_subject(subject), key_relation(relation))
        known = to_instant(known_at, "known_at") if known_at else _NOW_KNOWN
        with self._lock:
            key_id = self._backend.key_id(key)
            rows = [] if key_id is None else self._backend.key_versions(key_id, known)
        shown: dict[str, FactRow] = {}
        believed_once: set[str] = set()
        for row in rows:  # in row order: a fact's later records replace earlier ones
            if row[0].recorded_at < row[0].retired_at:
                believed_once.add(row[0].fact_id)
            version, head = as_known(row, known)
            previous = shown.get(version.fact_id)
            if previous is None or previous[0].retired_at != OPEN or version.retired_at == OPEN:
                shown[version.fact_id] = (version, head)
        latest = {fact_id: row for fact_id, row in shown.items() if fact_id in believed_once}
        ordered = sorted(latest.values(), key=lambda r: (r[0].valid_from, r[0].row_id))
        return [to_fact(*row) for row in ordered]

    # ----------------------------------------------------------------- one fact
    def explain(self, fact_id: str) -> Explanation:
        """Every record of a fact id and why it is (not) current (see ``Explanation.summary``)."""
        with self._lock, self._backend.snapshot():
            statements = self._backend.statements_of_fact(fact_id)
            versions = self._backend.versions_of_fact(fact_id)
            if not statements and not versions:
                raise FactNotFoundError(fact_id)
            part_of = None
            believed = [s for s in statements if s.believed and s.kind != KIND_RETRACTION]
            if believed:
                row = believed[0]
                version = self._backend.load_stream(row.key_id, row.stream).version_at(
                    row.valid_from
                )
                if version is not None and version.row_id is not None:
                    part_of = to_fact(*self._backend.versions_by_row([version.row_id])[0])
        return Explanation(
            fact_id=fact_id,
            statements=tuple(s.public() for s in statements),
            versions=tuple(to_fact(*row) for row in versions),
            part_of=part_of,
        )

    def get(self, fact_id: str) -> Fact:
        """The newest record of the version named ``fact_id``.

        A statement that only reinforced another version, or a retraction, has no version of
        its own: use :meth:`explain` for those.
        """
        with self._lock:
            rows = self._backend.versions_of_fact(fact_id)
        if not rows:
            raise FactNotFoundError(fact_id)
        return to_fact(*rows[-1])

    # ----------------------------------------------------------------- version rows
    def versions(
        self,
        *,
        row_ids: Sequence[int] = (),
        fact_ids: Sequence[str] = (),
        known_at: datetime | None = None,
        attributes: bool = True,
    ) -> list[StoredVersion]:
        """Version rows by row id (in the order asked; unknown ids are skipped) and then every
        row of each fact id; each ``fact`` is shown as known at ``known_at`` (default now).
        ``attributes=False`` skips the records' filter attributes (cheaper when unused)."""
        known = to_instant(known_at, "known_at") if known_at else _NOW_KNOWN
        with self._lock, self._backend.snapshot():
            rows = self._backend.versions_by_row(list(row_ids))
            for fact_id in fact_ids:
                rows += self._backend.versions_of_fact(fact_id)
        return [
            StoredVersion(version_record(row, attributes), to_fact(*as_known(row, known)))
            for row in rows
        ]

    def visible_rows(
        self,
        row_ids: Sequence[int],
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None = None,
    ) -> set[int]:
        """Those of the given version rows a search in ``namespace`` at (``valid_at``,
        ``known_at``) may show: believed at ``known_at`` (None: now) and valid at ``valid_at``
        (None: at any time). Cheaper than :meth:`versions` (nothing is decoded)."""
        valid = None if valid_at is None else to_instant(valid_at, "valid_at")
        known = _NOW_KNOWN if known_at is None else to_instant(known_at, "known_at")
        with self._lock, self._backend.snapshot():
            return self._backend.visible_rows(list(row_ids), namespace, valid, known)

    def list_visible_rows(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None = None,
        limit: int,
    ) -> list[int] | None:
        """Every version row a search in ``namespace`` at (``valid_at``, ``known_at``) may show
        (as :meth:`visible_rows` decides), by row id, when there are at most ``limit``; None
        when there are more. For an index whose filtered search costs more than computing the
        distance of each such row (few rows believed long ago, say)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInputError("limit", f"is {limit!r}", "pass a whole number >= 0")
        valid = None if valid_at is None else to_instant(valid_at, "valid_at")
        known = _NOW_KNOWN if known_at is None else to_instant(known_at, "known_at")
        with self._lock, self._backend.snapshot():
            return self._backend.list_visible_rows(namespace, valid, known, limit)

    # ----------------------------------------------------------------- internals
    def _now(self) -> Instant:
        return to_instant(self._clock.now(), "clock.now()")
