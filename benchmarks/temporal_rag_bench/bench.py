"""``temporal-rag bench``: load the datasets, run every method, print the table, write the report.

The command line parses the options (:mod:`shared_core.cli`); this module does the work, so it
can also be called from Python: ``bench(BenchRequest(...), console)``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared_core.embedders.base import Embedder
from temporal_rag_bench.model import Dataset
from temporal_rag_bench.profiles import (
    CHAT,
    DATASETS,
    OBSERVATIONS,
    PROFILES,
    BenchProfile,
    load_datasets,
)
from temporal_rag_bench.registry import method_names, narrow, select_methods
from temporal_rag_bench.report import print_summary, write_report
from temporal_rag_bench.results import environment, scored
from temporal_rag_bench.runner import RunOptions, run_bench
from temporal_rag_bench.shared_collection import Progress

if TYPE_CHECKING:
    from rich.console import Console

Judge = Callable[[str], str]
CHAT_METHODS = ("plain", "emb-recency", "kappa", "keyed-by-hand")
"""The chat track's methods (:mod:`temporal_rag_bench.llm_bench`'s names): plain top-k, the best
recency baseline, the default write-time judge (``prose_judge="kappa"``) and the gold keys
written by hand (the ceiling); bench-llm adds the LLM methods on the same statements."""


class BenchUsageError(ValueError):
    """A request that cannot run as asked (unknown dataset or method, a bad --judge)."""


@dataclass(frozen=True, slots=True)
class BenchRequest:
    """Everything a bench run is asked for (the CLI's options)."""

    command: str
    profile: str = "quick"
    datasets: tuple[str, ...] = DATASETS
    methods: tuple[str, ...] = ()
    out: Path = Path("build") / "bench"
    seed: int = 0
    k: int = 5
    data_dir: Path | None = None
    limit: int | None = None
    judge: str | None = None  # MODULE:NAME of a prompt -> reply callable
    judge_sample: int | None = None  # None: the profile's


def load_judge(spec: str) -> Judge:
    """``MODULE:NAME`` -> the callable it names (a function from prompt to reply text)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise BenchUsageError(f"--judge {spec!r}: expected MODULE:NAME, e.g. my_llms:qwen_judge")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise BenchUsageError(f"--judge {spec!r}: cannot load it ({exc})") from exc
    if not callable(found):
        raise BenchUsageError(f"--judge {spec!r} is a {type(found).__name__}, not a callable")
    judge: Judge = found
    return judge


def bench(
    request: BenchRequest, console: Console, *, embedder: Embedder | None = None
) -> tuple[dict[str, Any], list[Path]]:
    """Run the request; print the table; write the report. Returns (results, files written).
    ``embedder`` defaults to the offline MiniLM (loaded once, before the clock starts)."""
    from rich.text import Text

    profile = PROFILES[request.profile]
    judge = load_judge(request.judge) if request.judge else None
    wanted = request.methods
    selection = select_methods(None, judge=judge)
    known = method_names(selection.methods) | set(CHAT_METHODS)
    unknown = [w for w in wanted if w not in known]
    if unknown:  # fails early, before any data is loaded
        raise BenchUsageError(
            f"unknown method {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    datasets, notes = load_datasets(
        request.datasets,
        profile=profile,
        seed=request.seed,
        data_dir=request.data_dir,
        limit=request.limit,
    )
    notes = notes + selection.notes
    if embedder is None:
        embedder = _loaded_minilm(console)
    options = run_options(request, profile, judge)
    started = time.perf_counter()
    with rich_progress(console) as progress:
        run = run_bench(
            datasets,
            partial(methods_for, wanted=wanted, judge=judge, embedder=embedder),
            embedder,
            options=options,
            progress=progress,
        )
        observations = _observations(request, profile, embedder, progress, notes)
    run.notes.extend(notes)
    meta = _meta(request, embedder, time.perf_counter() - started)
    results = scored(run, meta=meta, seed=request.seed, observations=observations)
    print_summary(console, results)
    written = write_report(results, request.out)
    console.print(Text(f"report: {request.out / 'report.md'} ({len(written)} files)"))
    return results, written


def methods_for(
    dataset: Dataset, *, wanted: Sequence[str], judge: Judge | None, embedder: Embedder
) -> list[Any]:
    """Fresh methods for one dataset, narrowed to ``wanted`` (all when empty). The chat track
    runs :data:`CHAT_METHODS`, written as bench-llm writes it (each statement with its speaker,
    a speaker's statements in time order, a few per ``add_many``); every other dataset the
    built-in methods and the adapters'."""
    if dataset.name == CHAT:
        from temporal_rag_bench.llm_bench import method_factory

        methods = method_factory(CHAT_METHODS, embedder, None)()
    else:
        methods = select_methods(None, judge=judge).methods
    return narrow(methods, wanted, strict=False) if wanted else list(methods)


def run_options(request: BenchRequest, profile: BenchProfile, judge: Judge | None) -> RunOptions:
    """How the methods run: the request's k and seed, the judge, and the questions a
    model-judged method answers (the request's ``judge_sample``, else the profile's)."""
    sample = profile.judge_sample if request.judge_sample is None else request.judge_sample
    return RunOptions(k=request.k, judge=judge, judge_sample=sample, seed=request.seed)


def _observations(
    request: BenchRequest,
    profile: BenchProfile,
    embedder: Embedder,
    progress: Progress,
    notes: list[str],
) -> dict[str, Any] | None:
    """The LoCoMo-observations track with the shipped prose judge, or None (with a note)."""
    if OBSERVATIONS not in request.datasets:
        return None
    data_dir = request.data_dir
    if data_dir is None or not data_dir.is_dir():
        where = "no --data-dir" if data_dir is None else f"{data_dir} does not exist"
        notes.append(f"{OBSERVATIONS}: skipped ({where}; pass --data-dir with the shared data)")
        return None
    from shared_core.detectors.frames import FrameHead
    from shared_core.detectors.kappa import KappaScorer
    from shared_core.judging.claims import claim_judge
    from temporal_rag_bench.methods_temporal import kappa_missing
    from temporal_rag_bench.observations import run_observations

    missing = kappa_missing()
    if missing is not None:
        notes.append(f"{OBSERVATIONS}: skipped (no prose judge: {missing})")
        return None
    started = time.perf_counter()
    found = run_observations(
        data_dir,
        embedder,
        judge=claim_judge(scorer=KappaScorer(), frames=FrameHead()),
        limit=profile.observations,
        seed=request.seed,
        progress=progress,
    )
    return {**found, "seconds": time.perf_counter() - started}


def failures(results: dict[str, Any]) -> list[str]:
    """``dataset/method: message`` for every method that failed."""
    return [
        f"{d['name']}/{m['method']}: {m['note']}"
        for d in results["datasets"]
        for m in d["methods"]
        if m["status"] == "failed"
    ]


def _meta(request: BenchRequest, embedder: Embedder, seconds: float) -> dict[str, Any]:
    return {
        "command": request.command,
        "profile": request.profile,
        "seed": request.seed,
        "k": request.k,
        "datasets": list(request.datasets),
        "methods": list(request.methods),
        "embedder": embedder.name,
        "judge": request.judge,
        "prose_detector": _prose_detector(request),
        "seconds": seconds,  # every track, the observations included
        "environment": environment(),
    }


def _prose_detector(request: BenchRequest) -> str:
    """Which models judge prose in this run (write time and Phi_T), for the report."""
    from shared_core.detectors.frames import FrameCard
    from shared_core.detectors.kappa import KAPPA_FOLDER, KappaCard
    from temporal_rag_bench.methods_temporal import kappa_missing

    missing = kappa_missing()
    if missing is not None:
        return f"none ({missing})"
    card, frames = KappaCard.read(KAPPA_FOLDER), FrameCard.read(KAPPA_FOLDER)
    write_time = (
        f"claims at write time ({frames.name}: states at P >= "
        f"{frames.state_threshold or frames.threshold:.2f}, one attribute at "
        f"{frames.agreement_threshold or frames.threshold:.2f}, "
        f"{card.name} ends at P >= {card.threshold:.2f}"
        + (f", restates at P >= {card.restates_threshold:.2f})" if card.restates_threshold else ")")
    )
    if request.judge:
        return f"LLM judge {request.judge} (Phi_T); {write_time}"
    return f"{write_time}; {card.name} in Phi_T"


def _loaded_minilm(console: Console) -> Embedder:
    from shared_core.embedders.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    with console.status("loading the embedding model (all-MiniLM-L6-v2, offline)"):
        embedder.load()
    return embedder


@contextmanager
def rich_progress(console: Console) -> Iterator[Progress]:
    """A :data:`Progress` factory drawing rich bars (each hidden once complete)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Bars(*columns, console=console, transient=True) as bars:

        def start(description: str, total: int) -> Callable[[int], None]:
            task = bars.add_task(description, total=max(total, 1))
            done = [0]

            def advance(n: int) -> None:
                done[0] += n
                bars.update(task, advance=n, visible=done[0] < total)

            if total <= 0:
                bars.update(task, visible=False)
            return advance

        yield start


def parse_list(text: str, known: Sequence[str] | None = None) -> tuple[str, ...]:
    """``a,b`` -> ("a", "b"); with ``known``, unknown names raise BenchUsageError."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if known is not None:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise BenchUsageError(f"unknown {', '.join(unknown)}; known: {', '.join(known)}")
    return names
