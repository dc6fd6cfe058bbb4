"""The write path of TemporalMemory: each item (text or Fact) becomes the statements to store
(a :class:`Plan`), and a :class:`Writer` judges new prose, writes the statements to the ledger
in one transaction and has the index mirror them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from shared_core.clock import Clock, to_instant
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import (
    VALID_FROM_SOURCE,
    ExtractedFact,
    Extraction,
    Extractor,
    ValidFromSource,
)
from shared_core.facts import Fact
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import WriteResult
from shared_core.memory.claims import ClaimJudge, place_claims
from shared_core.memory.extraction_report import ExtractionReport, ExtractionTally
from shared_core.memory.hits import Added
from shared_core.memory.index_mirror import IndexMirror
from shared_core.memory.prose_judge import ProseJudge, judge_batch
from shared_core.memory.reader import Reader

Item = str | Fact
"""What :meth:`TemporalMemory.add_many` takes: a text (run through the extractor) or a Fact."""


@dataclass(frozen=True, slots=True)
class Plan:
    """One item's text, the statements to write for it, and what the extractor made of it
    (``None`` for a Fact given as is)."""

    text: str
    statements: tuple[Fact, ...]
    extraction: Extraction | None = None

    @property
    def problem(self) -> str | None:
        """Why the extractor's output was rejected, if it was."""
        return self.extraction.problem if self.extraction is not None else None


class Writer:
    """A memory's write path, sync and async, under the memory's lock.

    Each item is planned (a Fact as given, a text through the extractor), the planned
    statements are embedded, new prose is judged (a :class:`ClaimJudge` makes claim statements
    of it, a :class:`ProseJudge` finds the prose it supersedes) against everything the ledger
    holds, all of it goes into one ledger transaction, and the written facts join the reader's
    recency buffer before the index mirrors the write.
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
        judge: ClaimJudge | ProseJudge | None,
        clock: Clock,
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._mirror = mirror
        self._reader = reader
        self._lock = lock
        self._extractor = extractor
        self._judge = judge
        self._clock = clock
        self._tally = ExtractionTally()

    @property
    def extraction_report(self) -> ExtractionReport:
        """The extraction problems counted so far, per kind."""
        return self._tally.report

    @property
    def extracts_async(self) -> bool:
        """Whether the extractor has an async form (``aextract``, an LLM extractor's)."""
        return hasattr(self._extractor, "aextract")

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
    ) -> list[Added]:
        """Plan, embed, judge and write ``items``; one :class:`Added` per item (see
        :meth:`TemporalMemory.add_many`)."""
        plans = self._plan(
            list(items), metadatas, namespace=namespace, valid_from=valid_from, valid_to=valid_to
        )
        return self._write(plans, replacing=replacing, merge_prose=merge_prose)

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
    ) -> list[Added]:
        """:meth:`add_many` for an extractor with an async form (:attr:`extracts_async`):
        ``aextract`` is awaited on the running loop, one text after another; embedding and
        writing run in a worker thread."""
        plans = await self._aplan(
            list(items), metadatas, namespace=namespace, valid_from=valid_from, valid_to=valid_to
        )
        return await asyncio.to_thread(
            self._write, plans, replacing=replacing, merge_prose=merge_prose
        )

    def apply(self, operation: Callable[[], WriteResult]) -> WriteResult:
        """Run one ledger write (a retraction, a correction, ...) and mirror it."""
        with self._lock:
            result = operation()
            self._mirrored({}, [result])
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
        valid_from: datetime | None,
        valid_to: datetime | None,
    ) -> list[Plan]:
        """One :meth:`_plan_item` per item, after :func:`_check_metadatas`."""
        _check_metadatas(items, metadatas)
        return [
            self._plan_item(
                item,
                metadatas[i] if metadatas else {},
                position=i,
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
            )
            for i, item in enumerate(items)
        ]

    async def _aplan(
        self,
        items: list[Item],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        namespace: str,
        valid_from: datetime | None,
        valid_to: datetime | None,
    ) -> list[Plan]:
        """:meth:`_plan` with :meth:`_aplan_item`: one text after another."""
        _check_metadatas(items, metadatas)
        return [
            await self._aplan_item(
                item,
                metadatas[i] if metadatas else {},
                position=i,
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
            )
            for i, item in enumerate(items)
        ]

    def _plan_item(
        self,
        item: Item,
        metadata: Mapping[str, Any],
        *,
        position: int,
        namespace: str,
        valid_from: datetime | None,
        valid_to: datetime | None,
    ) -> Plan:
        """A Fact is written as given; a text goes through the extractor (keyed facts, or
        prose). ``valid_from`` / ``valid_to`` fill the valid time a statement does not carry
        itself.

        A missing valid_from stays None: the ledger then uses the record time, and plain prose
        repeated later is recognised as the same statement (not stored twice).
        """
        if isinstance(item, Fact):
            return _fact_plan(item, valid_from, valid_to)
        _check_text(item, position)
        try:
            extraction = self._extractor.extract(item, dict(metadata))
        except InvalidInputError as exc:
            raise exc.at(f"items[{position}]") from exc.__cause__
        statements = _statements(item, extraction, metadata, namespace, (valid_from, valid_to))
        return Plan(item, statements, extraction)

    async def _aplan_item(
        self,
        item: Item,
        metadata: Mapping[str, Any],
        *,
        position: int,
        namespace: str,
        valid_from: datetime | None,
        valid_to: datetime | None,
    ) -> Plan:
        """:meth:`_plan_item` with the extractor's async form, ``aextract``, awaited (an
        extractor that calls an LLM has one; see :mod:`shared_core.extractors.base`)."""
        if isinstance(item, Fact):
            return _fact_plan(item, valid_from, valid_to)
        _check_text(item, position)
        try:
            extraction: Extraction = await self._extractor.aextract(item, dict(metadata))  # type: ignore[attr-defined]
        except InvalidInputError as exc:
            raise exc.at(f"items[{position}]") from exc.__cause__
        statements = _statements(item, extraction, metadata, namespace, (valid_from, valid_to))
        return Plan(item, statements, extraction)

    def _write(
        self, plans: Sequence[Plan], *, replacing: Sequence[str], merge_prose: bool
    ) -> list[Added]:
        """Embed, judge and write what was planned; one :class:`Added` per plan."""
        for plan in plans:
            if plan.extraction is not None:
                self._tally.count(plan.text, plan.extraction)
        facts = [fact for plan in plans for fact in plan.statements]
        texts = list(dict.fromkeys(fact.text for fact in facts))
        vectors = dict(zip(texts, self._mirror.embed(texts), strict=True))
        with self._lock:
            facts = self._claims(facts, vectors)
            edges = self._supersessions(facts, vectors)
            options: dict[str, Any] = {"supersessions": edges} if edges else {}
            if replacing:
                options["replacing"] = replacing
            if not merge_prose:
                options["merge_prose"] = False
            results = self._ledger.write_many(facts, **options)
            self._mirrored(vectors, results)
        return _added(plans, results)

    def _mirrored(self, vectors: Mapping[str, Vector], results: Sequence[WriteResult]) -> None:
        """After a ledger write: its facts join the recency buffer, then the index catches up
        (``vectors`` maps the texts just embedded to their vectors)."""
        self._reader.remember(results, vectors)
        self._mirror.catch_up(vectors)

    def _claims(self, facts: list[Fact], vectors: Mapping[str, Vector]) -> list[Fact]:
        """``facts`` with the prose a ClaimJudge places made claim statements."""
        judge = self._judge
        if not isinstance(judge, ClaimJudge) or all(f.key is not None for f in facts):
            return facts
        self._mirror.catch_up()
        now = to_instant(self._clock.now(), "clock.now()")
        return place_claims(judge, facts, vectors, ledger=self._ledger, index=self._index, now=now)

    def _supersessions(
        self, facts: Sequence[Fact], vectors: Mapping[str, Vector]
    ) -> tuple[ProseSupersession, ...]:
        """The prose supersessions to write with ``facts`` (none without a pairwise judge or
        prose)."""
        judge = self._judge
        if not isinstance(judge, ProseJudge) or all(f.key is not None for f in facts):
            return ()
        self._mirror.catch_up()  # judge against everything the ledger holds
        now = to_instant(self._clock.now(), "clock.now()")
        return judge_batch(judge, facts, vectors, index=self._index, ledger=self._ledger, now=now)


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


def _added(plans: Sequence[Plan], results: Sequence[WriteResult]) -> list[Added]:
    """One :class:`Added` per plan, from the results of writing all plans' statements in order."""
    out, position = [], 0
    for plan in plans:
        writes = tuple(results[position : position + len(plan.statements)])
        position += len(plan.statements)
        out.append(Added(text=plan.text, writes=writes, problem=plan.problem))
    return out
