"""Random write sequences for the ledger, replayed against the oracle and checked as they go."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from shared_core.clock import OPEN, ManualClock, from_instant, to_instant
from shared_core.errors import TemporalRagError
from shared_core.facts import Cardinality, Decision, Fact, ReasonKind
from shared_core.ledger import ChangeCursor, Ledger, StatementRow, VersionRecord, VersionRow
from tests.oracle import Oracle

START = datetime(2024, 1, 1, tzinfo=UTC)
BASE = datetime(2020, 1, 1, tzinfo=UTC)
SUBJECTS = ["Maria", "maria ", "MARIA", "João"]
RELATIONS = ["lives in", "lives-in", "role", "likes"]
CARDINALITIES = {"lives_in": Cardinality.ONE, "role": Cardinality.ONE, "likes": Cardinality.MANY}
OBJECTS: list[Any] = ["Berlin", "berlin", "Lisbon", "Porto", 1, 1.0, True]
NAMESPACES = ["default", "tenant-b"]
KEYS = [(s, r) for s in ("maria", "joão") for r in ("lives_in", "role", "likes")]


def day(n: int) -> datetime:
    return BASE + timedelta(days=n)


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    namespace = draw(st.sampled_from(NAMESPACES[:1] * 3 + NAMESPACES[1:]))
    start = draw(st.one_of(st.none(), st.integers(0, 8)))
    length = draw(st.one_of(st.none(), st.none(), st.integers(1, 3)))
    valid_to = None if start is None or length is None else day(start + length)
    valid_from = None if start is None else day(start)
    if draw(st.integers(0, 9)) == 0:  # plain prose
        text = draw(st.sampled_from(["it rained", "It  rained", "the meeting moved"]))
        return Fact(text=text, namespace=namespace, valid_from=valid_from, valid_to=valid_to)
    return Fact(
        text=draw(st.sampled_from(["said", "said again", "SAID"])),
        subject=draw(st.sampled_from(SUBJECTS)),
        relation=draw(st.sampled_from(RELATIONS)),
        object=draw(st.sampled_from(OBJECTS)),
        namespace=namespace,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def operations() -> st.SearchStrategy[list[tuple[Any, ...]]]:
    pick = st.integers(0, 1_000)
    write = st.tuples(st.just("write"), facts())
    op = st.one_of(
        write,
        write,
        write,
        st.tuples(st.just("write_many"), st.lists(facts(), min_size=1, max_size=4)),
        st.tuples(st.just("resubmit"), pick),
        st.tuples(
            st.just("retract"),
            st.sampled_from(NAMESPACES),
            st.sampled_from(SUBJECTS),
            st.sampled_from(RELATIONS),
            st.one_of(st.none(), st.sampled_from(OBJECTS)),
            st.one_of(st.none(), st.integers(0, 9)),
        ),
        st.tuples(
            st.just("retract_known"), pick, st.booleans(), st.one_of(st.none(), st.integers(0, 9))
        ),
        st.tuples(
            st.just("correct"),
            pick,
            st.one_of(
                st.fixed_dictionaries({"object": st.sampled_from(OBJECTS)}),
                st.fixed_dictionaries({"valid_from": st.integers(0, 9).map(day)}),
            ),
        ),
        st.tuples(st.just("retire"), pick),
        st.tuples(st.just("unretire"), pick),
        st.tuples(st.just("tick"), st.sampled_from([0, 0, 1, 2])),
    )
    return st.lists(op, min_size=8, max_size=40)


@dataclass
class Replay:
    """Drives one ledger and the oracle through the same operations, checking as it goes."""

    ledger: Ledger
    clock: ManualClock
    oracle: Oracle = field(default_factory=lambda: Oracle(dict(CARDINALITIES)))
    written: list[Fact] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    known_ids: list[str] = field(default_factory=list)
    snapshots: dict[tuple[str, int, int], set[tuple[Any, ...]]] = field(default_factory=dict)
    rows: tuple[list[StatementRow], list[VersionRow]] = ([], [])
    mirror: dict[int, VersionRecord] = field(default_factory=dict)  # fed by ledger.changes()
    cursor: ChangeCursor = field(default_factory=ChangeCursor)

    def __post_init__(self) -> None:
        self.ledger.declare("likes", Cardinality.MANY)
        self.ledger.declare("role", Cardinality.ONE)

    def run(self, operations: Iterable[tuple[Any, ...]]) -> None:
        for operation in operations:
            self.step(operation)
            self.check_nothing_deleted()
            self.check_change_feed()
            self.check_current()
            self.snapshot()
        self.check_everything()

    # ------------------------------------------------------------------ one step
    def step(self, operation: tuple[Any, ...]) -> None:
        name, *args = operation
        if name == "tick":
            self.clock.advance(timedelta(seconds=args[0]))
            return
        t = to_instant(self.clock.now())
        self.known_ids = list(self.ids)  # both sides pick targets from the same list
        got, result = _attempt(lambda: getattr(self, f"_ledger_{name}")(*args))
        new_id = getattr(result, "statement_id", "unused")
        expected, _ = _attempt(
            lambda: self.oracle.transaction(
                lambda: getattr(self, f"_oracle_{name}")(t, new_id, *args)
            )
        )
        assert got == expected, f"{operation}: ledger {got}, oracle {expected}"

    def _pick(self, index: int) -> str | None:
        ids = self.known_ids
        return ids[index % len(ids)] if ids else None

    def _ledger_write(self, fact: Fact) -> Any:
        result = self.ledger.write(fact)
        self.written.append(fact)
        self.ids.append(fact.id)
        return result

    def _oracle_write(self, t: int, _: str, fact: Fact) -> Decision:
        return self.oracle.write(fact, t)

    def _ledger_write_many(self, batch: list[Fact]) -> Any:
        results = self.ledger.write_many(batch)
        self.written += batch
        self.ids += [f.id for f in batch]
        return tuple(r.decision for r in results)

    def _oracle_write_many(self, t: int, _: str, batch: list[Fact]) -> tuple[Decision, ...]:
        return tuple(self.oracle.write(f, t) for f in batch)

    def _ledger_resubmit(self, index: int) -> Any:
        if not self.written:
            return None
        before = self.ledger.export()
        result = self.ledger.write(self.written[index % len(self.written)])
        if result.decision is Decision.DUPLICATE:
            assert self.ledger.export() == before, "a duplicate wrote something"
        return result

    def _oracle_resubmit(self, t: int, _: str, index: int) -> Decision | None:
        if not self.written:
            return None
        return self.oracle.write(self.written[index % len(self.written)], t)

    def _ledger_retract(
        self, ns: str, subject: str, relation: str, obj: Any, at: int | None
    ) -> Any:
        result = self.ledger.retract(
            subject, relation, obj, at=None if at is None else day(at), namespace=ns
        )
        self.ids.append(result.statement_id)
        return result

    def _oracle_retract(
        self, t: int, new_id: str, ns: str, subject: str, relation: str, obj: Any, at: int | None
    ) -> Decision:
        probe = Fact(
            id=new_id,
            text=f"retraction: {subject} {relation}" + ("" if obj is None else f" {obj}"),
            subject=subject,
            relation=relation,
            object="-" if obj is None else obj,
            namespace=ns,
        )
        return self.oracle.retract(probe, obj, t if at is None else to_instant(day(at)), t)

    def _known_key(self, index: int, with_object: bool) -> tuple[Any, ...] | None:
        keyed = [f for f in self.written if f.key is not None]
        if not keyed:
            return None
        fact = keyed[index % len(keyed)]
        return fact.namespace, fact.subject, fact.relation, fact.object if with_object else None

    def _ledger_retract_known(self, index: int, with_object: bool, at: int | None) -> Any:
        target = self._known_key(index, with_object)
        return None if target is None else self._ledger_retract(*target, at)

    def _oracle_retract_known(
        self, t: int, new_id: str, index: int, with_object: bool, at: int | None
    ) -> Any:
        target = self._known_key(index, with_object)
        return None if target is None else self._oracle_retract(t, new_id, *target, at)

    def _ledger_correct(self, index: int, changes: dict[str, Any]) -> Any:
        target = self._pick(index)
        if target is None:
            return None
        result = self.ledger.correct(target, **changes)
        self.ids.append(result.statement_id)
        return result

    def _oracle_correct(self, t: int, new_id: str, index: int, changes: dict[str, Any]) -> Any:
        target = self._pick(index)
        return None if target is None else self.oracle.correct(target, changes, t, new_id)

    def _ledger_retire(self, index: int) -> Any:
        target = self._pick(index)
        return None if target is None else self.ledger.retire(target)

    def _oracle_retire(self, t: int, _: str, index: int) -> Any:
        target = self._pick(index)
        return None if target is None else self.oracle.retire(target, t)

    def _ledger_unretire(self, index: int) -> Any:
        target = self._pick(index)
        return None if target is None else self.ledger.unretire(target)

    def _oracle_unretire(self, t: int, _: str, index: int) -> Any:
        target = self._pick(index)
        return None if target is None else self.oracle.unretire(target, t)

    # ------------------------------------------------------------------ checks
    def instants(self) -> list[int]:
        points = {to_instant(BASE) - 1}
        for r in self.oracle.records:
            points |= {r.vf - 1, r.vf, r.vf + 1, r.recorded}
            if r.vt is not None:
                points |= {r.vt - 1, r.vt}
        return sorted(points)

    def record_times(self) -> list[int]:
        times = {to_instant(START) - 1}
        for r in self.oracle.records:
            times |= {r.recorded - 1, r.recorded, r.recorded + 1}
            if r.retired != OPEN:
                times |= {r.retired - 1, r.retired}
        return sorted(times)

    def as_of(self, ns: str, valid_at: int, known: int | None) -> set[tuple[Any, ...]]:
        facts = self.ledger.as_of(
            valid_at=from_instant(valid_at),
            known_at=None if known is None else from_instant(known),
            namespace=ns,
        )
        found = set()
        for f in facts:
            key = f.key
            assert f.valid_from is not None
            end = OPEN if f.valid_to is None else to_instant(f.valid_to)
            found.add(
                (
                    f.id,
                    key and key.subject,
                    key and key.relation,
                    f.object_key,
                    to_instant(f.valid_from),
                    end,
                )
            )
        assert len(found) == len(facts), "as_of returned a version twice"
        return found

    def check_current(self) -> None:
        for ns in NAMESPACES:
            for valid_at in self.instants()[:: max(1, len(self.instants()) // 6)]:
                assert self.as_of(ns, valid_at, None) == self.oracle.as_of(ns, valid_at, OPEN - 1)

    def snapshot(self) -> None:
        """Answers as known now; later operations at this same instant replace them."""
        known = to_instant(self.clock.now())
        self.snapshots = {k: v for k, v in self.snapshots.items() if k[2] != known}
        for ns in NAMESPACES:
            for valid_at in self.instants()[::3]:
                self.snapshots[(ns, valid_at, known)] = self.as_of(ns, valid_at, known)

    def check_everything(self) -> None:
        for (ns, valid_at, known), answer in self.snapshots.items():
            assert self.as_of(ns, valid_at, known) == answer, "a past answer changed"
        for known in self.record_times():
            for ns in NAMESPACES:
                for valid_at in self.instants()[::2]:
                    assert self.as_of(ns, valid_at, known) == self.oracle.as_of(ns, valid_at, known)
                for subject, relation in KEYS:
                    self.check_history(ns, subject, relation, known)
            self.check_visible_rows(known)
        self.check_visible_rows(None)
        self.check_one_value_at_a_time()

    def check_visible_rows(self, known: int | None) -> None:
        """``visible_rows`` (no decoding) agrees with the decoded records' own ``visible``."""
        records = [v.record for v in self.ledger.versions(row_ids=self.all_row_ids())]
        asked = [r.row_id for r in records] + [10**9]  # and a row id that does not exist
        known_at = None if known is None else from_instant(known)
        for ns in NAMESPACES:
            for valid_at in [None, *self.instants()[::2]]:
                shown = self.ledger.visible_rows(
                    asked,
                    namespace=ns,
                    valid_at=None if valid_at is None else from_instant(valid_at),
                    known_at=known_at,
                )
                expected = {
                    r.row_id for r in records if r.namespace == ns and r.visible(valid_at, known)
                }
                assert shown == expected
                self.check_listing(ns, valid_at, known_at, sorted(expected))

    def check_listing(
        self, ns: str, valid_at: int | None, known_at: datetime | None, expected: list[int]
    ) -> None:
        """``list_visible_rows`` lists what ``visible_rows`` keeps, by row id, or says None
        when there are more than its limit."""
        for limit in {0, len(expected) - 1, len(expected), len(expected) + 5} - {-1}:
            listed = self.ledger.list_visible_rows(
                namespace=ns,
                valid_at=None if valid_at is None else from_instant(valid_at),
                known_at=known_at,
                limit=limit,
            )
            assert listed == (expected if len(expected) <= limit else None)

    def all_row_ids(self) -> list[int]:
        return [version.row_id for version in self.ledger.export()[1]]

    def check_history(self, ns: str, subject: str, relation: str, known: int) -> None:
        facts = self.ledger.history(subject, relation, namespace=ns, known_at=from_instant(known))
        believed = {
            (
                f.id,
                f.object_key,
                to_instant(f.valid_from),  # type: ignore[arg-type]
                OPEN if f.valid_to is None else to_instant(f.valid_to),
                f.end_reason and f.end_reason.kind,
                f.end_reason and f.end_reason.by,
            )
            for f in facts
            if f.retired_at is None
        }
        assert believed == self.oracle.history(ns, subject, relation, known)
        retired = {f.id for f in facts if f.retired_at is not None}
        named = self.oracle.ever_named(ns, subject, relation, known)
        assert retired == named - {b[0] for b in believed}
        for f in facts:
            if f.retired_at is not None:
                assert f.retire_reason is not None
                assert f.retire_reason.kind is not ReasonKind.REVISED

    def check_change_feed(self) -> None:
        """A mirror fed only by ``changes()`` (in small pages) equals every version row."""
        while True:
            page = self.ledger.changes(self.cursor, limit=2)
            for record in page.records:
                self.mirror[record.row_id] = record
            assert page.cursor.after_row >= self.cursor.after_row
            assert page.cursor.retired_from >= self.cursor.retired_from
            self.cursor = page.cursor
            if not page.more:
                break
        _, versions = self.ledger.export()
        assert {
            v.row_id: (v.fact_id, v.valid_from, v.valid_to, v.recorded_at, v.retired_at)
            for v in versions
        } == {
            r.row_id: (r.fact_id, r.valid_from, r.valid_to, r.recorded_at, r.retired_at)
            for r in self.mirror.values()
        }, "the change feed missed a change"

    def check_nothing_deleted(self) -> None:
        statements, versions = self.ledger.export()
        old_statements, old_versions = self.rows
        assert len(statements) >= len(old_statements)
        assert len(versions) >= len(old_versions)
        for old, new in ((old_statements, statements), (old_versions, versions)):
            by_id = {_row_id(r): r for r in new}
            for row in old:
                now = by_id[_row_id(row)]
                if row.retired_at != OPEN:
                    assert now == row, "a retired record changed"
                else:
                    assert _unretired(now) == row, "a record changed beyond its retirement"
        self.rows = (statements, versions)

    def check_one_value_at_a_time(self) -> None:
        _, versions = self.ledger.export()
        by_stream: dict[tuple[Any, ...], list[VersionRow]] = {}
        for v in versions:
            by_stream.setdefault((v.key_id, v.stream), []).append(v)
        for known in self.record_times():
            for rows in by_stream.values():
                believed = sorted(
                    (r for r in rows if r.recorded_at <= known < r.retired_at),
                    key=lambda r: r.valid_from,
                )
                for a, b in itertools.pairwise(believed):
                    assert a.valid_to <= b.valid_from, "overlapping versions of one stream"


def _row_id(row: StatementRow | VersionRow) -> int:
    return row.seq if isinstance(row, StatementRow) else row.row_id


def _unretired(row: Any) -> Any:
    return replace(row, retired_at=OPEN, retire_reason=None)


def _attempt(action: Any) -> tuple[Any, Any]:
    """(decision or error class, raw result)."""
    try:
        result = action()
    except TemporalRagError as exc:
        return type(exc), None
    decision = getattr(result, "decision", result)
    return decision, result
