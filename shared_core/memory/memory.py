"""TemporalMemory: the ledger, a vector index and an embedder behind one object.

Writes go to the ledger first (the source of truth, where supersession happens), then the
index mirrors the ledger's change feed. Reads ask the index for the k nearest facts visible at
(valid_at, known_at), optionally union the recency buffer, and apply Phi_T.

The object holds the parts and the lock; the work is done by its collaborators, each with its
sync and async path: the write path (:class:`~shared_core.memory.writer.Writer`), the read path
(:class:`~shared_core.memory.reader.Reader`) and the index mirror
(:class:`~shared_core.memory.index_mirror.IndexMirror`). Reads the ledger answers alone
(``history``, ``as_of``, ...) go to the ledger directly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self, Unpack

from shared_core.clock import Clock, SystemClock, TimeInput, to_datetime
from shared_core.embedders.base import Embedder
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import MetadataExtractor
from shared_core.facts import DEFAULT_NAMESPACE, Cardinality, Fact, ObjectValue
from shared_core.filters import Filter, as_filter
from shared_core.index.base import VectorIndex
from shared_core.judging.base import Judge
from shared_core.judging.chain import JudgeChain
from shared_core.judging.claims import check_prose_judge, shipped_claim_judge
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.results import Explanation, WriteResult
from shared_core.memory.config import MemoryConfig, memory_config
from shared_core.memory.connection import open_index, open_ledger
from shared_core.memory.context import pack_context
from shared_core.memory.extraction_report import ExtractionReport
from shared_core.memory.folder import open_folder
from shared_core.memory.folder_lock import FolderLock
from shared_core.memory.hits import Added, Hit, ReconcileReport
from shared_core.memory.index_mirror import IndexMirror
from shared_core.memory.inputs import check_metadata, check_text, checked_items, checked_vectors
from shared_core.memory.options import CONTEXT_K, SearchChanges, SearchOptions
from shared_core.memory.reader import Reader
from shared_core.memory.selection import (
    Withdrawals,
    matching_statement_ids,
    select_facts,
    withdrawals,
)
from shared_core.memory.twins import async_twin
from shared_core.memory.writer import Item, Writer
from shared_core.recency import RecencyBuffer


class TemporalMemory:
    """Temporally valid memory for RAG and agents (see docs/design.md for the semantics).

    Use :meth:`open` for the embedded default (SQLite + Chroma + MiniLM in one folder),
    :meth:`connect` for servers (PostgreSQL, a Chroma server), or pass any ledger and index;
    a :class:`~shared_core.memory.config.MemoryConfig` gives the embedder, the extractor and
    the other options. Thread-safe; each method has an ``a*`` twin for async callers, which
    awaits an LLM's async form on the event loop and runs the blocking work in a worker thread.

    Args:
        ledger: the source of truth (facts, versions, supersession).
        index: the vector index mirroring the ledger's version rows.
        config: how the memory is built (:class:`~shared_core.memory.config.MemoryConfig`: the
            embedder, the index being bound to its name and dimension, the extractor, the
            clock, the query expander, the recency buffer's capacity, the write-time prose
            judge, whether to reconcile now); default ``MemoryConfig()``.

    Raises:
        EmbedderMismatchError: the index holds another embedder's vectors.
        InvalidInputError: a config that is not one, or a prose judge that reads another
            embedder's vectors.
        IndexSyncError: ``reconcile`` could not bring the index up to date.
    """

    def __init__(
        self, *, ledger: LedgerStore, index: VectorIndex, config: MemoryConfig | None = None
    ) -> None:
        """A memory over ``ledger`` and ``index``, built as ``config`` says (default
        ``MemoryConfig()``: the offline MiniLM, the metadata extractor, the system clock)."""
        config = memory_config(config)
        embedder = config.embedder if config.embedder is not None else MiniLMEmbedder()
        prose_judge = _judge(config, embedder)
        self.prose_judge: Judge | None = prose_judge
        self.speaker_field: str | None = config.speaker_field
        self.ledger = ledger
        self.index = index
        self.embedder = embedder
        self.extractor = config.extractor if config.extractor is not None else MetadataExtractor()
        self.clock: Clock = config.clock if config.clock is not None else SystemClock()
        self._lock = threading.RLock()
        self._folder_lock: FolderLock | None = None  # held while open() owns the folder
        buffer = RecencyBuffer(config.recency_capacity)
        self._mirror = IndexMirror(ledger, index, embedder)
        self._reader = Reader(
            ledger,
            index,
            embedder,
            mirror=self._mirror,
            lock=self._lock,
            buffer=buffer,
            expander=config.expander,
            clock=self.clock,
        )
        self._writer = Writer(
            ledger,
            index,
            mirror=self._mirror,
            reader=self._reader,
            lock=self._lock,
            extractor=self.extractor,
            judge=prose_judge,
            clock=self.clock,
            speaker_field=config.speaker_field,
        )
        index.bind(embedder=embedder.name, dimension=embedder.dimension)
        if config.reconcile:
            self.reconcile()

    @classmethod
    def open(cls, path: str | Path, *, config: MemoryConfig | None = None) -> TemporalMemory:
        """The embedded default in one folder: ``ledger.sqlite`` and a Chroma ``index/``, built
        as ``config`` says (embedded by the offline MiniLM unless it names an embedder).

        New prose is not judged at write time by default (``prose_judge=None``: prose is only
        judged at read time, by ``search(detector=...)``): on real conversations the shipped
        judge still closes statements that hold (docs/storage.md has the figures).
        ``MemoryConfig(prose_judge="kappa")`` turns on the shipped claim judge
        (:func:`~shared_core.judging.claims.claim_judge`); any
        :class:`~shared_core.judging.Judge` may be given (docs/judging.md).

        One process at a time may open a folder: the memory holds an operating-system lock on
        ``FOLDER/writer.lock`` until it is closed (or its process dies), and another process
        gets FolderInUseError (for several workers, :meth:`connect` to a PostgreSQL ledger and
        a Chroma server). An index that cannot be read is moved aside (``index.damaged-<UTC
        time>``, never deleted; a warning is logged) and rebuilt from the ledger."""
        memory, _ = cls._open_folder(path, config)
        return memory

    @classmethod
    def repair(cls, path: str | Path, *, config: MemoryConfig | None = None) -> ReconcileReport:
        """Rebuild the index of an embedded folder from its ledger (``temporal-rag repair
        FOLDER`` from a shell): a missing or stale index is brought up to date, one that cannot
        be read is moved aside (``ReconcileReport.moved_to`` names where) and built anew.
        ``config`` must name the embedder the folder was built with (default: MiniLM)."""
        config = memory_config(config)
        memory, moved = cls._open_folder(path, dataclasses.replace(config, reconcile=True))
        with memory:
            report = memory.reconcile(full=True)
        if report.moved_to is None and moved is not None:
            report = dataclasses.replace(report, moved_to=str(moved))
        return report

    @classmethod
    def _open_folder(
        cls, path: str | Path, config: MemoryConfig | None
    ) -> tuple[TemporalMemory, Path | None]:
        config = memory_config(config)
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise InvalidInputError("path", f"{folder} is a file", "pass a folder (or a new path)")
        folder.mkdir(parents=True, exist_ok=True)

        def connect(ledger: Path, index: Path, config: MemoryConfig) -> TemporalMemory:
            return cls.connect(ledger=ledger, index=index, config=config)

        memory, lock, moved = open_folder(folder, config, connect)
        memory._folder_lock = lock
        return memory, moved

    @classmethod
    def connect(
        cls,
        *,
        ledger: str | Path,
        index: str | Path,
        schema: str = "temporal_rag",
        prefix: str = "temporal_rag",
        config: MemoryConfig | None = None,
    ) -> TemporalMemory:
        """A memory on servers or files: ``ledger`` is ``postgresql://user@host:5432/db``
        (its ``schema``) or an SQLite file; ``index`` is a Chroma server,
        ``http://host:8000`` (its collections named from ``prefix``), or a Chroma folder.
        Several processes may connect to the same servers. ``config`` is :meth:`open`'s
        (``durability`` applies to an SQLite ledger). What was opened is closed if building
        the memory fails."""
        config = memory_config(config)
        opened = open_ledger(
            ledger, schema=schema, clock=config.clock, durability=config.durability
        )
        try:
            mirror = open_index(index, prefix=prefix)
        except BaseException:
            opened.close()
            raise
        try:
            return cls(ledger=opened, index=mirror, config=config)
        except BaseException:  # e.g. EmbedderMismatchError: the caller never gets the object
            mirror.close()
            opened.close()
            raise

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the index and the ledger (idempotent), after applying deferred index writes
        (``add_many(..., defer_index=True)``)."""
        with self._lock:
            try:
                self._mirror.flush()
                self.index.close()
            finally:
                try:
                    self.ledger.close()
                finally:
                    if self._folder_lock is not None:
                        self._folder_lock.release()

    aclose = async_twin(close)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ writes
    @property
    def extraction_problems(self) -> int:
        """How many texts' extractor output was bad (failed, invalid, or facts dropped):
        ``extraction_report.problems``."""
        return self._writer.extraction_report.problems

    @property
    def extraction_report(self) -> ExtractionReport:
        """The extraction problems so far per kind, empty extractions and refused dates
        included (a frozen snapshot; each problem is also logged once)."""
        return self._writer.extraction_report

    def add(
        self,
        text: str | Fact,
        *,
        subject: str | None = None,
        relation: str | None = None,
        object: ObjectValue | None = None,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        speaker: str | None = None,
    ) -> Added:
        """Remember one text. With subject, relation and object it is one keyed fact;
        otherwise the extractor decides (keyed facts from its metadata or an LLM, or prose).
        ``valid_from`` defaults to now (the ledger's record time); ``speaker``: who wrote it
        (see :meth:`add_many`). Times may be aware datetimes, ISO-8601 strings with an offset
        or epoch seconds. A ready :class:`Fact` may be given as ``text`` (alone: it carries its
        key, namespace and metadata), as to :meth:`add_many`."""
        if isinstance(text, Fact):
            _check_fact_alone(subject, relation, object)
            return self.add_many([text], valid_from=valid_from, valid_to=valid_to, speaker=speaker)[
                0
            ]
        check_text(text, "text")
        metadata = check_metadata(metadata, "metadata")
        valid_from = to_datetime(valid_from, "valid_from")
        valid_to = to_datetime(valid_to, "valid_to")
        if subject is None and relation is None and object is None:
            return self.add_many(
                [text],
                metadatas=[metadata],
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
                speaker=speaker,
            )[0]
        fact = Fact(
            text=text,
            subject=subject,
            relation=relation,
            object=object,
            valid_from=valid_from,
            valid_to=valid_to,
            namespace=namespace,
            metadata=metadata,
        )
        return self.add_many([fact], speaker=speaker)[0]

    async def aadd(
        self,
        text: str | Fact,
        *,
        subject: str | None = None,
        relation: str | None = None,
        object: ObjectValue | None = None,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        speaker: str | None = None,
    ) -> Added:
        """:meth:`add` for async callers: an extractor's or a judge's async form is awaited
        (see :meth:`aadd_many`); a keyed fact goes through no extractor (a worker thread)."""
        if isinstance(text, Fact):
            _check_fact_alone(subject, relation, object)
            items = await self.aadd_many(
                [text], valid_from=valid_from, valid_to=valid_to, speaker=speaker
            )
            return items[0]
        check_text(text, "text")
        metadata = check_metadata(metadata, "metadata")
        valid_from = to_datetime(valid_from, "valid_from")
        valid_to = to_datetime(valid_to, "valid_to")
        if subject is None and relation is None and object is None:
            items = await self.aadd_many(
                [text],
                metadatas=[metadata],
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
                speaker=speaker,
            )
            return items[0]
        return await asyncio.to_thread(
            self.add,
            text,
            subject=subject,
            relation=relation,
            object=object,
            valid_from=valid_from,
            valid_to=valid_to,
            namespace=namespace,
            metadata=metadata,
            speaker=speaker,
        )

    def add_many(
        self,
        items: Iterable[Item],
        *,
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        replacing: Sequence[str] = (),
        merge_prose: bool = True,
        speaker: str | None = None,
        vectors: Mapping[str, Sequence[float]] | None = None,
        defer_index: bool = False,
    ) -> list[Added]:
        """Remember several texts (run through the extractor) or ready Facts, in one ledger
        transaction and with batched embedding: all of them are stored or, on bad input,
        none. Returns one :class:`Added` per item, in order. ``valid_from`` / ``valid_to`` are
        the valid time of every statement that does not carry its own (from its metadata, the
        extractor or the Fact); ``valid_from`` defaults to the record time, ``valid_to`` to open.

        For callers that name what they store (an adapter's document ids): ``replacing`` are
        fact ids of statements these items replace, withdrawn in the same transaction unless
        the items ended them (then they stay as history) or repeated one exactly; and
        ``merge_prose=False`` keeps each prose item a statement of its own, even when prose
        with the same text is stored (see ``Ledger.write_many``).

        ``speaker`` names who wrote the items (a user id): first person ("I live in Berlin")
        is theirs, and nothing they write closes another speaker's statement. It is written
        into each statement's metadata under ``MemoryConfig.speaker_field`` (default
        ``"user_id"``, so ``where={"user_id": ...}`` finds it); without it, that metadata field
        names the speaker (InvalidInputError if both are given and differ).

        ``vectors`` maps statement texts to vectors the caller already has (of the memory's
        dimension): those texts are not embedded again, and the index keeps the given vectors
        (an adapter writing records nobody searches by meaning gives a placeholder).
        ``defer_index=True`` leaves the index's catch-up to the next search, write or
        :meth:`close` (or to the 256th deferred write, which applies them in one batch): the
        ledger write commits as ever, and every search catches up first, so nothing a read
        sees changes; for a caller that reads the ledger between writes (a LangGraph store).

        With a ``prose_judge``, a batch holding prose is judged in one call
        (docs/judging.md): a :class:`~shared_core.judging.ClaimJudge` makes the statements it
        places claim statements of their subject and attribute, a
        :class:`~shared_core.judging.ProseJudge` scores each against its nearest stored prose
        of the same speaker, an LLM judge keys them; what they end is closed in the same
        transaction and shows in ``Added.closed``. The index is brought up to date first
        (IndexSyncError if it cannot be); that and a failing judge (DetectorError) leave
        nothing written. Times may be aware datetimes, ISO-8601 strings with an offset or
        epoch seconds."""
        listed, checked = checked_items(items, metadatas)
        return self._writer.add_many(
            listed,
            checked,
            namespace=namespace,
            valid_from=to_datetime(valid_from, "valid_from"),
            valid_to=to_datetime(valid_to, "valid_to"),
            replacing=replacing,
            merge_prose=merge_prose,
            speaker=speaker,
            vectors=checked_vectors(vectors, self.embedder.dimension),
            defer_index=defer_index,
        )

    async def aadd_many(
        self,
        items: Iterable[Item],
        *,
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        replacing: Sequence[str] = (),
        merge_prose: bool = True,
        speaker: str | None = None,
        vectors: Mapping[str, Sequence[float]] | None = None,
        defer_index: bool = False,
    ) -> list[Added]:
        """:meth:`add_many` for async callers: an extractor's async form (``aextract``) is
        awaited on the running loop, one text after another, and so is an async judge's
        ``ajudge``; embedding, the index catch-up and writing run in worker threads. Without
        an async form, :meth:`add_many` runs in a worker thread."""
        items, checked = checked_items(items, metadatas)
        if not self._writer.writes_async:
            return await asyncio.to_thread(
                self.add_many,
                items,
                metadatas=checked,
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
                replacing=replacing,
                merge_prose=merge_prose,
                speaker=speaker,
                vectors=vectors,
                defer_index=defer_index,
            )
        return await self._writer.aadd_many(
            items,
            checked,
            namespace=namespace,
            valid_from=to_datetime(valid_from, "valid_from"),
            valid_to=to_datetime(valid_to, "valid_to"),
            replacing=replacing,
            merge_prose=merge_prose,
            speaker=speaker,
            vectors=checked_vectors(vectors, self.embedder.dimension),
            defer_index=defer_index,
        )

    def retract(
        self,
        subject: str,
        relation: str,
        object: ObjectValue | None = None,
        *,
        at: TimeInput | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        defer_index: bool = False,
    ) -> WriteResult:
        """End what is valid for the key at ``at`` (default now); see ``Ledger.retract``
        (``defer_index``: as in :meth:`add_many`)."""
        when = to_datetime(at, "at")
        return self._writer.apply(
            lambda: self.ledger.retract(subject, relation, object, at=when, namespace=namespace),
            defer_index=defer_index,
        )

    aretract = async_twin(retract)

    def correct(self, /, fact_id: str, **changes: Any) -> WriteResult:
        """Replace a wrong statement (it was never true) by a corrected copy."""
        return self._writer.apply(lambda: self.ledger.correct(fact_id, **changes))

    acorrect = async_twin(correct)

    def retire(self, fact_id: str) -> WriteResult:
        """Withdraw a statement: it was never true (history keeps it, marked)."""
        return self._writer.apply(lambda: self.ledger.retire(fact_id))

    aretire = async_twin(retire)

    def retire_where(
        self, where: Filter | Mapping[str, Any] | None, *, namespace: str = DEFAULT_NAMESPACE
    ) -> list[WriteResult]:
        """Withdraw, in one transaction, every believed statement of the namespace whose
        attributes match ``where`` (``None``: all of them; ``fact_id`` is an attribute too),
        superseded ones and those that only reinforced another statement included. History
        keeps them, marked; what they had superseded becomes current again. Linear in the
        statements stored: meant for deletes, not per query."""
        ids = matching_statement_ids(self.ledger, as_filter(where), namespace=namespace)
        return self._writer.apply_all(lambda: self.ledger.retire_many(ids) if ids else [])

    aretire_where = async_twin(retire_where)

    def unretire(self, fact_id: str) -> WriteResult:
        """Undo a retirement or a retraction."""
        return self._writer.apply(lambda: self.ledger.unretire(fact_id))

    aunretire = async_twin(unretire)

    def withdrawals(
        self,
        where: Filter | Mapping[str, Any] | None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        per: str | None = None,
    ) -> Withdrawals:
        """What :meth:`restore_where` would undo: the statements of the namespace matching
        ``where``, grouped by their attribute ``per`` (``None``: each fact id alone), which
        groups exist at all and which hold a believed statement. Linear in the statements."""
        return withdrawals(self.ledger, as_filter(where), namespace=namespace, per=per)

    awithdrawals = async_twin(withdrawals)

    def restore_where(
        self,
        where: Filter | Mapping[str, Any] | None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        per: str | None = None,
    ) -> list[WriteResult]:
        """Undo :meth:`retire_where`, in one transaction: for each group of the statements
        matching ``where`` (see :meth:`withdrawals`) that holds no believed statement, the
        statements its latest withdrawal retired are recorded again, as new, as
        :meth:`unretire` does (history keeps the withdrawn records and the withdrawal; what
        the key rule decides, it decides again). Groups holding a believed statement are left
        as they are."""
        condition = as_filter(where)
        with self._lock:
            ids = withdrawals(self.ledger, condition, namespace=namespace, per=per).restorable
            return self._writer.apply_all(lambda: self.ledger.unretire_many(ids) if ids else [])

    arestore_where = async_twin(restore_where)

    def declare(self, relation: str, cardinality: Cardinality | str) -> None:
        """Declare a relation ONE (a new object supersedes; the default) or MANY."""
        self.ledger.declare(relation, cardinality)

    adeclare = async_twin(declare)

    # ------------------------------------------------------------------ searches
    def search(
        self,
        query: str,
        options: SearchOptions | None = None,
        /,
        **changes: Unpack[SearchChanges],
    ) -> list[Hit]:
        """The ``k`` facts nearest to ``query`` that are valid at ``valid_at`` as known at
        ``known_at`` (both default to now: the current state).

        ``options`` is a :class:`~shared_core.memory.options.SearchOptions` (default
        ``SearchOptions()``: k=5, the default namespace, the current state); keyword arguments
        change single options of it (``search(query, k=3, valid_at=...)``; ``None`` keeps the
        option). See :class:`~shared_core.memory.options.SearchOptions` for what each means.
        Fewer than ``k`` hits come back when Phi_T removes some (they are in ``Hit.shadows``);
        the recency buffer's hits come on top of ``k``.
        """
        asked = (options if options is not None else SearchOptions()).merged(**changes)
        return self._reader.search(query, asked)

    async def asearch(
        self,
        query: str,
        options: SearchOptions | None = None,
        /,
        **changes: Unpack[SearchChanges],
    ) -> list[Hit]:
        """:meth:`search` for async callers: the expander's and the detector's async forms are
        awaited on the running loop (an LLM judge's, say); embedding, the index and the ledger
        are read in a worker thread, and a detector without an async form runs in one too."""
        asked = (options if options is not None else SearchOptions()).merged(**changes)
        return await self._reader.asearch(query, asked)

    def search_by_vector(
        self,
        vector: Sequence[float],
        options: SearchOptions | None = None,
        /,
        **changes: Unpack[SearchChanges],
    ) -> list[Hit]:
        """:meth:`search` for a query already embedded by this memory's embedder (its
        dimension is checked). ``expand`` needs the query text and is refused; a ``detector``
        judges without it."""
        asked = (options if options is not None else SearchOptions()).merged(**changes)
        return self._reader.search_by_vector(vector, asked)

    asearch_by_vector = async_twin(search_by_vector)

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored embeddings of these facts, by fact id (ids the index lacks are absent):
        for a caller re-ranking hits by their vectors (maximal marginal relevance, say)."""
        return self._reader.vectors(fact_ids)

    avectors = async_twin(vectors)

    def context(
        self,
        query: str,
        options: SearchOptions | None = None,
        /,
        *,
        token_budget: int = 512,
        count_tokens: Callable[[str], int] | None = None,
        **changes: Unpack[SearchChanges],
    ) -> str:
        """The surviving facts' sentences as one block for a prompt, each line with its valid
        time, most relevant first (newest-valid first within equal relevance), cut to
        ``token_budget`` (see :mod:`shared_core.memory.context` for the token count).
        ``options`` and ``changes`` are those of :meth:`search`, except that ``k`` defaults to
        20 here (more candidates, then the budget decides)."""
        base = options if options is not None else SearchOptions(k=CONTEXT_K)
        hits = self.search(query, base.merged(**changes))
        return pack_context(hits, token_budget=token_budget, count_tokens=count_tokens)

    async def acontext(
        self,
        query: str,
        options: SearchOptions | None = None,
        /,
        *,
        token_budget: int = 512,
        count_tokens: Callable[[str], int] | None = None,
        **changes: Unpack[SearchChanges],
    ) -> str:
        """:meth:`context` for async callers (its search is :meth:`asearch`)."""
        base = options if options is not None else SearchOptions(k=CONTEXT_K)
        hits = await self.asearch(query, base.merged(**changes))
        return pack_context(hits, token_budget=token_budget, count_tokens=count_tokens)

    # ------------------------------------------------------------------ ledger lookups
    def history(
        self,
        subject: str,
        relation: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        known_at: TimeInput | None = None,
    ) -> list[Fact]:
        """Every version of one key in valid-time order (see ``Ledger.history``)."""
        return self.ledger.history(
            subject, relation, namespace=namespace, known_at=to_datetime(known_at, "known_at")
        )

    ahistory = async_twin(history)

    def as_of(
        self,
        *,
        valid_at: TimeInput | None = None,
        known_at: TimeInput | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        subject: str | None = None,
        relation: str | None = None,
    ) -> list[Fact]:
        """Every fact valid at ``valid_at`` as known at ``known_at`` (no query, no ranking)."""
        return self.ledger.as_of(
            valid_at=to_datetime(valid_at, "valid_at"),
            known_at=to_datetime(known_at, "known_at"),
            namespace=namespace,
            subject=subject,
            relation=relation,
        )

    aas_of = async_twin(as_of)

    def namespaces(
        self,
        *,
        prefix: str = "",
        valid_at: TimeInput | None = None,
        known_at: TimeInput | None = None,
    ) -> list[str]:
        """The namespaces holding a fact valid at ``valid_at`` as known at ``known_at``
        (default now), those starting with ``prefix``, sorted (see ``Ledger.namespaces``)."""
        return self.ledger.namespaces(
            prefix=prefix,
            valid_at=to_datetime(valid_at, "valid_at"),
            known_at=to_datetime(known_at, "known_at"),
        )

    anamespaces = async_twin(namespaces)

    def select(
        self,
        where: Filter | Mapping[str, Any] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        valid_at: TimeInput | None = None,
        known_at: TimeInput | None = None,
        include_history: bool = False,
    ) -> list[Fact]:
        """Every fact matching a metadata filter (no query, no ranking), valid at ``valid_at``
        as known at ``known_at`` (default now); ``include_history``: at any valid time.

        It reads the ledger, so it costs time linear in the namespace's facts (all the facts
        ever stored, with ``include_history``): meant for deletes and audits, not per query.
        """
        return select_facts(
            self.ledger,
            as_filter(where),
            namespace=namespace,
            valid_at=to_datetime(valid_at, "valid_at"),
            known_at=to_datetime(known_at, "known_at"),
            include_history=include_history,
        )

    aselect = async_twin(select)

    def explain(self, fact_id: str) -> Explanation:
        """Every record of a fact id and why it is (not) current."""
        return self.ledger.explain(fact_id)

    aexplain = async_twin(explain)

    # ------------------------------------------------------------------ consistency
    def reconcile(self, *, full: bool = False) -> ReconcileReport:
        """Bring the index up to date with the ledger (idempotent; cheap when it already is).

        ``full=True`` re-applies every version row and removes index rows the ledger lacks
        (after restoring one of them from a backup, say), then checks that the index can be
        read; an index in a folder that cannot be is moved aside (never deleted; a warning is
        logged and ``moved_to`` names where) and rebuilt from the ledger.
        """
        with self._lock:
            return self._mirror.reconcile(full=full)

    areconcile = async_twin(reconcile)


def _judge(config: MemoryConfig, embedder: Embedder) -> Judge | None:
    """The memory's write-time judge from ``config.prose_judge``: ``"kappa"`` built (the
    shipped claim judge), a sequence chained, a claim judge checked against ``embedder``."""
    option = config.prose_judge
    if option is None:
        return None
    steps: list[Judge] = []
    for step in option if isinstance(option, tuple | list) else (option,):
        judge: Judge = shipped_claim_judge(config.embedder) if step == "kappa" else step
        check_prose_judge(judge, embedder)
        steps.append(judge)
    return steps[0] if len(steps) == 1 else JudgeChain(tuple(steps))


def _check_fact_alone(subject: object, relation: object, object_: object) -> None:
    """InvalidInputError when a key is given beside a Fact (the Fact carries its own)."""
    given = [
        n
        for n, v in (("subject", subject), ("relation", relation), ("object", object_))
        if v is not None
    ]
    if given:
        raise InvalidInputError(
            ", ".join(given),
            "is given beside a Fact",
            "pass the Fact alone (it carries its key), or a text with subject, relation and object",
        )
