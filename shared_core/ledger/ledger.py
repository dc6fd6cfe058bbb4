"""The ledger: the public bi-temporal API over any storage backend.

The semantics are the contract of docs/design.md ("Bi-temporal semantics"): valid time
(when a fact is true) and record time (when the ledger believed it), supersession on write for
relations of cardinality ONE, accumulation for MANY, retractions, corrections, and nothing ever
deleted. Rules are pure functions (:mod:`shared_core.supersession`); :class:`Ledger` validates
input, assigns record time, runs the rules inside one transaction and applies their plans; it
answers reads at a valid time and a record time, and serves the change feed a vector index
mirrors and the dumps that copy a ledger.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, Self

from shared_core.clock import OPEN, Clock, Instant, SystemClock, to_instant
from shared_core.errors import (
    CardinalityConflictError,
    FactNotFoundError,
    InvalidInputError,
    InvalidOperationError,
    NotRetiredError,
)
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    Cardinality,
    Decision,
    Fact,
    FactKey,
    ObjectValue,
    Reason,
    ReasonKind,
    check_namespace,
    key_relation,
    key_subject,
)
from shared_core.ledger import prose
from shared_core.ledger.backend import (
    NO_READS,
    Backend,
    FactRow,
    ParallelWriteRefused,
    VersionQuery,
    WriteReads,
)
from shared_core.ledger.batch import Batch, Outcome, combine, expected_reads, restamped
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.records import (
    KIND_RETRACTION,
    LedgerDump,
    StatementRow,
    VersionRow,
    to_fact,
    version_record,
)
from shared_core.ledger.results import (
    ChangeCursor,
    ChangeSet,
    Explanation,
    StoredVersion,
    WriteResult,
)
from shared_core.supersession import RULE_CORRECTION, RULE_UNDO, RULE_WITHDRAWAL

__all__ = ["Ledger"]

_NOW_KNOWN = OPEN - 1  # "everything recorded so far": record time never runs ahead of the clock


class Ledger:
    """A bi-temporal ledger of facts over a storage :class:`Backend`.

    Open one as :class:`~shared_core.ledger.sqlite.SQLiteLedger` (an embedded file, the
    default), :class:`~shared_core.ledger.postgres.PostgresLedger` or
    :class:`~shared_core.ledger.in_memory.InMemoryLedger`, which choose the backend. Each
    write (``write``, ``write_many``, ``retract``, ``correct``, ``retire``, ``unretire``,
    ``supersede``) is one transaction that applies the supersession rule; reads (``as_of``,
    ``history``, ``explain``, ``versions``) answer at a valid time and a record time, both now
    by default; ``changes`` is the feed a vector index mirrors; ``dump`` and ``load`` copy a
    ledger. Thread-safe: calls are serialised. Use it as a context manager, or ``close`` it.

    Args:
        backend: the storage that holds the rows and runs the transactions.
        clock: where record time comes from (default: the system clock, in UTC). Record time
            never goes backwards, even when the clock does.

    Raises:
        InvalidInputError: an argument that cannot be accepted (a naive datetime, say); the
            error names the field and the fix.
        FactNotFoundError: a fact id the ledger does not hold.
        InvalidOperationError: a request the ledger's state does not allow (retiring a
            retired fact, changing a relation's cardinality once it holds facts).
        LedgerError: a failure of the storage.
    """

    def __init__(self, backend: Backend, *, clock: Clock | None = None) -> None:
        self._backend = backend
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- declarations
    def declare(self, relation: str, cardinality: Cardinality | str) -> None:
        """Declare a relation ONE (a new object supersedes; the default) or MANY (persisted).

        Changing the cardinality of a relation that already holds facts is refused: the stored
        timelines were derived under the old rule.
        """
        name = key_relation(relation)
        try:
            wanted = Cardinality(cardinality)
        except ValueError as exc:
            raise InvalidInputError(
                "cardinality", f"{cardinality!r} is not a cardinality", "use Cardinality.ONE/MANY"
            ) from exc
        with self._write() as batch:
            effective = self._backend.cardinality(name) or Cardinality.ONE
            if effective is not wanted and self._backend.relation_in_use(name):
                raise CardinalityConflictError(
                    f"relation {relation!r} already holds facts as {effective.name}; declare "
                    "relations before writing facts with them (or use a new relation name)"
                )
            self._backend.set_cardinality(name, wanted, batch.now)

    def cardinality(self, relation: str) -> Cardinality:
        """The relation's cardinality (ONE unless declared MANY)."""
        with self._lock:
            return self._backend.cardinality(key_relation(relation)) or Cardinality.ONE

    def declared_cardinality(self, relation: str) -> Cardinality | None:
        """The relation's declared cardinality, or None if it was never declared."""
        with self._lock:
            return self._backend.cardinality(key_relation(relation))

    # ----------------------------------------------------------------- writes
    def write(self, fact: Fact) -> WriteResult:
        """Store one statement and apply the supersession rule (see :class:`Decision`)."""
        _check_fact(fact, "fact")
        return self._write_new([fact], lambda batch: [batch.write_fact(fact)])[0]

    def write_many(
        self,
        facts: Iterable[Fact],
        *,
        supersessions: Iterable[ProseSupersession] = (),
        replacing: Iterable[str] = (),
        merge_prose: bool = True,
    ) -> list[WriteResult]:
        """Store several statements in one transaction: all of them or, on any error, none.

        ``supersessions`` are judged prose edges applied after the facts in the same
        transaction (ids may name facts of this batch or stored ones; see :meth:`supersede`;
        an edge naming a fact of this batch that was a duplicate is skipped). A closing shows
        in the ``closed`` of the later-valid statement's result (else the earlier one's).

        ``replacing`` names statements these facts replace (a document written again under
        its id, say): after the facts, in the same transaction, each is withdrawn as
        :meth:`retire` would, unless the facts ended its version (it stays as history) or
        one of them repeats it exactly, metadata included (nothing changed; a duplicate that
        differs in text or metadata is written as a statement of its own). Retired ones are
        skipped; an unknown id is FactNotFoundError. ``merge_prose=False`` stores every prose
        fact as a statement of its own, even when believed prose with the same text exists
        (for callers that name what they store).
        """
        facts = list(facts)
        for index, fact in enumerate(facts):
            _check_fact(fact, f"facts[{index}]")
        edges = prose.check_supersessions(supersessions)
        replaced = _fact_ids(replacing, "replacing")

        def write_all(batch: Batch) -> list[WriteResult]:
            batch.merge_prose = merge_prose
            results = []
            for index, fact in enumerate(facts):
                try:
                    results.append(batch.write_fact(fact))
                except InvalidInputError as exc:
                    raise exc.at(f"facts[{index}]") from exc.__cause__
            if edges:
                results = prose.apply_to_batch(batch, facts, results, edges)
            if replaced:
                results = self._withdraw_replaced(batch, replaced, facts, results)
            return results

        alone = bool(edges or replaced)  # they name stored statements by id: no parallel write
        return self._write_new(facts, write_all, merge_prose=merge_prose, alone=alone)

    def supersede(
        self,
        older_id: str,
        *,
        by: str,
        rule: str,
        score: float | None = None,
        recorded_at: datetime | None = None,
    ) -> WriteResult:
        """Close the validity of prose statement ``older_id`` because prose statement ``by``
        makes it no longer true (according to detector ``rule``, with ``score``).

        The earlier-valid of the two is closed at the later one's ``valid_from``, with
        ``Reason(SUPERSEDED, by=<later>, rule, score)``; nothing happens (DUPLICATE) when it
        is not valid then, either is retired, or both start together. Keyed facts are refused
        (InvalidOperationError: the key rule supersedes them). ``unretire(older_id)`` or
        ``unretire(result.statement_id)`` undoes it; retiring ``by`` does not (see
        :mod:`shared_core.ledger.prose`).
        """
        edge = prose.ProseSupersession(older_id, by, rule, score)
        with self._write(recorded_at) as batch:
            applied = prose.supersede(batch, edge)
            return batch.result(applied.outcome, applied.statement_id)

    def retract(
        self,
        subject: str,
        relation: str,
        object: ObjectValue | None = None,
        *,
        at: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        text: str | None = None,
        recorded_at: datetime | None = None,
    ) -> WriteResult:
        """End what is valid for the key at ``at`` (default: the record time, i.e. now).

        ONE: ends the current value (if ``object`` is given it must be that value). MANY: ends
        ``object``, or every value valid at ``at`` when ``object`` is None.
        """
        probe = Fact(
            text=text
            or f"retraction: {subject} {relation}" + ("" if object is None else f" {object}"),
            subject=subject,
            relation=relation,
            object="-" if object is None else object,
            namespace=namespace,
            valid_from=at,
        )  # validates every argument with the usual messages
        key = probe.key
        assert key is not None
        with self._write(recorded_at) as batch:
            when = batch.record_time(None) if at is None else to_instant(at, "at")
            outcome = batch.retract(probe, key, object, when)
            return batch.result(outcome, probe.id)

    def correct(
        self, fact_id: str, *, recorded_at: datetime | None = None, **changes: Any
    ) -> WriteResult:
        """Replace a wrong statement: it is retired in record time (it was never true) and a
        corrected copy with ``changes`` (subject, relation, object, text, valid_from, valid_to,
        metadata) is written in the same transaction."""
        allowed = {"subject", "relation", "object", "text", "valid_from", "valid_to", "metadata"}
        unknown = set(changes) - allowed
        if unknown:
            raise InvalidInputError(
                ", ".join(sorted(unknown)), "cannot be corrected", f"correct only {sorted(allowed)}"
            )
        if not changes:
            raise InvalidInputError(
                "changes",
                "nothing to correct",
                "pass the corrected fields (object=..., valid_from=...), or retire(fact_id)",
            )
        with self._write(recorded_at) as batch:
            original = self._believed_assertion(fact_id)
            fields = original.fact_fields()
            fields.update(changes)
            replacement = Fact(**fields)
            reason = Reason(ReasonKind.CORRECTED, replacement.id, RULE_CORRECTION)
            withdrawn = batch.withdraw([original], reason, Decision.CORRECTED)
            written = batch.write_outcome(replacement)
            outcome = combine([withdrawn, written], Decision.CORRECTED, fact=written.fact)
            return batch.result(outcome, replacement.id)

    def retire(
        self,
        fact_id: str,
        *,
        rule: str = RULE_WITHDRAWAL,
        by: str | None = None,
        recorded_at: datetime | None = None,
    ) -> WriteResult:
        """Withdraw a statement in record time: it was never true (history keeps it, marked)."""
        with self._write(recorded_at) as batch:
            rows = [row for row in self._statements(fact_id) if row.believed]
            if not rows:
                raise InvalidOperationError(f"fact {fact_id!r} is already retired")
            reason = Reason(ReasonKind.WITHDRAWN, by, rule)
            outcome = batch.withdraw(rows, reason, Decision.WITHDRAWN)
            return batch.result(outcome, fact_id)

    def retire_many(
        self,
        fact_ids: Iterable[str],
        *,
        rule: str = RULE_WITHDRAWAL,
        recorded_at: datetime | None = None,
    ) -> list[WriteResult]:
        """Withdraw several statements in one transaction (all or, on any error, none).

        Ids already retired are skipped (no result); an unknown id raises FactNotFoundError.
        """
        wanted = list(dict.fromkeys(fact_ids))
        with self._write(recorded_at) as batch:
            results = []
            for fact_id in wanted:
                rows = [row for row in self._statements(fact_id) if row.believed]
                if rows:
                    reason = Reason(ReasonKind.WITHDRAWN, None, rule)
                    outcome = batch.withdraw(rows, reason, Decision.WITHDRAWN)
                    results.append(batch.result(outcome, fact_id))
            return results

    def unretire(self, fact_id: str, *, recorded_at: datetime | None = None) -> WriteResult:
        """Undo: re-record a retired statement, or undo the retraction (or the judged prose
        supersession) that ended a fact."""
        with self._write(recorded_at) as batch:
            return self._unretire(batch, fact_id)

    def unretire_many(
        self, fact_ids: Iterable[str], *, recorded_at: datetime | None = None
    ) -> list[WriteResult]:
        """:meth:`unretire` several statements in one transaction (all or, on any error,
        none), in the order given; an id given twice is undone once."""
        wanted = list(dict.fromkeys(fact_ids))
        with self._write(recorded_at) as batch:
            return [self._unretire(batch, fact_id) for fact_id in wanted]

    def _unretire(self, batch: Batch, fact_id: str) -> WriteResult:
        rows = self._statements(fact_id)
        believed = [row for row in rows if row.believed]
        if not believed:  # re-record the last operation (a retraction may span streams)
            latest = {(row.key_id, row.stream): row for row in rows}  # last per stream
            last = rows[-1].recorded_at
            outcomes = [batch.rerecord(r) for r in latest.values() if r.recorded_at == last]
            return batch.result(combine(outcomes, Decision.RESTORED), fact_id)
        if all(row.kind == KIND_RETRACTION for row in believed):
            reason = Reason(ReasonKind.UNDONE, None, RULE_UNDO)
            outcome = batch.withdraw(believed, reason, Decision.RESTORED)
            return batch.result(outcome, fact_id)
        return self._undo_ending(batch, believed[0])

    def _undo_ending(self, batch: Batch, row: StatementRow) -> WriteResult:
        state = batch.stream(row.key_id, row.stream)
        version = state.version_at(row.valid_from)
        assert version is not None, "a believed assertion always starts a version"
        end = version.end
        if end is None:
            return batch.result(Outcome(Decision.DUPLICATE, version), row.fact_id)
        if end.kind is ReasonKind.RETRACTED and end.by is not None:
            retraction = [
                r for r in self._statements(end.by) if r.believed and r.stream == row.stream
            ]
            reason = Reason(ReasonKind.UNDONE, row.fact_id, RULE_UNDO)
            outcome = batch.withdraw(retraction, reason, Decision.RESTORED)
            restored = batch.stream(row.key_id, row.stream).version_at(row.valid_from)
            return batch.result(combine([outcome], Decision.RESTORED, fact=restored), row.fact_id)
        if end.kind is ReasonKind.SUPERSEDED and prose.closed_by_edge(batch, row, version):
            return batch.result(prose.undo(batch, row, version), row.fact_id)
        if end.kind is ReasonKind.SUPERSEDED:
            raise NotRetiredError(
                f"fact {row.fact_id!r} was superseded by {end.by!r}; it is history, not retired. "
                f"If {end.by!r} is wrong, call retire({end.by!r})"
            )
        raise NotRetiredError(
            f"fact {row.fact_id!r} ended at its own valid_to; write a new fact to extend it"
        )

    # ----------------------------------------------------------------- reads: facts at a time
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
        return [to_fact(version.as_known(query.known_at), head) for version, head in rows]

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
            version, head = row[0].as_known(known), row[1]
            previous = shown.get(version.fact_id)
            if previous is None or previous[0].retired_at != OPEN or version.retired_at == OPEN:
                shown[version.fact_id] = (version, head)
        latest = {fact_id: row for fact_id, row in shown.items() if fact_id in believed_once}
        ordered = sorted(latest.values(), key=lambda r: (r[0].valid_from, r[0].row_id))
        return [to_fact(*row) for row in ordered]

    # ----------------------------------------------------------------- reads: one fact
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

    # ----------------------------------------------------------------- reads: version rows
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
            StoredVersion(
                version_record(version, head, attributes), to_fact(version.as_known(known), head)
            )
            for version, head in rows
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

    # ----------------------------------------------------------------- change feed
    def changes(self, since: ChangeCursor | None = None, *, limit: int = 10_000) -> ChangeSet:
        """Version rows inserted or retired since ``since`` (everything when None), as they
        stand now, with the cursor to continue from; ``more`` says a page limit was reached.

        This is how a vector index mirrors the ledger: apply the records, store the cursor.
        A returned cursor behind ``since`` means ``since`` came from another ledger (or a
        newer copy of this one): rebuild the mirror from ``ChangeCursor()``.
        """
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInputError("limit", f"{limit!r} is not a positive int", "use e.g. 10000")
        since = since if since is not None else ChangeCursor()
        with self._lock, self._backend.snapshot():
            last_time, _ = self._backend.last_record()
            seen = self._backend.count_retired_at(since.retired_from) == since.retired_at_from
            rows = self._backend.changed_versions(
                since.after_row, since.retired_from, strict=seen, limit=limit
            )
            last_row = self._backend.last_row_id()
            at_last = self._backend.count_retired_at(last_time)
        records = tuple(version_record(*row) for row in rows)
        inserted = [r.row_id for r in records if r.row_id > since.after_row]
        if len(inserted) == limit and inserted[-1] < last_row:
            # every row up to inserted[-1] was sent as it stands now: the next page starts
            # from now, or each page would send the retirements of every page before it again
            return ChangeSet(records, ChangeCursor(inserted[-1], last_time, at_last), more=True)
        return ChangeSet(records, ChangeCursor(last_row, last_time, at_last))

    def revision(self) -> tuple[int, int]:
        """A value that changes whenever a write commits (here or in another process): equal
        revisions mean nothing changed in between, so a mirror need not ask for changes."""
        with self._lock:
            return self._backend.revision()

    def mirror_lock(self) -> AbstractContextManager[None]:
        """Held while a vector index applies this ledger's change feed, so that mirrors in
        several threads or processes apply it one at a time (writers do not wait for it)."""
        return self._backend.mirror_lock()

    # ----------------------------------------------------------------- copies
    def export(self) -> tuple[list[StatementRow], list[VersionRow]]:
        """Every statement and version record ever stored (nothing is ever deleted)."""
        with self._lock, self._backend.snapshot():
            return self._backend.export()

    def dump(self) -> LedgerDump:
        """Every row as it stands (relations, keys, statements, versions, the record clock),
        read in one consistent view: what :meth:`load` stores into another ledger."""
        with self._lock, self._backend.snapshot():
            statements, versions = self._backend.export()
            return LedgerDump(
                relations=tuple(sorted(self._backend.relations().items())),
                keys=tuple(sorted(self._backend.keys().items())),
                statements=tuple(statements),
                versions=tuple(versions),
                last_record=self._backend.last_record(),
            )

    def load(self, dump: LedgerDump) -> None:
        """Store ``dump`` (of another ledger) into this new, empty ledger, all or nothing;
        InvalidOperationError, with nothing changed, when this ledger holds anything."""
        with self._lock, self._backend.transaction():
            if (
                self._backend.last_record() != (0, 0)
                or self._backend.last_row_id()
                or self._backend.relations()
            ):
                raise InvalidOperationError(
                    "this ledger is not empty: load a dump only into a new ledger "
                    "(nothing was changed)"
                )
            self._backend.restore(dump)

    # ----------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Release the storage (idempotent)."""
        with self._lock:
            self._backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- internals
    def _write_new(
        self,
        facts: list[Fact],
        write: Callable[[Batch], list[WriteResult]],
        *,
        merge_prose: bool = True,
        alone: bool = False,
    ) -> list[WriteResult]:
        """Run ``write`` on a batch expecting ``facts``: beside other writers when the backend
        can (see WriteReads; not for facts with an explicit record time), else alone."""
        parallel = (
            not alone
            and self._backend.parallel_writes
            and bool(facts)
            and all(fact.recorded_at is None for fact in facts)
        )
        with self._lock:
            if parallel:
                try:
                    with self._write(expecting=facts, merge_prose=merge_prose, parallel=True) as b:
                        b.expect(facts)
                        results = write(b)
                    moved = self._backend.moved_record_time()
                    return results if moved is None else [restamped(r, *moved) for r in results]
                except ParallelWriteRefused:
                    pass  # nothing was kept: the write runs again, alone
            with self._write(expecting=facts, merge_prose=merge_prose) as batch:
                batch.expect(facts)
                return write(batch)

    @contextmanager
    def _write(
        self,
        recorded_at: datetime | None = None,
        *,
        expecting: list[Fact] | None = None,
        merge_prose: bool = True,
        parallel: bool = False,
    ) -> Iterator[Batch]:
        """One transaction; ``recorded_at`` pins its record time (else each change is now).
        ``expecting``: the facts it writes first, whose reads a backend may run with its lock;
        ``parallel``: whether it may run beside other writers (see WriteReads)."""
        with (
            self._lock,
            self._backend.transaction(reads=self._reads(expecting, merge_prose, parallel)),
        ):
            last_time, last_seq = self._backend.last_record()
            now = max(self._now(), last_time)
            batch = Batch(self._backend, now=now, last_time=last_time, last_seq=last_seq)
            batch.pin(recorded_at)
            yield batch
            self._backend.set_last_record(batch.last_time, batch.last_seq)

    def _reads(self, facts: list[Fact] | None, merge_prose: bool, parallel: bool) -> WriteReads:
        if not facts or not self._backend.reads_ahead:
            return NO_READS
        return expected_reads(
            self._backend, facts, now=self._now(), merge_prose=merge_prose, parallel=parallel
        )

    def _statements(self, fact_id: str) -> list[StatementRow]:
        rows = self._backend.statements_of_fact(fact_id)
        if not rows:
            raise FactNotFoundError(fact_id)
        return rows

    def _withdraw_replaced(
        self, batch: Batch, fact_ids: list[str], facts: list[Fact], results: list[WriteResult]
    ) -> list[WriteResult]:
        """Withdraw the replaced statements the batch's facts neither ended nor repeated
        exactly; a fact that was a duplicate of one but says it with other text or metadata
        is then written again, as itself."""
        replaced = set(fact_ids)
        kept = {fact.id for result in results for fact in result.closed}
        again = []
        for index, (fact, result) in enumerate(zip(facts, results, strict=True)):
            held = result.fact
            if result.decision is Decision.DUPLICATE and held is not None and held.id in replaced:
                if fact.text == held.text and fact.metadata == held.metadata:
                    kept.add(held.id)
                else:
                    again.append(index)
        rows = [
            row
            for fact_id in fact_ids
            if fact_id not in kept
            for row in self._statements(fact_id)
            if row.believed
        ]
        if rows:
            reason = Reason(ReasonKind.WITHDRAWN, None, RULE_WITHDRAWAL)
            batch.withdraw(rows, reason, Decision.WITHDRAWN)
        out = list(results)
        for index in again:
            out[index] = batch.write_fact(facts[index])
        return out

    def _believed_assertion(self, fact_id: str) -> StatementRow:
        rows = self._statements(fact_id)
        believed = [row for row in rows if row.believed]
        if not believed:
            raise InvalidOperationError(
                f"fact {fact_id!r} is already retired; unretire it first or write a new fact"
            )
        if believed[0].kind == KIND_RETRACTION:
            raise InvalidOperationError(
                f"fact {fact_id!r} is a retraction; undo it with unretire({fact_id!r})"
            )
        return believed[0]

    def _now(self) -> Instant:
        return to_instant(self._clock.now(), "clock.now()")


def _fact_ids(ids: Iterable[str], name: str) -> list[str]:
    """``ids`` as a list without repeats, each a non-empty string."""
    if isinstance(ids, str):
        raise InvalidInputError(name, "is a single string", "pass a list of fact ids")
    found = list(dict.fromkeys(ids))
    for index, fact_id in enumerate(found):
        if not isinstance(fact_id, str) or not fact_id:
            raise InvalidInputError(f"{name}[{index}]", f"is {fact_id!r}", "pass fact id strings")
    return found


def _check_fact(fact: object, name: str) -> None:
    """``fact`` is a Fact that leaves to the ledger what the ledger sets."""
    if not isinstance(fact, Fact):
        raise InvalidInputError(
            name, f"expected a Fact, got {type(fact).__name__}", "build one with Fact(text=...)"
        )
    for owned in ("retired_at", "end_reason", "retire_reason"):
        if getattr(fact, owned) is not None:
            raise InvalidInputError(
                f"{name}.{owned}",
                "is set by the ledger",
                "leave it None (use retract, correct or retire to end facts)",
            )
