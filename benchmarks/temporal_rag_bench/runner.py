"""Run every method on every dataset, in one process and one run, and keep what they returned.

Per dataset: one :class:`SharedStore` (every chunk embedded once, one plain Chroma collection),
then per method: ingest (timed), every question answered at its time with the same k (read
latency: ``time.perf_counter`` around ``retrieve`` only), and, for the methods that have it,
the bag-of-facts mode (an entity's whole bag as the candidates, retrieval taken out).
Scoring is :mod:`temporal_rag_bench.metrics`' job, done by :mod:`temporal_rag_bench.report`.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from shared_core.embedders.base import Embedder
from temporal_rag_bench.model import Dataset, Question, Retrieved, Track
from temporal_rag_bench.registry import family_of
from temporal_rag_bench.shared_collection import (
    Progress,
    SharedStore,
    VectorCache,
    chroma_client,
    no_progress,
    question_time,
)

BAG_FAMILIES = ("plain", "phi-t", "supersession+phi-t")
"""Methods run in bag-of-facts mode (buffer off): the reference and the two Phi_T methods."""
WARM_UP = 5
"""Questions every method answers untimed (and discarded) before the timed pass."""


@dataclass(slots=True)
class MethodRun:
    """One method on one dataset: what it returned per question id, and its costs."""

    method: str
    family: str
    buffered: bool
    real_class: str | None
    description: str
    status: str = "ok"  # "ok", "not run" or "failed"
    note: str = ""
    ingest_seconds: float = 0.0
    answers: dict[str, Retrieved] = field(default_factory=dict)
    bag: dict[str, Retrieved] = field(default_factory=dict)
    sampled: bool = False  # answered a sample of the questions only (a model judges each read)
    writes: dict[str, Any] | None = None  # what its writes did, for a method that reports it


@dataclass(slots=True)
class DatasetRun:
    """Every method's run on one dataset, with the shared store's costs."""

    dataset: Dataset
    embed_seconds: float = 0.0
    index_seconds: float = 0.0
    seconds: float = 0.0  # the dataset's wall time: embedding, every method, the detector
    methods: list[MethodRun] = field(default_factory=list)
    detector: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run: k, the bag-of-facts mode, the LLM judge (a ``str -> str`` callable) and
    how many questions / entity bags it is asked about, the seed."""

    k: int = 5
    bag: bool = True
    judge: Callable[[str], str] | None = None
    judge_sample: int = 40
    judge_bags: int = 10
    seed: int = 0


def run_dataset(
    dataset: Dataset,
    methods: Sequence[Any],
    embedder: Embedder,
    *,
    options: RunOptions,
    client: Any,
    workdir: Path,
    cache: VectorCache,
    progress: Progress = no_progress,
) -> DatasetRun:
    """Every method on one dataset: each ingests (timed), then all answer the questions
    interleaved (see :func:`ask_interleaved`), then the bag-of-facts mode runs."""
    started = time.perf_counter()
    store = SharedStore(
        dataset,
        embedder,
        client=client,
        name=dataset.name,
        workdir=workdir,
        progress=progress,
        cache=cache,
        k=options.k,
    )
    result = DatasetRun(dataset, store.embed_seconds, store.index_seconds)
    active: list[_Active] = []
    try:
        for method in methods:
            run, ready = prepare(method, dataset, store, options)
            result.methods.append(run)
            if ready is not None:
                active.append(ready)
        ask_interleaved(active, dataset, options, progress)
        for ready in active:
            _guarded(ready, partial(_ask_bag, dataset=dataset, options=options, progress=progress))
        result.detector = detector_report(dataset, result, options)
    finally:
        for ready in active:
            close = getattr(ready.method, "close", None)
            if close is not None:
                close()
        store.close()
    result.seconds = time.perf_counter() - started
    return result


@dataclass(slots=True)
class _Active:
    """A method that ingested the dataset, the questions it answers, and its record."""

    method: Any
    run: MethodRun
    questions: set[str]


def prepare(
    method: Any, dataset: Dataset, store: SharedStore, options: RunOptions
) -> tuple[MethodRun, _Active | None]:
    """A method's record and, if it runs, the method after ingesting (timed), with what its
    writes did when it reports that (``write_figures(dataset)``). A failure is recorded with
    its message, never hidden."""
    run = MethodRun(
        method=method.name,
        family=family_of(method),
        buffered=bool(getattr(method, "buffer", 0)),
        real_class=getattr(method, "real_class", None),
        description=str(getattr(method, "description", "")),
    )
    skip: Callable[[Dataset], str | None] | None = getattr(method, "skip_reason", None)
    reason = skip(dataset) if skip is not None else None
    if reason is not None:
        run.status, run.note = "not run", reason
        return run, None
    questions = list(dataset.questions)
    judges_reads = getattr(method, "judges_reads", None)
    if judges_reads is not None and judges_reads(dataset):
        questions = judge_sample(questions, options.judge_sample, seed=options.seed)
        run.sampled = True
    ready = _Active(method, run, {q.id for q in questions})

    def ingest(active: _Active) -> None:
        started = time.perf_counter()
        method.ingest(dataset, store)
        built = getattr(method, "ingest_seconds", None)
        run.ingest_seconds = built if built is not None else time.perf_counter() - started
        figures: Callable[[Dataset], dict[str, Any]] | None = getattr(method, "write_figures", None)
        if figures is not None:
            run.writes = figures(dataset)

    return run, ready if _guarded(ready, ingest) else None


def _guarded(active: _Active, work: Callable[[_Active], None]) -> bool:
    """Run ``work``; on an exception mark the method failed (and return False)."""
    if active.run.status != "ok":
        return False
    try:
        work(active)
    except Exception as exc:
        active.run.status, active.run.note = "failed", f"{type(exc).__name__}: {exc}"
        active.run.answers.clear()
        return False
    return True


def ask_interleaved(
    active: Sequence[_Active], dataset: Dataset, options: RunOptions, progress: Progress
) -> None:
    """Every method answers every question, question by question, in a seeded random order
    per question, so that each method meets the same machine state (caches, load, the
    method before it) on average.
    A few questions are asked first, untimed and discarded, to warm every method up."""
    questions = dataset.questions
    for question in questions[:WARM_UP]:
        for ready in active:
            if question.id in ready.questions:
                _guarded(ready, partial(_answer, question=question, k=options.k, dataset=dataset))
    for ready in active:
        ready.run.answers.clear()
    advance = progress(f"{dataset.name}: {len(active)} methods", len(questions))
    order = random.Random(options.seed)
    for question in questions:
        for ready in order.sample(list(active), len(active)):
            if question.id in ready.questions:
                _guarded(ready, partial(_answer, question=question, k=options.k, dataset=dataset))
        advance(1)


def _answer(active: _Active, question: Question, k: int, dataset: Dataset) -> None:
    active.run.answers[question.id] = timed(active.method, question, k, dataset)


def _ask_bag(active: _Active, dataset: Dataset, options: RunOptions, progress: Progress) -> None:
    """Bag-of-facts mode for the methods that have it (buffer off)."""
    run, bag = active.run, getattr(active.method, "bag", None)
    if not options.bag or bag is None or run.family not in BAG_FAMILIES or run.buffered:
        return
    if dataset.score_by_evidence:
        return  # an entity is a whole conversation there: nothing to isolate
    supports_bag = getattr(active.method, "supports_bag", None)
    if supports_bag is not None and not supports_bag(dataset):
        return
    asked = [q for q in dataset.questions if q.entity is not None and q.id in active.questions]
    advance = progress(f"{dataset.name}: {run.method} (bag of facts)", len(asked))
    for question in asked:
        run.bag[question.id] = bag(question, options.k, now=question_time(question, dataset))
        advance(1)


def timed(method: Any, question: Question, k: int, dataset: Dataset) -> Retrieved:
    """``method.retrieve`` with its wall-clock read latency (perf_counter around it only)."""
    now = question_time(question, dataset)
    started = time.perf_counter()
    retrieved: Retrieved = method.retrieve(question, k, now=now)
    return replace(retrieved, seconds=time.perf_counter() - started)


def judge_sample(questions: Sequence[Question], size: int, *, seed: int) -> list[Question]:
    """A seeded sample of questions (in dataset order) for methods that call a model on each
    read (the LLM judge, kappa)."""
    if size >= len(questions):
        return list(questions)
    chosen = set(random.Random(seed).sample(range(len(questions)), size))
    return [q for i, q in enumerate(questions) if i in chosen]


def detector_report(dataset: Dataset, run: DatasetRun, options: RunOptions) -> dict[str, Any]:
    """Detector precision and recall against the ground truth: the key detector on the keyed
    track (bags and plain top-k's sets), the LLM judge on a sample of the prose track's bags."""
    from temporal_rag_bench.detector_eval import judge_report, key_detector_report

    if dataset.track is Track.KEYED:
        plain = next((m for m in run.methods if m.method == "plain" and m.status == "ok"), None)
        return key_detector_report(dataset, plain.answers if plain else None)
    if options.judge is not None and not dataset.score_by_evidence:
        return judge_report(dataset, options.judge, bags=options.judge_bags, seed=options.seed)
    return {}


@dataclass(slots=True)
class BenchRun:
    """A whole run: its datasets and notes (skipped datasets and methods)."""

    datasets: list[DatasetRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_bench(
    datasets: Sequence[Dataset],
    methods_for: Callable[[Dataset], Sequence[Any]],
    embedder: Embedder,
    *,
    options: RunOptions,
    progress: Progress = no_progress,
) -> BenchRun:
    """Every method (fresh instances per dataset, from ``methods_for(dataset)``) on every
    dataset, one Chroma client and one vector cache for the whole run."""
    run = BenchRun()
    client = chroma_client()
    cache = VectorCache()
    with tempfile.TemporaryDirectory(prefix="temporal-rag-bench-") as folder:
        for dataset in datasets:
            run.datasets.append(
                run_dataset(
                    dataset,
                    methods_for(dataset),
                    embedder,
                    options=options,
                    client=client,
                    workdir=Path(folder),
                    cache=cache,
                    progress=progress,
                )
            )
    return run
