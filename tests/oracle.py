"""A brute-force reference for the ledger (docs/design.md, "Bi-temporal semantics").

It keeps the write log as a flat list of records and answers every question by replaying it:
the statements believed at ``known_at`` (recorded_at <= K < retired_at), the value of a stream at
an instant by evaluating the step function pointwise, versions as maximal runs of one value.
It shares no code with the ledger's rules; only the public value types are imported.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared_core.clock import OPEN, from_instant, to_instant
from shared_core.errors import (
    FactIdConflictError,
    FactNotFoundError,
    InvalidOperationError,
    NothingToRetractError,
    NotRetiredError,
)
from shared_core.facts import (
    Cardinality,
    Decision,
    Fact,
    ReasonKind,
    normalize_object,
    normalize_relation,
    normalize_subject,
    normalize_text,
)

StreamId = tuple[str, str | None, str | None, str]  # namespace, subject, relation, stream


@dataclass
class Record:
    seq: int
    fact_id: str
    namespace: str
    subject: str | None
    relation: str | None
    stream: str
    value: str | None  # None: a retraction
    text_key: str
    vf: int
    vt: int | None
    recorded: int
    fact: Fact  # what was said (for corrections and re-recording)
    retired: int = OPEN

    @property
    def sid(self) -> StreamId:
        return (self.namespace, self.subject, self.relation, self.stream)

    def believed_at(self, known: int) -> bool:
        return self.recorded <= known < self.retired


@dataclass
class Segment:
    start: int
    end: int
    value: str
    fact_id: str = ""
    end_kind: ReasonKind | None = None
    end_by: str | None = None


@dataclass
class Oracle:
    cardinality: dict[str, Cardinality]
    records: list[Record] = field(default_factory=list)
    seq: int = 0

    # ----------------------------------------------------------------- replay helpers
    def believed(self, sid: StreamId, known: int = OPEN - 1) -> list[Record]:
        return [r for r in self.records if r.sid == sid and r.believed_at(known)]

    @staticmethod
    def deciding(records: list[Record], instant: int) -> Record | None:
        """The statement whose value holds at ``instant`` (None: no value)."""
        started = [r for r in records if r.vf <= instant]
        if not started:
            return None
        last = max(started, key=lambda r: (r.vf, r.seq))
        if last.value is None or (last.vt is not None and instant >= last.vt):
            return None
        return last

    def segments(self, sid: StreamId, known: int = OPEN - 1) -> list[Segment]:
        records = self.believed(sid, known)
        points = sorted({r.vf for r in records} | {r.vt for r in records if r.vt is not None})
        segments: list[Segment] = []
        for index, point in enumerate(points):
            end = points[index + 1] if index + 1 < len(points) else OPEN
            holder = self.deciding(records, point)
            if holder is None:
                continue
            if segments and segments[-1].value == holder.value and segments[-1].end == point:
                segments[-1].end = end
            else:
                assert holder.value is not None
                segments.append(Segment(point, end, holder.value))
        for segment in segments:
            supporters = [
                r
                for r in records
                if r.value == segment.value and segment.start <= r.vf < segment.end
            ]
            segment.fact_id = min(supporters, key=lambda r: r.seq).fact_id
        for index in range(len(segments)):
            self._end_reason(records, segments, index)
        return segments

    def _end_reason(self, records: list[Record], segments: list[Segment], index: int) -> None:
        segment = segments[index]
        if segment.end == OPEN:
            return
        if self.deciding(records, segment.end) is not None:
            segment.end_kind, segment.end_by = ReasonKind.SUPERSEDED, segments[index + 1].fact_id
            return
        at_end = [r for r in records if r.vf == segment.end]
        if at_end and max(at_end, key=lambda r: r.seq).value is None:
            segment.end_kind = ReasonKind.RETRACTED
            segment.end_by = max(at_end, key=lambda r: r.seq).fact_id
            return
        before = max((r for r in records if r.vf < segment.end), key=lambda r: (r.vf, r.seq))
        segment.end_kind, segment.end_by = ReasonKind.EXPIRED, before.fact_id

    def streams(self, namespace: str) -> list[StreamId]:
        return sorted(
            {r.sid for r in self.records if r.namespace == namespace},
            key=lambda s: tuple("" if p is None else p for p in s),
        )

    # ----------------------------------------------------------------- answers
    def as_of(self, namespace: str, valid_at: int, known: int) -> set[tuple[Any, ...]]:
        found = set()
        for sid in self.streams(namespace):
            for segment in self.segments(sid, known):
                if segment.start <= valid_at < segment.end:
                    value = None if sid[1] is None else segment.value
                    found.add((segment.fact_id, sid[1], sid[2], value, segment.start, segment.end))
        return found

    def history(self, namespace: str, subject: str, relation: str, known: int) -> set[Any]:
        found = set()
        for sid in self.streams(namespace):
            if sid[1] == subject and sid[2] == relation:
                for s in self.segments(sid, known):
                    found.add((s.fact_id, s.value, s.start, s.end, s.end_kind, s.end_by))
        return found

    def ever_named(self, namespace: str, subject: str, relation: str, known: int) -> set[str]:
        """Fact ids that named a version of the key at any record time up to ``known``."""
        times = {r.recorded for r in self.records if r.recorded <= known}
        times |= {r.retired for r in self.records if r.retired <= known}
        names = set()
        for sid in self.streams(namespace):
            if sid[1] == subject and sid[2] == relation:
                for when in times:
                    names |= {s.fact_id for s in self.segments(sid, when)}
        return names

    # ----------------------------------------------------------------- operations
    def transaction(self, operation: Callable[[], Decision]) -> Decision:
        saved = copy.deepcopy((self.records, self.seq))
        try:
            return operation()
        except Exception:
            self.records, self.seq = saved
            raise

    def _record(self, fact: Fact, t: int, *, stream: str, value: str | None, vf: int) -> Record:
        self.seq += 1
        key = fact.key
        record = Record(
            self.seq,
            fact.id,
            fact.namespace,
            key.subject if key else None,
            key.relation if key else None,
            stream,
            value,
            normalize_text(fact.text),
            vf,
            None if fact.valid_to is None else to_instant(fact.valid_to),
            t,
            fact,
        )
        self.records.append(record)
        return record

    def write(self, fact: Fact, t: int) -> Decision:
        vf = t if fact.valid_from is None else to_instant(fact.valid_from)
        vt = None if fact.valid_to is None else to_instant(fact.valid_to)
        same_id = [r for r in self.records if r.fact_id == fact.id]
        if same_id:
            last = same_id[-1]
            same = (
                (last.fact.key, last.fact.object_key, last.text_key, last.vt, last.namespace)
                == (fact.key, fact.object_key, normalize_text(fact.text), vt, fact.namespace)
                and (fact.valid_from is None or last.vf == vf)
                and last.value is not None
            )
            if not same:
                raise FactIdConflictError(fact.id)
            return Decision.DUPLICATE
        key = fact.key
        if key is None:
            for r in self.records:
                if (
                    r.subject is None
                    and r.retired == OPEN
                    and r.namespace == fact.namespace
                    and r.text_key == normalize_text(fact.text)
                    and r.vt == vt
                    and (fact.valid_from is None or r.vf == vf)
                ):
                    return Decision.DUPLICATE
            self._record(fact, t, stream=fact.id, value=f"prose:{fact.id}", vf=vf)
            return Decision.NOVEL
        value = fact.object_key
        many = self.cardinality.get(key.relation, Cardinality.ONE) is Cardinality.MANY
        stream = value if many and value is not None else ""
        return self._assert(fact, t, stream, value, vf, vt)

    def _assert(
        self, fact: Fact, t: int, stream: str, value: str | None, vf: int, vt: int | None
    ) -> Decision:
        key = fact.key
        assert key is not None
        sid = (fact.namespace, key.subject, key.relation, stream)
        active = self.believed(sid)
        if value is None:
            if any(r.value is None and r.vf == vf for r in active):
                return Decision.DUPLICATE
        elif any(
            (r.vf, r.value, r.vt, r.text_key) == (vf, value, vt, normalize_text(fact.text))
            for r in active
        ):
            return Decision.DUPLICATE
        before = self.deciding(active, vf)
        if value is None and before is None:
            raise NothingToRetractError(sid)
        corrected = [r for r in active if r.vf == vf and r.value != value]
        for r in corrected:
            r.retired = t
        record = self._record(fact, t, stream=stream, value=value, vf=vf)
        record.vt = vt
        if value is None:
            return Decision.RETRACTED
        if corrected:
            return Decision.CORRECTED
        if before is not None and before.value == value:
            return Decision.REINFORCED
        if active and vf < min(r.vf for r in active):
            return Decision.BACKFILLED
        return Decision.SUPERSEDED if before is not None else Decision.NOVEL

    def retract(self, fact: Fact, wanted: object, at: int, t: int) -> Decision:
        """``fact`` carries the retraction's id, text, namespace and key."""
        key = fact.key
        assert key is not None
        ns = fact.namespace
        if not any(
            r.namespace == ns and (r.subject, r.relation) == (key.subject, key.relation)
            for r in self.records
        ):
            raise NothingToRetractError(key)
        many = self.cardinality.get(key.relation, Cardinality.ONE) is Cardinality.MANY
        if not many:
            holder = self.deciding(self.believed((ns, key.subject, key.relation, "")), at)
            if (
                holder is not None
                and wanted is not None
                and holder.value != normalize_object(wanted)
            ):  # type: ignore[arg-type]
                raise NothingToRetractError(key)
            targets = [""]
        elif wanted is not None:
            targets = [normalize_object(wanted)]  # type: ignore[arg-type]
        else:
            names = sorted(
                {
                    r.stream
                    for r in self.records
                    if r.retired == OPEN
                    and (r.namespace, r.subject, r.relation) == (ns, key.subject, key.relation)
                }
            )
            valid = [
                n
                for n in names
                if self.deciding(self.believed((ns, key.subject, key.relation, n)), at)
            ]
            repeated = [
                n
                for n in names
                if n not in valid
                and any(
                    r.value is None and r.vf == at
                    for r in self.believed((ns, key.subject, key.relation, n))
                )
            ]
            targets = valid or repeated[:1] or [""]
        decisions = [self._assert(fact, t, stream, None, at, None) for stream in targets]
        changed = any(d is not Decision.DUPLICATE for d in decisions)
        return Decision.RETRACTED if changed else Decision.DUPLICATE

    def known(self, fact_id: str) -> None:
        if not any(r.fact_id == fact_id for r in self.records):
            raise FactNotFoundError(fact_id)

    def retire(self, fact_id: str, t: int) -> Decision:
        self.known(fact_id)
        rows = [r for r in self.records if r.fact_id == fact_id and r.retired == OPEN]
        if not rows:
            raise InvalidOperationError(fact_id)
        for r in rows:
            r.retired = t
        return Decision.WITHDRAWN

    def correct(self, fact_id: str, changes: dict[str, Any], t: int, new_id: str) -> Decision:
        self.known(fact_id)
        rows = [r for r in self.records if r.fact_id == fact_id and r.retired == OPEN]
        if not rows or rows[0].value is None:
            raise InvalidOperationError(fact_id)
        original = rows[0]
        said = original.fact
        fields: dict[str, Any] = {
            "text": said.text,
            "subject": said.subject,
            "relation": said.relation,
            "object": said.object,
            "valid_from": from_instant(original.vf),
            "valid_to": said.valid_to,
            "namespace": said.namespace,
            "metadata": said.metadata,
        }
        fields.update(changes)
        replacement = Fact(id=new_id, **fields)
        original.retired = t
        self.write(replacement, t)
        return Decision.CORRECTED

    def unretire(self, fact_id: str, t: int) -> Decision:
        self.known(fact_id)
        rows = [r for r in self.records if r.fact_id == fact_id]
        believed = [r for r in rows if r.retired == OPEN]
        if not believed:
            latest = {r.sid: r for r in rows}
            last = rows[-1].recorded
            decisions = [self._rerecord(r, t) for r in latest.values() if r.recorded == last]
            changed = any(d is not Decision.DUPLICATE for d in decisions)
            return Decision.RESTORED if changed else Decision.DUPLICATE
        if all(r.value is None for r in believed):
            for r in believed:
                r.retired = t
            return Decision.RESTORED
        row = believed[0]
        segment = next(s for s in self.segments(row.sid) if s.start <= row.vf < s.end)
        if segment.end_kind is None:
            return Decision.DUPLICATE
        if segment.end_kind is ReasonKind.RETRACTED:
            for r in self.records:
                if r.fact_id == segment.end_by and r.retired == OPEN and r.stream == row.stream:
                    r.retired = t
            return Decision.RESTORED
        raise NotRetiredError(fact_id)

    def _rerecord(self, row: Record, t: int) -> Decision:
        if row.subject is None:
            self._record(row.fact, t, stream=row.stream, value=row.value, vf=row.vf)
            return Decision.NOVEL
        return self._assert(row.fact, t, row.stream, row.value, row.vf, row.vt)


def at_instant(value: datetime | None) -> int | None:
    return None if value is None else to_instant(value)


__all__ = ["Oracle", "Record", "Segment", "at_instant", "normalize_relation", "normalize_subject"]
