"""``make bench-llm``: write-time extraction with a real local LLM, measured end to end.

On each track (:mod:`temporal_rag_bench.llm_tracks`) every method ingests the prose
(:mod:`temporal_rag_bench.llm_methods` for the memories; plain top-k and the best recency
baseline from the main bench) and answers the questions at k; the bench's own scoring gives
clean@k, stale-leak, static retention against plain and as-of accuracy. The write logs give
the statements keyed, the extractor's problems, old versions withdrawn as corrections instead
of closed, closings across speakers and of multi-valued facts, LLM calls and generated tokens
per statement and statements/s. Then the local model answers every CURRENT and STATIC question
from each method's top-k (:mod:`temporal_rag_bench.answers`): correct / stale / other per N,
the Majority Vote Trap curve. At the full size, LoCoMo's observations are written through the
LLM extractor too: the share closed, and sampled closings printed to read by hand. The
read-time method (``llm-groups``: the LLM group detector over the stored prose) reports its
reads' LLM calls and tokens per question instead.

``python -m temporal_rag_bench.llm_bench --size smoke|default|full --model PATH.gguf`` (the
model: ``--model``, else ``$TEMPORAL_RAG_LOCAL_LLM``); writes ``report.md`` and
``results.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from shared_core.embedders.base import Embedder
from temporal_rag_bench.answers import Answered, Answerer, Verdict, curve
from temporal_rag_bench.chat import ChatSize
from temporal_rag_bench.cli import DATA_ENV, data_dir
from temporal_rag_bench.llm_methods import (
    NAMESPACE,
    CountedLLM,
    MemoryMethod,
    extraction_setup,
    group_setup,
    kappa_setup,
    kappa_unavailable,
    keyed_setup,
    perfect_group_setup,
    perfect_setup,
    write_figures,
)
from temporal_rag_bench.llm_tracks import TrackSize, load_tracks
from temporal_rag_bench.methods import EmbeddingRecency, PlainTopK
from temporal_rag_bench.metrics import score_all, static_retention, summarize
from temporal_rag_bench.model import Dataset, QuestionKind
from temporal_rag_bench.runner import DatasetRun, RunOptions, run_dataset
from temporal_rag_bench.shared_collection import VectorCache, chroma_client

MODEL_ENV = "TEMPORAL_RAG_LOCAL_LLM"
K = 5
PLAIN = "plain"
RECENCY = "emb-recency"  # the best recency baseline of the main bench (benchmarks/README.md)
KAPPA = "kappa"
EXTRACTION = "llm-extraction"
KEYED = "keyed-by-hand"
PERFECT = "llm-extraction (perfect fake)"
GROUPS = "llm-groups"
PERFECT_GROUPS = "llm-groups (perfect fake)"
METHODS = (PLAIN, RECENCY, KAPPA, EXTRACTION, KEYED, PERFECT, GROUPS, PERFECT_GROUPS)
LOCOMO_SAMPLE = 50


@dataclass(frozen=True, slots=True)
class BenchLLMSize:
    """A size of the run: the tracks, and how many LoCoMo observations go through the
    extractor (0: the LoCoMo part does not run)."""

    name: str
    tracks: TrackSize
    locomo_statements: int = 0


SIZES = {
    "smoke": BenchLLMSize(
        "smoke",
        TrackSize(
            situatedqa={3: 1},
            situatedqa_static=1,
            synthetic_ratios=(),
            synthetic_distractors=0,
            chat=None,
        ),
    ),
    "default": BenchLLMSize(
        "default",
        TrackSize(
            situatedqa={3: 12},
            situatedqa_static=4,
            synthetic_ratios=(1, 10),
            synthetic_distractors=0,
            chat=ChatSize(
                speakers=2, changes=(1, 3), singles=1, multis=1, statics=1, distractors=1
            ),
        ),
    ),
    "full": BenchLLMSize(
        "full",
        TrackSize(
            situatedqa={1: 4, 3: 12, 10: 2},
            situatedqa_static=8,
            synthetic_ratios=(1, 3, 10),
            synthetic_distractors=4,
            chat=ChatSize(
                speakers=3, changes=(1, 3, 10), singles=2, multis=1, statics=1, distractors=2
            ),
        ),
        locomo_statements=150,
    ),
}
"""smoke: a few minutes' check of the wiring (SituatedQA, one fact at N = 3 and a static one);
default: 12 SituatedQA facts at N = 3, sized for 30 minutes at one thread (42 measured on
a loaded 2-core machine, benchmarks/README.md); full:
more of every track and 150 LoCoMo observations (over an hour)."""


@dataclass(frozen=True, slots=True)
class LocalModels:
    """The local model as each LLM method asks it: ``judge`` for write-time extraction and
    ``groups`` for the read-time group detector (each may constrain its answers to its own
    JSON schema)."""

    judge: CountedLLM
    groups: CountedLLM


def method_factory(
    names: Sequence[str], embedder: Embedder, llm: LocalModels | None
) -> Callable[[], list[Any]]:
    """Fresh method instances per track: the ``names`` of :data:`METHODS` (``llm-extraction``
    and ``llm-groups`` only with the local ``llm``)."""

    def memory(name: str, description: str, setup: Any, **options: Any) -> MemoryMethod:
        return MemoryMethod(name, description, setup, embedder=embedder, **options)

    def build() -> list[Any]:
        out: list[Any] = []
        for name in names:
            if name == PLAIN:
                out.append(PlainTopK())
            elif name == RECENCY:
                out.append(EmbeddingRecency())
            elif name == KAPPA:
                out.append(
                    memory(
                        KAPPA,
                        'prose_judge="kappa" (the claim judge)',
                        kappa_setup,
                        unavailable=kappa_unavailable,
                    )
                )
            elif name == EXTRACTION and llm is not None:
                out.append(
                    memory(
                        EXTRACTION,
                        "LLMExtractor over the local model (the write-time judge)",
                        extraction_setup(llm.judge),
                    )
                )
            elif name == KEYED:
                out.append(memory(KEYED, "the track's gold keys, written by hand", keyed_setup))
            elif name == PERFECT:
                out.append(memory(PERFECT, "LLMExtractor over a perfect fake LLM", perfect_setup))
            elif name == GROUPS and llm is not None:
                out.append(
                    memory(GROUPS, "LLMGroupDetector over the local model", group_setup(llm.groups))
                )
            elif name == PERFECT_GROUPS:
                out.append(
                    memory(
                        PERFECT_GROUPS,
                        "LLMGroupDetector over a perfect fake LLM",
                        perfect_group_setup,
                    )
                )
        return out

    return build


@dataclass(slots=True)
class TrackResult:
    """One track's run, its methods' write logs and their answers."""

    run: DatasetRun
    writes: dict[str, MemoryMethod] = field(default_factory=dict)
    answers: dict[str, list[Answered]] = field(default_factory=dict)


def run_tracks(
    tracks: Sequence[Dataset],
    embedder: Embedder,
    *,
    methods: Callable[[], list[Any]],
    answerer: Answerer | None,
    k: int = K,
    seed: int = 0,
    log: TextIO = sys.stderr,
) -> list[TrackResult]:
    """Every method on every track (fresh instances per track), then the answers."""
    results: list[TrackResult] = []
    client = chroma_client()
    cache = VectorCache()
    options = RunOptions(k=k, bag=False, seed=seed)
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as folder:
        for dataset in tracks:
            built = methods()
            started = time.perf_counter()
            print(
                f"[bench-llm] {dataset.name}: {len(dataset.chunks)} statements, "
                f"{len(dataset.questions)} questions, {len(built)} methods",
                file=log,
                flush=True,
            )
            run = run_dataset(
                dataset,
                built,
                embedder,
                options=options,
                client=client,
                workdir=Path(folder),
                cache=cache,
            )
            result = TrackResult(run, {m.name: m for m in built if isinstance(m, MemoryMethod)})
            for method in run.methods:
                if method.status != "ok":
                    print(
                        f"[bench-llm]   {method.method}: {method.status}: {method.note}", file=log
                    )
            if answerer is not None:
                result.answers = _answers(dataset, run, answerer, k)
            print(
                f"[bench-llm] {dataset.name}: {time.perf_counter() - started:.0f} s",
                file=log,
                flush=True,
            )
            results.append(result)
    return results


def _answers(
    dataset: Dataset, run: DatasetRun, answerer: Answerer, k: int
) -> dict[str, list[Answered]]:
    asked = [q for q in dataset.questions if q.kind in (QuestionKind.CURRENT, QuestionKind.STATIC)]
    out: dict[str, list[Answered]] = {}
    for method in run.methods:
        if method.status != "ok":
            continue
        out[method.method] = [
            answerer.answer(q, method.answers[q.id].chunks[:k])
            for q in asked
            if q.id in method.answers
        ]
    return out


def read_figures(memory: MemoryMethod) -> dict[str, Any] | None:
    """What a method's read-time detector cost: questions, LLM calls and generated tokens
    per question, seconds per question, and its own counters (malformed answers, ignored and
    unsure groups, cache hits); None for a method without one."""
    if memory.detector is None:
        return None
    reads = memory.reads
    asked = reads.questions
    figures: dict[str, Any] = {
        "questions": asked,
        "llm_calls": reads.llm_calls,
        "generated_tokens": reads.generated_tokens,
        "llm_calls_per_question": reads.llm_calls / asked if asked else None,
        "generated_tokens_per_question": reads.generated_tokens / asked if asked else None,
        "seconds_per_question": reads.seconds / asked if asked else None,
    }
    stats = getattr(memory.detector, "stats", None)
    for name in ("cache_hits", "errors", "malformed", "groups_ignored", "unsure"):
        value = getattr(stats, name, None)
        if isinstance(value, int):
            figures[name] = value
    return figures


def track_figures(result: TrackResult, k: int) -> dict[str, Any]:
    """A track's figures per method (JSON-ready)."""
    dataset = result.run.dataset
    scores = {
        m.method: score_all(dataset, m.answers, k=k) for m in result.run.methods if m.status == "ok"
    }
    methods: dict[str, Any] = {}
    for run in result.run.methods:
        entry: dict[str, Any] = {
            "status": run.status,
            "note": run.note,
            "description": run.description,
        }
        if run.status == "ok":
            summary = summarize(run.method, scores[run.method])
            entry["summary"] = summary.to_dict()
            if PLAIN in scores:
                entry["static_retention"] = static_retention(
                    run.method, scores[run.method], PLAIN, scores[PLAIN]
                ).to_dict()
            if run.method in result.writes:
                entry["writes"] = write_figures(result.writes[run.method], dataset)
                reads = read_figures(result.writes[run.method])
                if reads is not None:
                    entry["reads"] = reads
            answers = result.answers.get(run.method, [])
            entry["answers"] = {
                group: {v: w.to_dict() for v, w in cells.items()}
                for group, cells in curve(answers).items()
            }
            static = [a for a in answers if a.kind is QuestionKind.STATIC]
            entry["static_answers_correct"] = [
                sum(a.verdict is Verdict.CORRECT for a in static),
                len(static),
            ]
            entry["answer_samples"] = [
                {"question": a.question, "n": a.n, "answer": a.answer, "verdict": a.verdict.value}
                for a in answers
            ]
        methods[run.method] = entry
    return {
        "name": dataset.name,
        "description": dataset.description,
        "statements": len(dataset.chunks),
        "questions": dict(_count(q.kind.value for q in dataset.questions)),
        "methods": methods,
    }


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return out


def locomo_closings(
    data_dir: Path | str,
    embedder: Embedder,
    llm: CountedLLM,
    *,
    statements: int,
    sample: int = LOCOMO_SAMPLE,
    seed: int = 0,
    log: TextIO = sys.stderr,
) -> dict[str, Any]:
    """LoCoMo's observations through the LLM extractor, session by session (one namespace per
    conversation, ``valid_from`` the session's date), at most ``statements`` of them: the share
    of statements closed and a seeded sample of closings (closed, by)."""
    from shared_core.judging.llm import LLMExtractor
    from shared_core.memory import MemoryConfig, TemporalMemory
    from temporal_rag_bench.observations import load_observations

    conversations = load_observations(data_dir)
    closings: list[dict[str, str]] = []
    written = 0
    before = llm.stats
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-llm-locomo-") as folder:
        config = MemoryConfig(embedder=embedder, prose_judge=LLMExtractor(llm, on_error="prose"))
        with TemporalMemory.open(Path(folder), config=config) as memory:
            for conversation in conversations:
                for session in conversation.sessions:
                    room = statements - written
                    if room <= 0:
                        break
                    texts = [o.text for o in session.observations][:room]
                    added = memory.add_many(
                        texts, namespace=conversation.id, valid_from=session.date
                    )
                    written += len(texts)
                    closings += [
                        {"conversation": conversation.id, "closed": fact.text, "by": item.text}
                        for item in added
                        for fact in item.closed
                    ]
                    print(
                        f"[bench-llm] locomo: {written}/{statements} statements",
                        file=log,
                        flush=True,
                    )
                if written >= statements:
                    break
    seconds = time.perf_counter() - started
    drawn = random.Random(seed).sample(closings, min(sample, len(closings)))
    return {
        "statements": written,
        "closed": len(closings),
        "closed_share": len(closings) / written if written else 0.0,
        "seconds": seconds,
        "llm_calls": llm.stats.since(before).calls,
        "sampled": len(drawn),
        "sample_asked": sample,
        "samples": drawn,
    }


# --------------------------------------------------------------------------- report


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def _interval(summary: dict[str, Any], name: str) -> str:
    item = summary.get(name)
    if not item:
        return "-"
    return f"{item['estimate']:.2f}"


def tables(results: dict[str, Any]) -> str:
    """The report's tables (Markdown)."""
    lines: list[str] = []
    for track in results["tracks"]:
        lines += [
            f"### {track['name']}",
            "",
            f"{track['description']}; {track['statements']} statements; "
            f"questions {track['questions']}",
            "",
            f"| method | clean@{results['k']} | stale-leak | static vs plain (pt) | as-of | keyed "
            "| problems | closings (x-speaker / multi / collateral) | corrections "
            "| prompt-dated "
            "| LLM calls/stmt | tokens/stmt | stmt/s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, entry in track["methods"].items():
            if entry["status"] != "ok":
                lines.append(f"| {name} | {entry['status']}: {entry['note']} |" + " |" * 11)
                continue
            s = entry["summary"]
            retention = entry.get("static_retention")
            w = entry.get("writes")
            cells = [
                name,
                _interval(s, "clean"),
                _interval(s, "stale_leak"),
                f"{retention['difference_points']:+.1f}" if retention and retention["n"] else "-",
                _interval(s, "as_of_accuracy"),
            ]
            if w:
                cells += [
                    f"{w['keyed']}/{w['statements']}",
                    str(w["extraction_problems"]),
                    f"{w['closings']} ({w['cross_speaker_closings']} / "
                    f"{w['multi_valued_closed']} / {w['collateral_closings']})",
                    str(w["corrections_instead_of_closings"]),
                    f"{w['dated_from_the_prompt']} of {w['dated_not_as_written']}",
                    _pct(w["llm_calls_per_statement"]),
                    f"{w['generated_tokens_per_statement']:.0f}"
                    if w["generated_tokens_per_statement"] is not None
                    else "-",
                    f"{w['statements_per_second']:.2f}" if w["statements_per_second"] else "-",
                ]
            else:
                cells += ["-"] * 8
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        read = {name: e["reads"] for name, e in track["methods"].items() if e.get("reads")}
        if read:
            lines += [
                "Read-time LLM cost (the write columns above count writes only):",
                "",
                "| method | questions | LLM calls/question | tokens/question | s/question "
                "| cache hits | malformed | groups ignored / unsure |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |",
            ]
            for name, r in read.items():
                cells = [
                    name,
                    str(r["questions"]),
                    _pct(r["llm_calls_per_question"]),
                    _pct(r["generated_tokens_per_question"]),
                    _pct(r["seconds_per_question"]),
                    str(r.get("cache_hits", "-")),
                    str(r.get("malformed", "-")),
                    f"{r.get('groups_ignored', '-')} / {r.get('unsure', '-')}",
                ]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        groups = sorted(
            {g for e in track["methods"].values() for g in e.get("answers", {})},
            key=lambda g: (g == "all", int(g[2:]) if g != "all" else 0),
        )
        if groups:
            lines += [
                "Answers from the top-k (correct / stale / other, Wilson 95%):",
                "",
                "| method | " + " | ".join(groups) + " | static correct |",
                "| --- |" + " --- |" * (len(groups) + 1),
            ]
            for name, entry in track["methods"].items():
                answers = entry.get("answers")
                if answers is None:
                    continue
                cells = [name]
                for group in groups:
                    cell = answers.get(group)
                    if cell is None:
                        cells.append("-")
                        continue
                    n = cell["correct"]["n"]
                    correct, stale, other = (
                        cell[v]["count"] for v in ("correct", "stale", "other")
                    )
                    cells.append(
                        f"{correct} / {stale} / {other} of {n}"
                        f" (stale [{cell['stale']['low']:.2f}, {cell['stale']['high']:.2f}])"
                    )
                correct, total = entry["static_answers_correct"]
                cells.append(f"{correct}/{total}")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    locomo = results.get("locomo")
    if locomo is not None:
        lines += [
            "### LoCoMo observations through the LLM extractor",
            "",
            f"{locomo['statements']} statements, {locomo['closed']} closed "
            f"({100 * locomo['closed_share']:.1f}%), {locomo['seconds']:.0f} s; "
            f"{locomo['sampled']} of the {locomo['sample_asked']} sampled closings asked for:",
            "",
        ]
        lines += [f'- closed "{s["closed"]}" by "{s["by"]}"' for s in locomo["samples"]]
        lines.append("")
    return "\n".join(lines)


def report(results: dict[str, Any]) -> str:
    meta = results["meta"]
    head = [
        "# bench-llm",
        "",
        f"size `{meta['size']}`, model `{meta['model']}` (threads {meta['threads']}), "
        f"k = {results['k']}, "
        f"seed {meta['seed']}; wall time {meta['wall_seconds']:.0f} s; "
        f"answer prompts asked {meta['answer_prompts']}.",
        "",
        *(f"- {note}" for note in results["notes"]),
        "",
    ]
    return "\n".join(head) + tables(results)


def bench_llm(
    size: BenchLLMSize,
    *,
    data_dir: Path | str | None,
    out: Path,
    embedder: Embedder,
    llm: LocalModels | None,
    answer_llm: Callable[[str], str] | None,
    model_name: str,
    threads: int | None,
    methods: Sequence[str] = METHODS,
    tracks: Sequence[str] | None = None,
    seed: int = 0,
    k: int = K,
    log: TextIO = sys.stderr,
) -> dict[str, Any]:
    """The whole run: tracks (only those named in ``tracks`` when given), answers, LoCoMo at
    the full size; writes report.md and results.json under ``out`` and returns the results."""
    started = time.perf_counter()
    datasets, notes = load_tracks(size.tracks, data_dir=data_dir, seed=seed)
    if tracks is not None:
        datasets = [d for d in datasets if d.name in tracks]
    answerer = Answerer(answer_llm) if answer_llm is not None else None
    if llm is None and EXTRACTION in methods:
        notes.append("llm-extraction not run: no model")
    if llm is None and GROUPS in methods:
        notes.append("llm-groups not run: no model")
    results = run_tracks(
        datasets,
        embedder,
        methods=method_factory(methods, embedder, llm),
        answerer=answerer,
        k=k,
        seed=seed,
        log=log,
    )
    payload: dict[str, Any] = {
        "k": k,
        "namespace": NAMESPACE,
        "tracks": [track_figures(r, k) for r in results],
        "notes": notes,
    }
    if size.locomo_statements and llm is not None and data_dir is not None:
        try:
            payload["locomo"] = locomo_closings(
                data_dir,
                embedder,
                llm.judge,
                statements=size.locomo_statements,
                seed=seed,
                log=log,
            )
            notes.append(
                f"LoCoMo: the first {size.locomo_statements} observations only (the time budget)"
            )
        except Exception as exc:  # the data may be absent: say so, keep the rest
            notes.append(f"LoCoMo observations not run: {type(exc).__name__}: {exc}")
    payload["meta"] = {
        "size": size.name,
        "model": model_name,
        "threads": threads,
        "seed": seed,
        "wall_seconds": time.perf_counter() - started,
        "answer_prompts": answerer.distinct_prompts if answerer else 0,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    (out / "report.md").write_text(report(payload), encoding="utf-8")
    return payload


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench-llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument(
        "--model", default=os.environ.get(MODEL_ENV), help=f"a GGUF file (default ${MODEL_ENV})"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", help=f"SituatedQA and LoCoMo's folder (default ${DATA_ENV})")
    parser.add_argument("--out", type=Path, default=Path("build/bench-llm"))
    parser.add_argument("--tracks", help="a comma-separated subset of the tracks (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=K)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if not args.model or not Path(args.model).is_file():
        print(
            f"bench-llm: no GGUF model at {args.model!r}: run `make local-llm` (it assembles "
            f"build/models/<name>.gguf) or pass --model / set ${MODEL_ENV}",
            file=sys.stderr,
        )
        return 2
    from contextlib import ExitStack

    from shared_core.detectors.llm_groups import GROUPS_SCHEMA
    from shared_core.embedders.minilm import MiniLMEmbedder
    from shared_core.judging.llm_format import ANSWER_SCHEMA
    from shared_core.llms import LocalLLM

    embedder = MiniLMEmbedder()
    embedder.load()
    with ExitStack() as stack:
        # one model file, three contexts: answers free, the judge's and the detector's answers
        # constrained to their JSON schemas (the weights are memory-mapped once)
        def local(schema: dict[str, Any] | None) -> LocalLLM:
            model = LocalLLM(
                args.model, threads=args.threads, n_ctx=4096, max_tokens=512, json_schema=schema
            )
            return stack.enter_context(model)

        llm = local(None)
        models = LocalModels(judge=local(ANSWER_SCHEMA), groups=local(GROUPS_SCHEMA))
        results = bench_llm(
            SIZES[args.size],
            data_dir=data_dir(args.data_dir),
            out=args.out,
            embedder=embedder,
            llm=models,
            answer_llm=llm,
            model_name=llm.name,
            threads=args.threads,
            tracks=args.tracks.split(",") if args.tracks else None,
            seed=args.seed,
            k=args.k,
        )
    print(tables(results))
    for note in results["notes"]:
        print(f"note: {note}")
    print(f"report: {args.out / 'report.md'}; wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
