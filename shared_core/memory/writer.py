"""The write path of TemporalMemory: each item (text or Fact) becomes the statements to store
(a :class:`Plan`), and a :class:`Writer` has its judge judge the batch (once), writes what the
judgement says in one ledger transaction and has the index mirror it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from shared_core.clock import Clock, to_instant
from shared_core.errors import CardinalityConflictError, InvalidInputError
from shared_core.extractors.base import (
    VALID_FROM_SOURCE,
    ExtractedFact,
    Extraction,
    Extractor,
    ValidFromSource,
)
from shared_core.facts import Fact
from shared_core.index.base import Vector, VectorIndex
from shared_core.judging.base import (
    AsyncJudge,
    Judge,
    Judgement,
    WriteBatch,
    check_judgement,
    flattened,
)
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import WriteResult
from shared_core.memory.extraction_report import ExtractionReport, ExtractionTally
from shared_core.memory.hits import Added
from shared_core.memory.index_mirror import IndexMirror
from shared_core.memory.reader import Reader

Item = str | Fact
"""What :meth:`TemporalMemory.add_many` takes: a text (run through the extractor) or a Fact."""


@dataclass(frozen=True, slots=True)
class Plan:
    """One item's text, the statements to write for it, who wrote it (``speaker``), and what
    the extractor made of it (``None`` for a Fact given as is)."""

    text: str
    statements: tuple[Fact, ...]
    extraction: Extraction | None = None
    speaker: str | None = None

    @property
    def problem(self) -> str | None:
        """Why the extractor's output was rejected, if it was."""
        return self.extraction.problem if self.extraction is not None else None


@dataclass(frozen=True, slots=True)
class _Write:
    """One batch on its way to the ledger: the plans, their statements in order (and who
    wrote each), the vectors of their texts, and the write's ledger options."""

    plans: tuple[Plan, ...]
    statements: tuple[Fact, ...]
    speakers: tuple[str | None, ...]
    vectors: Mapping[str, Vector]
    replacing: tuple[str, ...]
    merge_prose: bool
    defer_index: bool = False

    @property
    def has_prose(self) -> bool:
        return any(fact.key is None for fact in self.statements)


class Writer:
    """A memory's write path, sync and async, under the memory's lock.

    Each item is planned (a Fact as given, a text through the extractor), the planned
    statements are embedded, and a batch with prose goes to the memory's judge (a
    :class:`~shared_core.judging.Judge`, called once per batch against everything the ledger
    and the index hold). What the judgement says (its statements, supersessions and the
    cardinalities of new relations) goes into the ledger, the statements in one transaction,
    and the written facts join the reader's recency buffer before the index mirrors the write.
    """

    def __init__(
        self,
        ledger: LedgerStore,
        index: VectorIndex,
        *,
        mirror: IndexMirror,
        reader: Reader,
        lock: threading.RLock,
        extractor: Extractor,
        judge: Judge | None,
        clock: Clock,
        speaker_field: str | None = None,
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._mirror = mirror
        self._reader = reader
        self._lock = lock
        self._extractor = extractor
        self._judge = judge
        self._clock = clock
        self._speaker_field = speaker_field
        self._tally = ExtractionTally()

    @property
    def extraction_report(self) -> ExtractionReport:
        """The extraction problems counted so far, per kind."""
        return self._tally.report

    @property
    def extracts_async(self) -> bool:
        """Whether the extractor has an async form (``aextract``, an LLM extractor's)."""
        return hasattr(self._extractor, "aextract")

    @property
    def writes_async(self) -> bool:
        """Whether a write has an async form to await: the extractor's or the judge's."""
        return self.extracts_async or isinstance(self._judge, AsyncJudge)

    def add_many(
        self,
        items: Iterable[Item],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        namespace: str,
        valid_from: datetime | None,
        valid_to: datetime | None,
        replacing: Sequence[str],
        merge_prose: bool,
        speaker: str | None = None,
        vectors: Mapping[str, Vector] | None = None,
        defer_index: bool = False,
    ) -> list[Added]:
        """Plan, embed (but the texts ``vectors`` has), judge and write ``items``; one
        :class:`Added` per item (see :meth:`TemporalMemory.add_many`)."""
        plans = self._plan(
            list(items),
            metadatas,
            namespace=namespace,
            valid=(valid_from, valid_to),
            speaker=speaker,
        )
        write = self._prepared(plans, replacing, merge_prose, vectors)
        return self._write(replace(write, defer_index=defer_index))

    async def aadd_many(
        self,
        items: Iterable[Item],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        namespace: str,
        valid_from: datetime | None,
        valid_to: datetime | None,
        replacing: Sequence[str],
        merge_prose: bool,
        speaker: str | None = None,
        vectors: Mapping[str, Vector] | None = None,
        defer_index: bool = False,
    ) -> list[Added]:
        """:meth:`add_many` with the async forms awaited on the running loop: the extractor's
        ``aextract`` (one text after another) and an :class:`AsyncJudge`'s ``ajudge``;
        embedding, the index catch-up and the ledger write run in worker threads. Without an
        async judge, judging and writing run as in :meth:`add_many`, in a worker thread."""
        items = list(items)
        valid = (valid_from, valid_to)
        if self.extracts_async:
            plans = await self._aplan(
                items, metadatas, namespace=namespace, valid=valid, speaker=speaker
            )
        else:
            plans = await asyncio.to_thread(
                self._plan, items, metadatas, namespace=namespace, valid=valid, speaker=speaker
            )
        write = await asyncio.to_thread(self._prepared, plans, replacing, merge_prose, vectors)
        write = replace(write, defer_index=defer_index)
        judge = self._judge
        if not isinstance(judge, AsyncJudge) or not write.has_prose:
            return await asyncio.to_thread(self._write, write)
        batch = await asyncio.to_thread(self._batch, write)
        # The lock is a thread's: it cannot be held across an await. The judgement is made
        # on what the ledger held when the batch was read; the key rule still decides.
        judgement = check_judgement(batch, await judge.ajudge(batch), judge)
        return await asyncio.to_thread(self._commit, write, judgement)

    def apply(
        self, operation: Callable[[], WriteResult], *, defer_index: bool = False
    ) -> WriteResult:
        """Run one ledger write (a retraction, a correction, ...) and mirror it (``defer_index``:
        at the next read, see :meth:`IndexMirror.defer`)."""
        with self._lock:
            result = operation()
            self._mirrored({}, [result], defer_index=defer_index)
            return result

    def apply_all(self, operation: Callable[[], list[WriteResult]]) -> list[WriteResult]:
        """Run a ledger write of several results (one transaction) and mirror it."""
        with self._lock:
            results = operation()
            self._mirrored({}, results)
            return results

    def _plan(
        self,
        items: list[Item],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        namespace: str,
        valid: tuple[datetime | None, datetime | None],
        speaker: str | None,
    ) -> list[Plan]:
        """One :meth:`_plan_item` per item, after :func:`_check_metadatas`."""
        _check_metadatas(items, metadatas)
        _check_speaker(speaker)
        return [
            self._plan_item(
                item,
                self._with_speaker(metadatas[i] if metadatas else {}, item, i, speaker),
                position=i,
                namespace=namespace,
                valid=valid,
            )
            for i, item in enumerate(items)
        ]

    async def _aplan(
        self,
        items: list[Item],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        namespace: str,
        valid: tuple[datetime | None, datetime | None],
        speaker: str | None,
    ) -> list[Plan]:
        """:meth:`_plan` with :meth:`_aplan_item`: one text after another."""
        _check_metadatas(items, metadatas)
        _check_speaker(speaker)
        return [
            await self._aplan_item(
                item,
                self._with_speaker(metadatas[i] if metadatas else {}, item, i, speaker),
                position=i,
                namespace=namespace,
                valid=valid,
            )
            for i, item in enumerate(items)
        ]

    def _with_speaker(
        self, metadata: Mapping[str, Any], item: Item, position: int, speaker: str | None
    ) -> tuple[Mapping[str, Any], str | None]:
        """The item's metadata (with ``speaker`` under the speaker field) and its speaker:
        ``speaker``, else what its metadata (a Fact's own) names under the speaker field."""
        field = self._speaker_field
        own = item.metadata if isinstance(item, Fact) else metadata
        named = _named_speaker(own, field, position)
        if speaker is None:
            return metadata, named
        if named is not None and named != speaker:
            raise InvalidInputError(
                "speaker",
                f"is {speaker!r} but items[{position}]'s metadata[{field!r}] is {named!r}",
                f"pass speaker={named!r}, or drop {field!r} from the metadata",
            )
        return ({**metadata, field: speaker} if field is not None else metadata), speaker

    def _plan_item(
        self,
        item: Item,
        metadata: tuple[Mapping[str, Any], str | None],
        *,
        position: int,
        namespace: str,
        valid: tuple[datetime | None, datetime | None],
    ) -> Plan:
        """A Fact is written as given; a text goes through the extractor (keyed facts, or
        prose). ``valid`` (valid_from, valid_to) fills the valid time a statement does not
        carry itself; ``metadata`` is the item's metadata and its speaker.

        A missing valid_from stays None: the ledger then uses the record time, and plain prose
        repeated later is recognised as the same statement (not stored twice).
        """
        fields, speaker = metadata
        if isinstance(item, Fact):
            return self._spoken(_fact_plan(item, *valid), speaker)
        _check_text(item, position)
        try:
            extraction = self._extractor.extract(item, dict(fields))
        except InvalidInputError as exc:
            raise exc.at(f"items[{position}]") from exc.__cause__
        statements = _statements(item, extraction, fields, namespace, valid)
        return self._spoken(Plan(item, statements, extraction), speaker)

    async def _aplan_item(
        self,
        item: Item,
        metadata: tuple[Mapping[str, Any], str | None],
        *,
        position: int,
        namespace: str,
        valid: tuple[datetime | None, datetime | None],
    ) -> Plan:
        """:meth:`_plan_item` with the extractor's async form, ``aextract``, awaited (an
        extractor that calls an LLM has one; see :mod:`shared_core.extractors.base`)."""
        fields, speaker = metadata
        if isinstance(item, Fact):
            return self._spoken(_fact_plan(item, *valid), speaker)
        _check_text(item, position)
        try:
            extraction: Extraction = await self._extractor.aextract(item, dict(fields))  # type: ignore[attr-defined]
        except InvalidInputError as exc:
            raise exc.at(f"items[{position}]") from exc.__cause__
        statements = _statements(item, extraction, fields, namespace, valid)
        return self._spoken(Plan(item, statements, extraction), speaker)

    def _spoken(self, plan: Plan, speaker: str | None) -> Plan:
        """``plan`` of ``speaker``, each statement naming them under the speaker field (an
        extractor may not carry the item's metadata over)."""
        field = self._speaker_field
        if speaker is None:
            return plan
        statements = plan.statements
        if field is not None:
            statements = tuple(
                f
                if f.metadata.get(field) == speaker
                else replace(f, metadata={**f.metadata, field: speaker})
                for f in statements
            )
        return replace(plan, statements=statements, speaker=speaker)

    def _prepared(
        self,
        plans: Sequence[Plan],
        replacing: Sequence[str],
        merge_prose: bool,
        given: Mapping[str, Vector] | None = None,
    ) -> _Write:
        """The batch of ``plans``, its extraction problems counted and its texts embedded (but
        those ``given`` has a vector for)."""
        for plan in plans:
            if plan.extraction is not None:
                self._tally.count(plan.text, plan.extraction)
        statements = tuple(fact for plan in plans for fact in plan.statements)
        speakers = tuple(plan.speaker for plan in plans for _ in plan.statements)
        texts = list(dict.fromkeys(fact.text for fact in statements))
        known = given or {}
        vectors = {text: known[text] for text in texts if text in known}
        missing = [text for text in texts if text not in vectors]
        if missing:
            vectors.update(zip(missing, self._mirror.embed(missing), strict=True))
        return _Write(tuple(plans), statements, speakers, vectors, tuple(replacing), merge_prose)

    def _write(self, write: _Write) -> list[Added]:
        """Judge (a batch with prose, when the memory has a judge) and commit ``write``."""
        with self._lock:
            judge = self._judge
            if judge is None or not write.has_prose:
                return self._commit(write, _as_planned(write))
            batch = self._batch(write)
            return self._commit(write, check_judgement(batch, judge.judge(batch), judge))

    def _batch(self, write: _Write) -> WriteBatch:
        """What the judge sees of ``write``, the index caught up first (judged against
        everything the ledger holds)."""
        with self._lock:
            self._mirror.catch_up()
            return WriteBatch(
                statements=write.statements,
                speakers=write.speakers,
                vectors=write.vectors,
                ledger=self._ledger,
                index=self._index,
                now=to_instant(self._clock.now(), "clock.now()"),
                embed=self._embed,
                speaker_field=self._speaker_field,
            )

    def _embed(self, texts: Sequence[str]) -> list[Vector]:
        """The memory's vectors of ``texts`` (what a judge's ``WriteBatch.embed`` calls)."""
        vectors: list[Vector] = list(self._mirror.embed(list(texts)))
        return vectors

    def _commit(self, write: _Write, judgement: Judgement) -> list[Added]:
        """Write what ``judgement`` says: its cardinalities declared, its extractions counted,
        its new texts embedded, its statements and supersessions in one transaction; one
        :class:`Added` per plan."""
        facts = flattened(judgement)
        vectors = dict(write.vectors)
        for position, extraction in judgement.extractions.items():
            self._tally.count(write.statements[position].text, extraction)
        missing = list(dict.fromkeys(f.text for f in facts if f.text not in vectors))
        if missing:
            vectors.update(zip(missing, self._mirror.embed(missing), strict=True))
        options: dict[str, Any] = {}
        if judgement.supersessions:
            options["supersessions"] = judgement.supersessions
        if write.replacing:
            options["replacing"] = write.replacing
        if not write.merge_prose:
            options["merge_prose"] = False
        with self._lock:
            self._declare(judgement)
            results = self._ledger.write_many(facts, **options)
            self._mirrored(vectors, results, defer_index=write.defer_index)
        return _added(write.plans, judgement.statements, results, judgement.extractions)

    def _declare(self, judgement: Judgement) -> None:
        """Declare the cardinalities a judge proposed for relations nobody declared and that
        hold no facts (a declaration always wins; the ledger refuses to change a relation in
        use)."""
        for relation, cardinality in judgement.cardinalities:
            if self._ledger.declared_cardinality(relation) is not None:
                continue
            try:
                self._ledger.declare(relation, cardinality)
            except CardinalityConflictError:
                continue  # the relation holds facts: it keeps the cardinality they were kept by

    def _mirrored(
        self,
        vectors: Mapping[str, Vector],
        results: Sequence[WriteResult],
        *,
        defer_index: bool = False,
    ) -> None:
        """After a ledger write: its facts join the recency buffer, then the index catches up
        (``vectors`` maps the texts just embedded to their vectors), or, ``defer_index``, will
        at the next read, write or close."""
        self._reader.remember(results, vectors)
        if defer_index:
            self._mirror.defer(vectors, results)
        else:
            self._mirror.catch_up(vectors)


def _check_metadatas(items: Sequence[object], metadatas: Sequence[object] | None) -> None:
    """InvalidInputError unless there is one metadata mapping per item (or none at all)."""
    if metadatas is not None and len(metadatas) != len(items):
        raise InvalidInputError(
            "metadatas",
            f"has {len(metadatas)} entries for {len(items)} items",
            "pass one metadata mapping per item, or none",
        )


def _fact_plan(fact: Fact, valid_from: datetime | None, valid_to: datetime | None) -> Plan:
    """A Fact given as an item, with the batch's valid time where it carries none."""
    defaults: dict[str, Any] = {
        name: value
        for name, value in (("valid_from", valid_from), ("valid_to", valid_to))
        if value is not None and getattr(fact, name) is None
    }
    return Plan(fact.text, (replace(fact, **defaults) if defaults else fact,))


def _check_text(item: object, position: int) -> None:
    if not isinstance(item, str) or not item.strip():
        raise InvalidInputError(
            f"items[{position}]", "is empty or not a string", "pass text to remember, or a Fact"
        )


def _statements(
    text: str,
    extraction: Extraction,
    metadata: Mapping[str, Any],
    namespace: str,
    valid: tuple[datetime | None, datetime | None],
) -> tuple[Fact, ...]:
    valid_from, valid_to = valid
    if not extraction.facts:
        prose = Fact(
            text=text,
            namespace=namespace,
            valid_from=extraction.valid_from or valid_from,
            valid_to=extraction.valid_to or valid_to,
            metadata=metadata if extraction.metadata is None else extraction.metadata,
        )
        return (prose,)
    return tuple(
        Fact(
            text=found.text,
            subject=found.subject,
            relation=found.relation,
            object=found.object,
            valid_from=found.valid_from or valid_from,
            valid_to=found.valid_to or valid_to,
            namespace=namespace,
            metadata=_with_valid_from_source(found, valid_from),
        )
        for found in extraction.facts
    )


def _with_valid_from_source(found: ExtractedFact, valid_from: datetime | None) -> Mapping[str, Any]:
    """An extracted statement's metadata, with where its valid_from comes from if the extractor
    asks for it (see :class:`ExtractedFact`)."""
    if found.valid_from_source is None:
        return found.metadata
    source: ValidFromSource = found.valid_from_source
    if found.valid_from is None:
        source = "caller" if valid_from is not None else "record_time"
    return {**found.metadata, VALID_FROM_SOURCE: source}


def _as_planned(write: _Write) -> Judgement:
    """The judgement of a write nobody judges: every statement as planned."""
    return Judgement(statements=tuple((fact,) for fact in write.statements))


def _added(
    plans: Sequence[Plan],
    groups: Sequence[Sequence[Fact]],
    results: Sequence[WriteResult],
    judged: Mapping[int, Extraction],
) -> list[Added]:
    """One :class:`Added` per plan, from the results of writing every group of statements in
    order (``groups``: per planned statement, what was written in its place); a plan's problem
    is its extractor's, else the first the judge reported for its statements (``judged``: the
    judgement's extractions by statement position)."""
    out, statement, position = [], 0, 0
    for plan in plans:
        count = sum(len(groups[statement + i]) for i in range(len(plan.statements)))
        problems = [
            extraction.problem
            for i in range(statement, statement + len(plan.statements))
            if (extraction := judged.get(i)) is not None and extraction.problem is not None
        ]
        statement += len(plan.statements)
        writes = tuple(results[position : position + count])
        position += count
        problem = plan.problem or (problems[0] if problems else None)
        out.append(Added(text=plan.text, writes=writes, problem=problem))
    return out


def _check_speaker(speaker: object) -> None:
    if speaker is not None and (not isinstance(speaker, str) or not speaker.strip()):
        raise InvalidInputError(
            "speaker", f"is {speaker!r}", "pass who wrote the texts as a non-empty str, or None"
        )


def _named_speaker(metadata: Mapping[str, Any], field: str | None, position: int) -> str | None:
    """The speaker ``metadata`` names under ``field`` (an int id as text), or None."""
    if field is None:
        return None
    value = metadata.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise InvalidInputError(
            f"metadatas[{position}][{field!r}]",
            f"is {value!r}",
            "name the speaker as a non-empty str (or int), or set MemoryConfig(speaker_field=None)",
        )
    return str(value)
