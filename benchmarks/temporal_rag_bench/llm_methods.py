"""The write-time methods of ``make bench-llm``: one :class:`TemporalMemory` per method and
track, fed the track's prose in time order, :data:`WRITE_BATCH` statements per ``add_many``
(one judge call each), in one namespace.

- ``kappa``: prose judged at write time by the shipped claim judge (``prose_judge="kappa"``).
- ``llm-extraction``: :class:`~shared_core.judging.llm.LLMExtractor` over the local model, as
  the memory's write-time judge (batched, shown the keys the memory holds).
- ``keyed-by-hand``: each statement written with its gold key (subject, relation, object).
- ``llm-extraction (perfect fake)``: the same LLMExtractor over :class:`PerfectExtractionLLM`,
  a stand-in that answers every prompt with the statements' gold keys in the judge's JSON
  format: what the same code does with a model that answers perfectly.
- ``llm-groups``: prose stored as it is, resolved at read time by
  :class:`~shared_core.detectors.llm_groups.LLMGroupDetector` over the local model (one call per
  question's retrieved set: which chunks state the same attribute; the newest of each wins).
- ``llm-groups (perfect fake)``: the same detector over :class:`PerfectGroupingLLM`, which
  groups the chunks by their gold (subject, attribute) when the attribute is single-valued.

Each statement is written with its valid time (``valid_from``) and its chunk's metadata (the
chat track's ``user_id``). What every write did is kept (:class:`WriteLog`): keyed or prose,
the extractor's problem, the ledger's decisions and the versions it closed, and the LLM's
calls and generated tokens, for :mod:`temporal_rag_bench.llm_bench` to count; a method with a
read-time detector also counts its reads' LLM calls and tokens (:class:`ReadLog`).
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from shared_core.clock import ManualClock
from shared_core.detectors.frames import FrameCard
from shared_core.detectors.kappa import KAPPA_FOLDER
from shared_core.detectors.llm_groups import LLMGroupDetector
from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.errors import EmbedderError
from shared_core.facts import Decision, Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.judging.base import Judge
from shared_core.ledger.sqlite.ledger import SQLiteLedger
from shared_core.llms import LLMStats
from shared_core.memory.config import MemoryConfig
from shared_core.memory.hits import Added
from shared_core.memory.memory import TemporalMemory
from shared_core.phi_t import ConflictDetector
from temporal_rag_bench.llm_tracks import gold_key
from temporal_rag_bench.methods_temporal import (
    CHUNK_KEY,
    ENTITY_KEY,
    kappa_missing,
    write_time_judge,
)
from temporal_rag_bench.model import SPEAKER_FIELD, Chunk, Dataset, Question, Retrieved
from temporal_rag_bench.shared_collection import SharedStore

NAMESPACE = "bench-llm"
WRITE_BATCH = 8
"""Statements per ``add_many`` (one judge call each): a chat session's worth, in time order."""
VALID_FROM = "valid_from"  # the metadata field the memory's metadata extractor dates a text by
PROMPT_EXAMPLE_DATE = datetime(2024, 5, 1, tzinfo=UTC)
"""The example date of LLMExtractor's default prompt (issue 31: models copy it)."""
_STATEMENT = re.compile(r"^S(\d+): <source_text>(.*?)</source_text>$", re.MULTILINE)
_CHUNK_LINE = re.compile(r"^(\d+)\. \[([^\]]*)\] (.*)$", re.MULTILINE)  # a group prompt's chunk


class CountedLLM(Protocol):
    """A text LLM that counts its calls (:class:`~shared_core.llms.LocalLLM` does)."""

    def __call__(self, prompt: str, /) -> str: ...

    @property
    def stats(self) -> LLMStats: ...


class PerfectExtractionLLM:
    """An LLM stand-in for :class:`LLMExtractor` that answers from the gold keys.

    Built from a track's chunks and cardinalities: each numbered statement of the judge's
    prompt (``S3: <source_text>...</source_text>``) is looked up by its text, and the answer
    is ``{"facts": [...]}`` with, per statement, its gold subject (``"I"`` when the speaker
    states it), relation and object, ``"card"`` from the track's cardinalities and no
    ``valid_from``; unrelated text gets no fact. Equal texts answer with the first chunk's key
    (two speakers' "I live in Berlin." both answer ``I | lives in | Berlin``). Deterministic;
    counts calls, and generated tokens as the answer's whitespace-separated words."""

    name = "perfect-fake"

    def __init__(self, chunks: Sequence[Chunk], cardinalities: Mapping[str, Any]) -> None:
        self._facts: dict[str, dict[str, Any]] = {}
        for chunk in sorted(chunks, key=lambda c: c.recorded_order):
            key = gold_key(chunk)
            if key is None or _collapsed(chunk.text) in self._facts:
                continue
            subject, relation, value = key
            self._facts[_collapsed(chunk.text)] = {
                "subject": "I" if subject == chunk.speaker else subject,
                "relation": relation,
                "object": value,
                "card": "many" if str(cardinalities.get(relation, "one")) == "many" else "one",
            }
        self._stats = LLMStats()

    @property
    def stats(self) -> LLMStats:
        return self._stats

    def __call__(self, prompt: str, /) -> str:
        facts = [
            {"s": int(match.group(1)), **self._facts[text]}
            for match in _STATEMENT.finditer(prompt)
            if (text := _collapsed(match.group(2))) in self._facts
        ]
        answer = json.dumps({"facts": facts})
        self._stats = LLMStats(
            calls=self._stats.calls + 1,
            generated_tokens=self._stats.generated_tokens + len(answer.split()),
        )
        return answer


class PerfectGroupingLLM:
    """An LLM stand-in for :class:`LLMGroupDetector` that answers from the gold keys.

    Each numbered chunk of the prompt is looked up by its text and speaker (the ``speaker``
    label the detector writes); chunks of one gold (subject, attribute) whose attribute is
    single-valued form a group. A text that names different keys, or none, joins no group.
    Deterministic; counts calls, and generated tokens as the answer's whitespace-separated
    words."""

    name = "perfect-groups"

    def __init__(self, chunks: Sequence[Chunk], cardinalities: Mapping[str, Any]) -> None:
        self._keys: dict[tuple[str, str | None], set[tuple[str, str] | None]] = defaultdict(set)
        for chunk in chunks:
            gold = gold_key(chunk)
            single = gold is not None and str(cardinalities.get(gold[1], "one")) != "many"
            speaker = chunk.metadata.get(SPEAKER_FIELD)
            key = (gold[0], gold[1]) if gold is not None and single else None
            self._keys[(_collapsed(chunk.text), None if speaker is None else str(speaker))].add(key)
        self._stats = LLMStats()

    @property
    def stats(self) -> LLMStats:
        return self._stats

    def __call__(self, prompt: str, /) -> str:
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for match in _CHUNK_LINE.finditer(prompt):
            label = match.group(2)
            speaker = label.split(", speaker ", 1)[1] if ", speaker " in label else None
            keys = self._keys.get((match.group(3), speaker), set())
            if len(keys) == 1 and (key := next(iter(keys))) is not None:
                groups[key].append(int(match.group(1)))
        answer = json.dumps(
            {"groups": [g for g in groups.values() if len(g) > 1], "unsure": []},
            separators=(", ", ": "),
        )
        self._stats = LLMStats(
            calls=self._stats.calls + 1,
            generated_tokens=self._stats.generated_tokens + len(answer.split()),
        )
        return answer


def _collapsed(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """What writing one chunk did."""

    chunk: str  # the chunk's id
    keyed: bool  # at least one keyed statement was stored for it
    problem: str | None  # the extractor's problem (then stored as prose)
    decisions: tuple[Decision, ...]
    closed: tuple[str, ...]  # chunk ids of the versions its writes closed
    corrected: tuple[str, ...]  # chunk ids of the versions it withdrew as corrections
    dated_elsewhere: int = 0  # keyed statements stored with a valid_from not the caller's
    prompt_dated: int = 0  # of which dated at the extractor prompt's example date


@dataclass(slots=True)
class WriteLog:
    """Every write of one method on one track, with the LLM's cost."""

    records: list[WriteRecord] = field(default_factory=list)
    seconds: float = 0.0
    llm: LLMStats = field(default_factory=LLMStats)


@dataclass(slots=True)
class ReadLog:
    """The reads of a method with a read-time detector: questions searched, their seconds, the
    LLM's calls and generated tokens while searching."""

    questions: int = 0
    seconds: float = 0.0
    llm_calls: int = 0
    generated_tokens: int = 0


Writing = Callable[[SharedStore], "WriteSetup"]


@dataclass(frozen=True, slots=True)
class WriteSetup:
    """How a method's memory writes: its prose judge, whether it writes the
    gold keys itself, and the LLM whose calls count (None: no LLM); and how it reads: the
    detector its searches pass to Phi_T (None: none)."""

    prose_judge: Judge | None = None
    keyed_by_hand: bool = False
    llm: CountedLLM | None = None
    detector: ConflictDetector | None = None


class MemoryMethod:
    """A TemporalMemory written in time order, ``write_batch`` statements per ``add_many``,
    as ``setup`` says; searched at
    ``valid_at=now`` (so as-of questions read the past), current state only. ``unavailable``:
    why the setup cannot run with an embedder (e.g. :func:`kappa_unavailable`), or None."""

    family = "memory"
    real_class: str | None = None
    buffer = 0

    def __init__(
        self,
        name: str,
        description: str,
        setup: Writing,
        *,
        embedder: Embedder,
        write_batch: int = WRITE_BATCH,
        unavailable: Callable[[Embedder], str | None] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self._setup = setup
        self._unavailable = unavailable
        self._write_batch = write_batch
        self._embedder = embedder
        self.log = WriteLog()
        self.reads = ReadLog()
        self.detector: ConflictDetector | None = None
        self.ingest_seconds: float | None = None
        self._shared: SharedStore | None = None
        self._memory: TemporalMemory | None = None
        self._llm: CountedLLM | None = None

    def skip_reason(self, dataset: Dataset) -> str | None:
        """Why this method cannot run here (``unavailable`` given the embedder), or None."""
        return None if self._unavailable is None else self._unavailable(self._embedder)

    def write_figures(self, dataset: Dataset) -> dict[str, Any]:
        """What its writes on ``dataset`` did (:func:`write_figures`), after :meth:`ingest`."""
        return write_figures(self, dataset)

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        setup = self._setup(shared)
        latest = max((c.timestamp for c in shared.chunks), default=dataset.now)
        clock = ManualClock(min(latest + timedelta(seconds=1), dataset.now))
        memory = TemporalMemory(
            ledger=SQLiteLedger(
                shared.workdir / f"{shared.name}_{_safe(self.name)}.sqlite",
                clock=clock,
                durability="normal",
            ),
            index=ChromaIndex(client=shared.client, prefix=f"{shared.name}_{_safe(self.name)}"),
            config=MemoryConfig(
                embedder=_with_fallback(shared, self._embedder),
                clock=clock,
                prose_judge=setup.prose_judge,
            ),
        )
        self._shared, self._memory = shared, memory
        self.detector, self._llm = setup.detector, setup.llm
        if setup.keyed_by_hand:  # the gold keys' relations; a judge proposes its own
            for relation, cardinality in dataset.cardinalities.items():
                memory.declare(relation, cardinality)
        before = setup.llm.stats if setup.llm is not None else LLMStats()
        started = time.perf_counter()
        for batch in _batches(shared.chunks, self._write_batch):
            added = _write(memory, batch, setup.keyed_by_hand)
            self.log.records.extend(_record(c, a) for c, a in zip(batch, added, strict=True))
        self.log.seconds = time.perf_counter() - started
        self.ingest_seconds = self.log.seconds
        if setup.llm is not None:
            self.log.llm = setup.llm.stats.since(before)

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        shared, memory = self._require()
        if self.detector is None:
            hits = memory.search(
                question.asked, k=k, valid_at=now, namespace=NAMESPACE, where=question.where
            )
        else:
            hits = self._search_with_detector(memory, question, k, now)
        rows = dict.fromkeys(shared.row[str(h.fact.metadata[CHUNK_KEY])] for h in hits)
        return Retrieved(tuple(shared.chunks[r] for r in rows))

    def _search_with_detector(
        self, memory: TemporalMemory, question: Question, k: int, now: datetime
    ) -> list[Any]:
        before = self._llm.stats if self._llm is not None else None
        started = time.perf_counter()
        hits = memory.search(
            question.asked,
            k=k,
            valid_at=now,
            namespace=NAMESPACE,
            where=question.where,
            detector=self.detector,
        )
        self.reads.questions += 1
        self.reads.seconds += time.perf_counter() - started
        if self._llm is not None and before is not None:
            spent = self._llm.stats.since(before)
            self.reads.llm_calls += spent.calls
            self.reads.generated_tokens += spent.generated_tokens
        return hits

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()

    def _require(self) -> tuple[SharedStore, TemporalMemory]:
        if self._shared is None or self._memory is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._shared, self._memory


def _with_fallback(shared: SharedStore, base: Embedder) -> Embedder:
    """The shared store's cached vectors, and ``base`` for texts it does not hold (a sentence
    an extractor cut out of a statement)."""

    def embed(texts: list[str]) -> list[list[float]]:
        try:
            return shared.embedder.embed_documents(texts)
        except EmbedderError:  # the cache misses a text (the store's KeyError, wrapped)
            return [list(v) for v in base.embed_documents(texts)]

    def embed_query(text: str) -> list[float]:
        try:
            return list(shared.embedder.embed_query(text))
        except EmbedderError:
            return list(base.embed_query(text))

    return CallableEmbedder(
        embed, name=base.name, dimension=base.dimension, embed_query=embed_query
    )


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def _metadata(chunk: Chunk) -> dict[str, Any]:
    metadata: dict[str, Any] = dict(chunk.metadata)
    metadata[CHUNK_KEY] = chunk.id
    if chunk.entity is not None:
        metadata[ENTITY_KEY] = chunk.entity
    return metadata


def _batches(chunks: Sequence[Chunk], size: int) -> list[list[Chunk]]:
    """The chunks as a chat app writes them: each speaker's in time order, ``size`` per batch
    (a batch never mixes speakers; the chat track's ``user_id``, none elsewhere)."""
    by_speaker: dict[str | None, list[Chunk]] = defaultdict(list)
    for chunk in sorted(chunks, key=lambda c: c.recorded_order):
        speaker = chunk.metadata.get(SPEAKER_FIELD)
        by_speaker[None if speaker is None else str(speaker)].append(chunk)
    return [
        said[start : start + size]
        for said in by_speaker.values()
        for start in range(0, len(said), size)
    ]


def _write(memory: TemporalMemory, chunks: Sequence[Chunk], keyed_by_hand: bool) -> list[Added]:
    """One ``add_many`` of ``chunks``: each chunk dated by its ``valid_from`` metadata (the
    memory's metadata extractor reads it), or a Fact with its gold key when keyed by hand."""
    items: list[str | Fact] = []
    for chunk in chunks:
        key = gold_key(chunk) if keyed_by_hand else None
        if key is None:
            items.append(chunk.text)
            continue
        subject, relation, value = key
        items.append(
            Fact(
                text=chunk.text,
                subject=subject,
                relation=relation,
                object=value,
                valid_from=chunk.timestamp,
                namespace=NAMESPACE,
                metadata=_metadata(chunk),
            )
        )
    metadatas = [{**_metadata(chunk), VALID_FROM: chunk.timestamp} for chunk in chunks]
    return memory.add_many(items, metadatas=metadatas, namespace=NAMESPACE)


def _record(chunk: Chunk, added: Added) -> WriteRecord:
    keyed = [w.fact for w in added.writes if w.fact is not None and w.fact.subject is not None]
    # a reinforcing or duplicate write returns the version already stored, with its own date
    fresh = [
        w.fact
        for w in added.writes
        if w.fact is not None
        and w.fact.subject is not None
        and w.decision not in (Decision.REINFORCED, Decision.DUPLICATE)
    ]

    def chunk_of(metadata: Mapping[str, Any]) -> str:
        return str(metadata.get(CHUNK_KEY, "?"))

    return WriteRecord(
        chunk=chunk.id,
        keyed=bool(keyed),
        problem=added.problem,
        decisions=tuple(w.decision for w in added.writes),
        closed=tuple(chunk_of(f.metadata) for f in added.closed),
        corrected=tuple(
            chunk_of(f.metadata)
            for w in added.writes
            if w.decision is Decision.CORRECTED
            for f in w.retired
        ),
        dated_elsewhere=sum(f.valid_from != chunk.timestamp for f in fresh),
        prompt_dated=sum(f.valid_from == PROMPT_EXAMPLE_DATE for f in fresh),
    )


def write_figures(memory: MemoryMethod, dataset: Dataset) -> dict[str, Any]:
    """What a memory method's writes did on ``dataset``: statements keyed, extraction
    problems, closings (across speakers, of multi-valued facts, of another attribute),
    old versions withdrawn as corrections, LLM cost and write rate."""
    chunks = dataset.by_id()
    log = memory.log
    statements = len(log.records)
    closings = [(closed, r.chunk) for r in log.records for closed in r.closed]

    def speakers_differ(pair: tuple[str, str]) -> bool:
        a, b = (chunks.get(i) for i in pair)
        return bool(a and b and a.speaker and b.speaker and a.speaker != b.speaker)

    def multi(pair: tuple[str, str]) -> bool:
        closed = chunks.get(pair[0])
        family = closed.family if closed else None
        return family is not None and str(dataset.cardinalities.get(family, "one")) == "many"

    def collateral(pair: tuple[str, str]) -> bool:
        a, b = (chunks.get(i) for i in pair)
        return bool(a and b and (a.entity, a.family) != (b.entity, b.family))

    stats: LLMStats = log.llm
    return {
        "statements": statements,
        "keyed": sum(r.keyed for r in log.records),
        "extraction_problems": sum(r.problem is not None for r in log.records),
        "closings": len(closings),
        "cross_speaker_closings": sum(map(speakers_differ, closings)),
        "multi_valued_closed": sum(map(multi, closings)),
        "collateral_closings": sum(map(collateral, closings)),
        "corrections_instead_of_closings": sum(len(r.corrected) for r in log.records),
        "dated_not_as_written": sum(r.dated_elsewhere for r in log.records),
        "dated_from_the_prompt": sum(r.prompt_dated for r in log.records),
        "llm_calls": stats.calls,
        "generated_tokens": stats.generated_tokens,
        "llm_calls_per_statement": stats.calls / statements if statements else None,
        "generated_tokens_per_statement": stats.generated_tokens / statements
        if statements
        else None,
        "write_seconds": log.seconds,
        "statements_per_second": statements / log.seconds if log.seconds else None,
    }


def kappa_unavailable(embedder: Embedder) -> str | None:
    """Why the shipped claim judge cannot judge with ``embedder``'s vectors, or None."""
    missing = kappa_missing()
    if missing is not None:
        return f"no prose judge: {missing}"
    frames = FrameCard.read(KAPPA_FOLDER).embedder
    if frames != embedder.name:
        return f"the claim judge reads {frames} vectors, this run embeds with {embedder.name}"
    return None


def kappa_setup(shared: SharedStore) -> WriteSetup:
    """The shipped claim judge at write time; an error when kappa cannot run here."""
    judge = write_time_judge(shared)
    if judge is None:
        raise RuntimeError("kappa cannot run here (the embedded extra, or MiniLM vectors)")
    return WriteSetup(prose_judge=judge)


def keyed_setup(shared: SharedStore) -> WriteSetup:
    """The gold keys written by hand."""
    return WriteSetup(keyed_by_hand=True)


def extraction_setup(llm: CountedLLM) -> Writing:
    """LLMExtractor over ``llm`` (a failed call keeps the text as prose)."""
    from shared_core.judging.llm import LLMExtractor

    def setup(shared: SharedStore) -> WriteSetup:
        return WriteSetup(prose_judge=LLMExtractor(llm, on_error="prose"), llm=llm)

    return setup


def perfect_setup(shared: SharedStore) -> WriteSetup:
    """LLMExtractor over a :class:`PerfectExtractionLLM` of the track."""
    llm = PerfectExtractionLLM(shared.chunks, shared.dataset.cardinalities)
    return extraction_setup(llm)(shared)


def group_setup(llm: CountedLLM) -> Writing:
    """Prose written as it is, read through :class:`LLMGroupDetector` over ``llm`` (a failed
    call drops nothing)."""

    def setup(shared: SharedStore) -> WriteSetup:
        return WriteSetup(detector=LLMGroupDetector(llm, on_error="skip"), llm=llm)

    return setup


def perfect_group_setup(shared: SharedStore) -> WriteSetup:
    """:func:`group_setup` over a :class:`PerfectGroupingLLM` of the track."""
    llm = PerfectGroupingLLM(shared.chunks, shared.dataset.cardinalities)
    return group_setup(llm)(shared)


__all__ = [
    "NAMESPACE",
    "CountedLLM",
    "MemoryMethod",
    "PerfectExtractionLLM",
    "PerfectGroupingLLM",
    "ReadLog",
    "WriteLog",
    "WriteRecord",
    "WriteSetup",
    "extraction_setup",
    "group_setup",
    "kappa_setup",
    "kappa_unavailable",
    "keyed_setup",
    "perfect_group_setup",
    "perfect_setup",
    "write_figures",
]
