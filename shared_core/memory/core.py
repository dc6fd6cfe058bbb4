"""TemporalMemory: the ledger, a vector index and an embedder behind one object.

Writes go to the ledger first (the source of truth, where supersession happens), then the
index mirrors the ledger's change feed. Reads ask the index for the k nearest facts visible at
(valid_at, known_at), optionally union the recency buffer, and apply Phi_T.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, Self, Unpack

from shared_core.clock import Clock, Instant, SystemClock, to_instant
from shared_core.dominance import Candidate
from shared_core.embedders.base import Embedder, check_vectors, embedding_call
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.errors import EmbedderError, IndexSyncError, InvalidInputError
from shared_core.extractors.base import Extractor
from shared_core.extractors.metadata import MetadataExtractor
from shared_core.facts import (
    DEFAULT_NAMESPACE,
    Cardinality,
    Fact,
    ObjectValue,
)
from shared_core.filters import Filter, as_filter
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.results import Explanation, WriteResult
from shared_core.ledger.sqlite import Durability
from shared_core.ledger.store import LedgerStore
from shared_core.llm_calls import TextLLM
from shared_core.memory import async_paths
from shared_core.memory.claims import (
    ClaimJudge,
    check_prose_judge,
    place_claims,
    shipped_claim_judge,
)
from shared_core.memory.connection import open_index, open_ledger
from shared_core.memory.context import pack_context
from shared_core.memory.hits import Added, Hit, ReconcileReport
from shared_core.memory.options import SearchChanges, SearchOptions
from shared_core.memory.prose_judge import ProseJudge, judge_batch
from shared_core.memory.reading import Query, Reader
from shared_core.memory.selection import matching_statement_ids, select_facts
from shared_core.memory.sync import IndexSync
from shared_core.memory.twins import async_twin, native_twin
from shared_core.memory.writing import Plan, added, check_metadatas, plan_item
from shared_core.recency import RecencyBuffer

Item = str | Fact
CONTEXT_K = 20
"""How many facts :meth:`TemporalMemory.context` retrieves unless told otherwise."""


class TemporalMemory:
    """Temporally valid memory for RAG and agents (see docs/design.md for the semantics).

    Use :meth:`open` for the embedded default (SQLite + Chroma + MiniLM in one folder),
    :meth:`connect` for servers (PostgreSQL, a Chroma server), or pass any ledger, index,
    embedder and extractor. Thread-safe; the ``a*`` methods run the
    same work off the event loop.
    """

    def __init__(
        self,
        *,
        ledger: LedgerStore,
        index: VectorIndex,
        embedder: Embedder,
        extractor: Extractor | None = None,
        clock: Clock | None = None,
        expander: TextLLM | None = None,
        recency_capacity: int = 8,
        reconcile: bool = True,
        prose_judge: ClaimJudge | ProseJudge | None = None,
    ) -> None:
        if extractor is None:
            extractor = MetadataExtractor()
        check_prose_judge(prose_judge, embedder)
        self.prose_judge = prose_judge
        self.ledger = ledger
        self.index = index
        self.embedder = embedder
        self.extractor = extractor
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.extraction_problems = 0  # texts kept as prose because extraction output was bad
        self._lock = threading.RLock()
        self._synced_at: tuple[int, int] | None = None  # ledger revision the index mirrors
        self._sync = IndexSync(ledger, index, embedder)
        self._buffer = RecencyBuffer(recency_capacity)
        self._reader = Reader(ledger, index, self._buffer, expander)
        index.bind(embedder=embedder.name, dimension=embedder.dimension)
        if reconcile:
            self.reconcile()

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        clock: Clock | None = None,
        expander: TextLLM | None = None,
        durability: Durability = "full",
        prose_judge: ClaimJudge | ProseJudge | Literal["kappa"] | None = None,
    ) -> TemporalMemory:
        """The embedded default in one folder: ``ledger.sqlite`` and a Chroma ``index/``,
        embedded by the offline MiniLM unless another embedder is given.

        New prose is not judged at write time by default (``None``: prose is only judged at
        read time, by ``search(detector=...)``): on real conversations the shipped judge
        still closes statements that hold (docs/storage.md has the figures). ``"kappa"``
        turns on the shipped claim judge (:func:`~shared_core.memory.claims.claim_judge`,
        loaded on the first prose write); any :class:`ClaimJudge` or :class:`ProseJudge`
        may be given."""
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise InvalidInputError("path", f"{folder} is a file", "pass a folder (or a new path)")
        folder.mkdir(parents=True, exist_ok=True)
        return cls.connect(
            ledger=folder / "ledger.sqlite",
            index=folder / "index",
            embedder=embedder,
            extractor=extractor,
            clock=clock,
            expander=expander,
            durability=durability,
            prose_judge=prose_judge,
        )

    @classmethod
    def connect(
        cls,
        *,
        ledger: str | Path,
        index: str | Path,
        schema: str = "temporal_rag",
        prefix: str = "temporal_rag",
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        clock: Clock | None = None,
        expander: TextLLM | None = None,
        durability: Durability = "full",
        prose_judge: ClaimJudge | ProseJudge | Literal["kappa"] | None = None,
    ) -> TemporalMemory:
        """A memory on servers or files: ``ledger`` is ``postgresql://user@host:5432/db``
        (its ``schema``) or an SQLite file; ``index`` is a Chroma server,
        ``http://host:8000`` (its collections named from ``prefix``), or a Chroma folder.
        Several processes may connect to the same servers. The other options are
        :meth:`open`'s (``durability`` applies to an SQLite ledger)."""
        if prose_judge == "kappa":
            prose_judge = shipped_claim_judge(embedder)
        opened = open_ledger(ledger, schema=schema, clock=clock, durability=durability)
        try:
            mirror = open_index(index, prefix=prefix)
        except BaseException:
            opened.close()
            raise
        try:
            return cls(
                ledger=opened,
                index=mirror,
                embedder=embedder if embedder is not None else MiniLMEmbedder(),
                extractor=extractor,
                clock=clock,
                expander=expander,
                prose_judge=prose_judge,
            )
        except BaseException:  # e.g. EmbedderMismatchError: the caller never gets the object
            mirror.close()
            opened.close()
            raise

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the index and the ledger (idempotent)."""
        with self._lock:
            self.index.close()
            self.ledger.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def add(
        self,
        text: str,
        *,
        subject: str | None = None,
        relation: str | None = None,
        object: ObjectValue | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
    ) -> Added:
        """Remember one text. With subject, relation and object it is one keyed fact;
        otherwise the extractor decides (keyed facts from its metadata or an LLM, or prose).
        ``valid_from`` defaults to now (the ledger's record time)."""
        if subject is None and relation is None and object is None:
            return self.add_many(
                [text],
                metadatas=[metadata or {}],
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
            )[0]
        fact = Fact(
            text=text,
            subject=subject,
            relation=relation,
            object=object,
            valid_from=valid_from,
            valid_to=valid_to,
            namespace=namespace,
            metadata=metadata or {},
        )
        return self.add_many([fact])[0]

    def add_many(
        self,
        items: Iterable[Item],
        *,
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        replacing: Sequence[str] = (),
        merge_prose: bool = True,
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

        With a ``prose_judge``, new prose is judged in batched scorer calls: a
        :class:`ClaimJudge` makes the statements it places claim statements of their subject
        and attribute (:mod:`shared_core.memory.claims`), a :class:`ProseJudge` scores each
        against its nearest stored prose (:mod:`shared_core.memory.prose_judge`); what they end
        is closed in the same transaction and shows in ``Added.closed``. The index is brought
        up to date first (IndexSyncError if it cannot be); that and a failing scorer
        (DetectorError) leave nothing written."""
        items = list(items)
        check_metadatas(items, metadatas)
        plans = [
            plan_item(
                self.extractor,
                item,
                metadatas[i] if metadatas else {},
                position=i,
                namespace=namespace,
                valid_from=valid_from,
                valid_to=valid_to,
            )
            for i, item in enumerate(items)
        ]
        return self._write_plans(plans, replacing=replacing, merge_prose=merge_prose)

    def _write_plans(
        self, plans: Sequence[Plan], *, replacing: Sequence[str], merge_prose: bool
    ) -> list[Added]:
        """The second half of :meth:`add_many`: embed, judge and write what was planned."""
        self.extraction_problems += sum(1 for plan in plans if plan.problem is not None)
        facts = [fact for plan in plans for fact in plan.statements]
        texts = list(dict.fromkeys(fact.text for fact in facts))
        vectors = dict(zip(texts, self._sync.embed(texts), strict=True))
        with self._lock:
            facts = self._claims(facts, vectors)
            edges = self._judge(facts, vectors)
            options: dict[str, Any] = {"supersessions": edges} if edges else {}
            if replacing:
                options["replacing"] = replacing
            if not merge_prose:
                options["merge_prose"] = False
            results = self.ledger.write_many(facts, **options)
            self._index_writes(vectors, results)
        return added(plans, results)

    def retract(
        self,
        subject: str,
        relation: str,
        object: ObjectValue | None = None,
        *,
        at: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> WriteResult:
        """End what is valid for the key at ``at`` (default now); see ``Ledger.retract``."""
        return self._write(
            lambda: self.ledger.retract(subject, relation, object, at=at, namespace=namespace)
        )

    def correct(self, /, fact_id: str, **changes: Any) -> WriteResult:
        """Replace a wrong statement (it was never true) by a corrected copy."""
        return self._write(lambda: self.ledger.correct(fact_id, **changes))

    def retire(self, fact_id: str) -> WriteResult:
        """Withdraw a statement: it was never true (history keeps it, marked)."""
        return self._write(lambda: self.ledger.retire(fact_id))

    def retire_where(
        self, where: Filter | Mapping[str, Any] | None, *, namespace: str = DEFAULT_NAMESPACE
    ) -> list[WriteResult]:
        """Withdraw, in one transaction, every believed statement of the namespace whose
        attributes match ``where`` (``None``: all of them; ``fact_id`` is an attribute too),
        superseded ones and those that only reinforced another statement included. History
        keeps them, marked; what they had superseded becomes current again. Linear in the
        statements stored: meant for deletes, not per query."""
        ids = matching_statement_ids(self.ledger, as_filter(where), namespace=namespace)
        with self._lock:
            results = self.ledger.retire_many(ids) if ids else []
            self._index_writes({}, results)
            return results

    def unretire(self, fact_id: str) -> WriteResult:
        """Undo a retirement or a retraction."""
        return self._write(lambda: self.ledger.unretire(fact_id))

    def declare(self, relation: str, cardinality: Cardinality | str) -> None:
        """Declare a relation ONE (a new object supersedes; the default) or MANY."""
        self.ledger.declare(relation, cardinality)

    # ------------------------------------------------------------------ reads
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
        request = self._query(query, asked)
        hits = self._ranked(request, self._reader.variants(request))
        return self._reader.finish(request, hits)

    def _ranked(self, request: Query, texts: list[str]) -> list[Hit]:
        """The first half of :meth:`search`, given the query's variants: catch up, embed them,
        rank the visible facts (before Phi_T)."""
        with self._lock:
            self._catch_up()
        return self._reader.rank(request, self._query_vectors(texts))

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
        if asked.expand:
            raise InvalidInputError(
                "expand", "needs the query text", "use search(query, ...) to expand a query"
            )
        request = self._request(None, asked)
        try:
            checked = check_vectors(
                [vector], count=1, dimension=self.embedder.dimension, source="vector"
            )
        except EmbedderError as exc:
            raise InvalidInputError(
                "vector", str(exc), f"pass {self.embedder.dimension} finite floats"
            ) from exc
        with self._lock:
            self._catch_up()
        return self._reader.search(request, [("", checked[0])])

    def vectors(self, fact_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored embeddings of these facts, by fact id (ids the index lacks are absent):
        for a caller re-ranking hits by their vectors (maximal marginal relevance, say)."""
        with self._lock:
            self._catch_up()
        return self.index.vectors(list(fact_ids))

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

    def history(
        self,
        subject: str,
        relation: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        known_at: datetime | None = None,
    ) -> list[Fact]:
        """Every version of one key in valid-time order (see ``Ledger.history``)."""
        return self.ledger.history(subject, relation, namespace=namespace, known_at=known_at)

    def as_of(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        subject: str | None = None,
        relation: str | None = None,
    ) -> list[Fact]:
        """Every fact valid at ``valid_at`` as known at ``known_at`` (no query, no ranking)."""
        return self.ledger.as_of(
            valid_at=valid_at,
            known_at=known_at,
            namespace=namespace,
            subject=subject,
            relation=relation,
        )

    def namespaces(
        self,
        *,
        prefix: str = "",
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[str]:
        """The namespaces holding a fact valid at ``valid_at`` as known at ``known_at``
        (default now), those starting with ``prefix``, sorted (see ``Ledger.namespaces``)."""
        return self.ledger.namespaces(prefix=prefix, valid_at=valid_at, known_at=known_at)

    def select(
        self,
        where: Filter | Mapping[str, Any] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
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
            valid_at=valid_at,
            known_at=known_at,
            include_history=include_history,
        )

    def explain(self, fact_id: str) -> Explanation:
        """Every record of a fact id and why it is (not) current."""
        return self.ledger.explain(fact_id)

    # ------------------------------------------------------------------ consistency
    def reconcile(self, *, full: bool = False) -> ReconcileReport:
        """Bring the index up to date with the ledger (idempotent; cheap when it already is).

        ``full=True`` re-applies every version row and removes index rows the ledger lacks
        (after restoring one of them from a backup, say).
        """
        with self._lock:
            return self._synced(self._sync.rebuild if full else self._sync.catch_up)

    # ------------------------------------------------------------------ async twins
    aadd = native_twin(add, async_paths.add)
    aadd_many = native_twin(add_many, async_paths.add_many)
    aretract = async_twin(retract)
    acorrect = async_twin(correct)
    aretire = async_twin(retire)
    aretire_where = async_twin(retire_where)
    aunretire = async_twin(unretire)
    adeclare = async_twin(declare)
    asearch = native_twin(search, async_paths.search)
    asearch_by_vector = async_twin(search_by_vector)
    avectors = async_twin(vectors)
    acontext = native_twin(context, async_paths.context)
    ahistory = async_twin(history)
    aas_of = async_twin(as_of)
    anamespaces = async_twin(namespaces)
    aselect = async_twin(select)
    aexplain = async_twin(explain)
    areconcile = async_twin(reconcile)
    aclose = async_twin(close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ internals
    def _query(self, query: str, options: SearchOptions) -> Query:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query", "is empty", "pass the text to search for")
        return self._request(query, options)

    def _request(self, query: str | None, options: SearchOptions) -> Query:
        """The request with its times resolved; ``query`` is None for a search by vector."""
        if options.expand and self._reader.expander is None:
            raise InvalidInputError(
                "expand", "needs a query expander", "pass expander=... to TemporalMemory"
            )
        now = options.valid_at if options.valid_at is not None else self.clock.now()
        valid: Instant = to_instant(now, "valid_at")
        known = None if options.known_at is None else to_instant(options.known_at, "known_at")
        return Query(
            text=query,
            options=options,
            valid_at=None if options.include_history else valid,
            known_at=known,
        )

    def _query_vectors(self, texts: list[str]) -> list[tuple[str, Vector]]:
        source = f"embedder {self.embedder.name!r}"
        vectors = check_vectors(
            [embedding_call(source, partial(self.embedder.embed_query, text)) for text in texts],
            count=len(texts),
            dimension=self.embedder.dimension,
            source=source,
        )
        return list(zip(texts, vectors, strict=True))

    def _claims(self, facts: list[Fact], vectors: Mapping[str, Vector]) -> list[Fact]:
        """``facts`` with the prose a ClaimJudge places made claim statements."""
        if not isinstance(self.prose_judge, ClaimJudge) or all(f.key is not None for f in facts):
            return facts
        self._catch_up()
        now = to_instant(self.clock.now(), "clock.now()")
        return place_claims(
            self.prose_judge, facts, vectors, ledger=self.ledger, index=self.index, now=now
        )

    def _judge(
        self, facts: Sequence[Fact], vectors: Mapping[str, Vector]
    ) -> tuple[ProseSupersession, ...]:
        """The prose supersessions to write with ``facts`` (none without a pairwise judge or
        prose)."""
        if not isinstance(self.prose_judge, ProseJudge) or all(f.key is not None for f in facts):
            return ()
        self._catch_up()  # judge against everything the ledger holds
        now = to_instant(self.clock.now(), "clock.now()")
        return judge_batch(
            self.prose_judge, facts, vectors, index=self.index, ledger=self.ledger, now=now
        )

    def _write(self, operation: Callable[[], WriteResult]) -> WriteResult:
        with self._lock:
            result = operation()
            self._index_writes({}, [result])
            return result

    def _index_writes(self, vectors: Mapping[str, Vector], results: Sequence[WriteResult]) -> None:
        written: dict[str, Vector] = {}
        for result in results:
            if result.fact is not None:
                self._buffer.add(Candidate.from_fact(result.fact))
                if result.fact.text in vectors:
                    written[result.fact.id] = vectors[result.fact.text]
        self._reader.remember(written)
        self._catch_up(vectors)

    def _catch_up(self, vectors: Mapping[str, Vector] | None = None) -> None:
        """Apply the ledger's changes to the index, unless nothing committed since the last
        successful catch-up (the ledger's revision is unchanged: then there is nothing to do)."""
        revision = self.ledger.revision()
        if revision == self._synced_at:
            return
        self._synced(lambda: self._sync.catch_up(vectors))
        self._synced_at = revision

    def _synced(self, operation: Callable[[], ReconcileReport]) -> ReconcileReport:
        """Run an index update; any failure becomes IndexSyncError (the ledger is intact)."""
        try:
            return operation()
        except IndexSyncError:
            raise
        except Exception as exc:
            raise IndexSyncError(
                f"the ledger holds the write but the index could not take it ({exc}); "
                "reconcile() brings the index up to date"
            ) from exc
