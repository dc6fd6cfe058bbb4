"""The bench report: a table in the terminal, and a folder with report.md, PNG plots and
results.json (see :mod:`temporal_rag_bench.results` for the figures).

Rich is imported only inside the functions that draw (as in :mod:`shared_core.render`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporal_rag_bench.methods import FETCH_FACTOR, HALF_LIFE_FRACTION, MULTI_FACTOR_WEIGHTS
from temporal_rag_bench.methods_temporal import BUFFER_SIZE
from temporal_rag_bench.registry import OURS
from temporal_rag_bench.results import HEADLINE_RATIOS, headline, rate, ratio_cell

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

COLUMNS = (
    "method",
    "clean@k",
    *(f"N={n}" for n in HEADLINE_RATIOS),
    "stale-leak",
    "static",
    "vs plain",
    "as-of",
    "p50 ms",
    "x plain",
)


def fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def method_row(method: dict[str, Any]) -> list[str]:
    """One method's cells in :data:`COLUMNS` order (its status when it did not run)."""
    name = method["method"] + (" *" if method.get("real_class") else "")
    if method["status"] != "ok":
        return [name, method["status"], *[""] * (len(COLUMNS) - 2)]
    summary = method["summary"]
    retention = method.get("retention") or {}
    points = retention.get("difference_points")
    static = headline(method, "static_hit")
    versus = "—" if static is None or points is None else f"{points:+.1f} pt"
    ratio = method.get("latency_ratio")
    return [
        name + (" (sample)" if method.get("sampled") else ""),
        fraction(headline(method, "clean")),
        *(fraction(rate(method, ratio_cell(n))) for n in HEADLINE_RATIOS),
        fraction(headline(method, "stale_leak")),
        fraction(static),
        versus,
        fraction(headline(method, "as_of_accuracy")),
        f"{summary['latency_p50'] * 1000:.2f}",
        "—" if ratio is None else f"{ratio:.2f}",
    ]


def dataset_table(dataset: dict[str, Any], k: int) -> Table:
    """The terminal table of one dataset: methods x key figures."""
    from rich import box
    from rich.table import Table

    title = (
        f"{dataset['name']} ({dataset['track']}): {dataset['chunks']} chunks, "
        f"{dataset['questions']} questions, k={k}, {dataset.get('seconds', 0.0):.0f} s"
    )
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for column in COLUMNS:
        table.add_column(column, no_wrap=True, justify="left" if column == "method" else "right")
    for method in dataset["methods"]:
        table.add_row(*method_row(method), style="bold" if method["method"] == OURS else None)
    return table


CHANGED_COLUMNS = (
    "method",
    "clean@k",
    "stale-leak",
    "vs plain",
    "as-of",
    "keyed",
    "closed",
    "x-speaker",
    "multi",
    "other attr",
    "stmt/s",
)


def changed_rows(dataset: dict[str, Any]) -> list[list[str]]:
    """The chat track's changed attributes (CURRENT questions of single-valued attributes)
    per method, and what a memory's writes did; no rows for a dataset without them."""
    rows = []
    for method in dataset["methods"]:
        changed = method.get("changed")
        if method["status"] != "ok" or changed is None:
            continue
        retention = method.get("retention") or {}
        points = retention.get("difference_points")
        w = method.get("writes")
        writes = (
            [
                f"{w['keyed']}/{w['statements']}",
                str(w["closings"]),
                str(w["cross_speaker_closings"]),
                str(w["multi_valued_closed"]),
                str(w["collateral_closings"]),
                "—" if not w["statements_per_second"] else f"{w['statements_per_second']:.1f}",
            ]
            if w
            else ["—"] * 6
        )
        rows.append(
            [
                method["method"],
                fraction(changed["clean"]["estimate"]),
                fraction(changed["leak"]["estimate"]),
                "—" if points is None else f"{points:+.1f} pt",
                fraction(headline(method, "as_of_accuracy")),
                *writes,
            ]
        )
    return rows


def changed_table(dataset: dict[str, Any], k: int) -> Table | None:
    """The terminal table of :func:`changed_rows` (None when there are none)."""
    from rich import box
    from rich.table import Table

    rows = changed_rows(dataset)
    if not rows:
        return None
    n = next(m["changed"]["n"] for m in dataset["methods"] if m.get("changed"))
    title = f"{dataset['name']}: changed attributes ({n} questions), k={k}; writes"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for column in CHANGED_COLUMNS:
        table.add_column(column, no_wrap=True, justify="left" if column == "method" else "right")
    for row in rows:
        table.add_row(*row)
    return table


def wall_times(results: dict[str, Any]) -> str:
    """Every track's wall time, one line."""
    parts = [f"{d['name']} {d.get('seconds', 0.0):.0f} s" for d in results["datasets"]]
    observations = results.get("observations")
    if observations is not None and "seconds" in observations:
        parts.append(f"{observations['name']} {observations['seconds']:.0f} s")
    return ", ".join(parts)


def skipped(dataset: dict[str, Any]) -> list[str]:
    """One line per reason some methods did not run (or failed) on a dataset."""
    reasons: dict[str, list[str]] = {}
    for method in dataset["methods"]:
        if method["status"] != "ok":
            reasons.setdefault(f"{method['status']}: {method['note']}", []).append(method["method"])
    return [f"{', '.join(names)}: {reason}" for reason, names in reasons.items()]


def print_summary(console: Console, results: dict[str, Any]) -> None:
    """Every dataset's table, the targets for ours and the run's notes."""
    from rich.text import Text

    k = results["meta"]["k"]
    for dataset in results["datasets"]:
        console.print(dataset_table(dataset, k))
        for line in skipped(dataset):
            console.print(Text(f"  {line}"))
        changed = changed_table(dataset, k)
        if changed is not None:
            console.print(changed)
        console.print()
    observations = results.get("observations")
    if observations is not None:
        console.print(Text(observations_line(observations)))
        console.print()
    for check in results["targets"]:
        mark = "met" if check["met"] else "NOT met"
        console.print(
            Text(f"target {check['target']} {check['goal']}: {check['value']:.3f} ({mark})")
        )
    for note in results["meta"]["notes"]:
        console.print(Text(f"note: {note}"))
    seconds = results["meta"]["seconds"]
    console.print(Text(f"wall time: {wall_times(results)}; run {seconds:.0f} s"))
    console.print(
        Text(
            "* a framework's real class; clean@k and stale-leak over current questions; "
            "static: static facts retrieved (vs plain: difference in points); "
            "p50 ms: read latency (x plain: ratio to plain top-k)"
        )
    )


# --------------------------------------------------------------------------- files
def write_report(results: dict[str, Any], out: Path) -> list[Path]:
    """results.json, the PNG plots and report.md in ``out`` (created); returns the paths."""
    from temporal_rag_bench.plots import write_plots

    out.mkdir(parents=True, exist_ok=True)
    written = [out / "results.json"]
    written[0].write_text(json.dumps(results, separators=(",", ":"), default=str), encoding="utf-8")
    plots = write_plots(results, out)
    report = out / "report.md"
    report.write_text(markdown(results, [p.name for p in plots]), encoding="utf-8")
    return [*written, *plots, report]


def markdown(results: dict[str, Any], plots: Sequence[str]) -> str:
    """report.md: header, targets, one section per dataset, plots, method notes."""
    meta = results["meta"]
    lines = [
        "# temporal-rag bench report",
        "",
        f"Command: `{meta['command']}`  ",
        f"Date: {meta['environment']['date']}; machine: {meta['environment']['platform']}, "
        f"{meta['environment']['cores']} cores; wall time {meta['seconds']:.0f} s; "
        f"profile {meta['profile']}, seed {meta['seed']}, k = {meta['k']}.",
        "",
        f"Wall time per track: {wall_times(results)}.",
        "",
        f"Prose detector: {meta.get('prose_detector', 'none')}.",
        "",
        "Versions: "
        + ", ".join(f"{n} {v}" for n, v in meta["environment"]["versions"].items())
        + ".",
        "",
        *_targets(results["targets"]),
        *[line for d in results["datasets"] for line in _dataset_section(d, meta["k"])],
        *_observations_section(results.get("observations")),
        *_plots(plots),
        *_methods_section(results),
    ]
    if meta["notes"]:
        lines += ["## Notes", "", *[f"- {n}" for n in meta["notes"]], ""]
    return "\n".join(lines) + "\n"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"

    return [line(header), line(["---"] * len(header)), *map(line, rows), ""]


def _targets(checks: Sequence[dict[str, Any]]) -> list[str]:
    if not checks:
        return ["## Targets", "", "Not evaluated (ours did not run on synthetic-keyed).", ""]
    rows = [
        [c["target"], c["goal"], f"{c['value']:.3f}", "met" if c["met"] else "**not met**"]
        for c in checks
    ]
    intro = (
        "Ours (`supersession+phi-t`, buffer off) on the synthetic keyed track; its read "
        "latency against plain top-k in this run, query embedding excluded (rows starting "
        "`read path:`, SituatedQA's on its as-of questions alone); on the synthetic prose "
        "track the memory with the shipped write-time judge (`supersession`) and read-time "
        "Phi_T with kappa (`phi-t`, its p50 over every question) (rows starting "
        "`prose:`); on the chat track the default write-time judge (`kappa`, statements "
        "written with their speaker), clean@k over the CURRENT questions of single-valued "
        "attributes and its closings across speakers and of multi-valued facts (rows "
        "starting `chat:`); the shipped prose judge on LoCoMo's observations (rows starting "
        "`observations:`)."
    )
    return ["## Targets", "", intro, "", *_md_table(["target", "goal", "value", ""], rows)]


def _interval(figure: dict[str, Any] | None) -> str:
    if figure is None:
        return "—"
    return f"{figure['estimate']:.3f} [{figure['low']:.2f}, {figure['high']:.2f}]"


def _dataset_section(dataset: dict[str, Any], k: int) -> list[str]:
    return [
        f"## {dataset['name']} ({dataset['track']})",
        "",
        f"{dataset['description']}. {dataset['chunks']} chunks, {dataset['questions']} "
        f"questions; shared embedding {dataset['embed_seconds']:.1f} s, plain Chroma "
        f"indexing {dataset['index_seconds']:.1f} s; wall time {dataset.get('seconds', 0.0):.0f} s."
        + (" Scored by evidence turn id." if dataset["score_by_evidence"] else ""),
        "",
        "Headline figures (95% bootstrap intervals); clean@k / stale-leak over current "
        f"questions, k = {k}; `*` = a framework's real class.",
        "",
        *_md_table(COLUMNS, [_md_row(m) for m in dataset["methods"]]),
        *[f"- {line}" for line in skipped(dataset)],
        "",
        *_changed(dataset, k),
        *_cells(dataset),
        *_costs(dataset),
        *_bags(dataset),
        *_detector(dataset.get("detector") or {}),
    ]


def _md_row(method: dict[str, Any]) -> list[str]:
    row = method_row(method)
    if method["status"] == "ok":
        row[COLUMNS.index("clean@k")] = _interval(method["summary"].get("clean"))
        row[COLUMNS.index("as-of")] = _interval(method["summary"].get("as_of_accuracy"))
    return row


def _changed(dataset: dict[str, Any], k: int) -> list[str]:
    rows = changed_rows(dataset)
    if not rows:
        return []
    for row, method in zip(rows, [m for m in dataset["methods"] if m.get("changed")], strict=True):
        row[1] = _interval(method["changed"]["clean"])
    intro = (
        f"Changed attributes: clean@{k} and stale-leak over the CURRENT questions of "
        "single-valued attributes; static retention vs plain and as-of over the track's own "
        "questions. A memory's writes: statements keyed, versions closed, of which by another "
        "speaker's statement (x-speaker), of a multi-valued fact (multi), by a statement of "
        "another attribute or person (other attr)."
    )
    return [intro, "", *_md_table(CHANGED_COLUMNS, rows)]


def _cells(dataset: dict[str, Any]) -> list[str]:
    ran = [m for m in dataset["methods"] if m["status"] == "ok"]
    if not ran:
        return []
    cells = list(ran[0]["cells"])
    rows = [[m["method"], *(fraction(rate(m, c)) for c in cells)] for m in ran]
    return [
        "Clean rate per cell (every cell of the dataset):",
        "",
        *_md_table(["method", *cells], rows),
    ]


def _costs(dataset: dict[str, Any]) -> list[str]:
    ran = [m for m in dataset["methods"] if m["status"] == "ok"]
    if not ran:
        return []
    header = ["method", "ingest s", "writes/s", "p50 ms", "p95 ms", "shadows/query"]
    rows = [
        [
            m["method"],
            f"{m['ingest_seconds']:.2f}",
            "—" if m["writes_per_second"] is None else f"{m['writes_per_second']:,.0f}",
            f"{m['summary']['latency_p50'] * 1000:.2f}",
            f"{m['summary']['latency_p95'] * 1000:.2f}",
            f"{m['summary']['shadows_per_query']:.2f}",
        ]
        for m in ran
    ]
    intro = (
        "Costs: ingest = the method's own work on top of the shared embedding and plain "
        "indexing; writes/s = chunks / (shared embedding + plain indexing + own ingest)."
    )
    return [intro, "", *_md_table(header, rows)]


def _bags(dataset: dict[str, Any]) -> list[str]:
    bagged = [m for m in dataset["methods"] if m.get("bag")]
    if not bagged:
        return []
    header = ["method (bag of facts)", "clean", "stale-leak", "static", "as-of", "shadows/query"]
    rows = [
        [
            m["method"],
            _interval(m["bag"]["summary"].get("clean")),
            _interval(m["bag"]["summary"].get("stale_leak")),
            _interval(m["bag"]["summary"].get("static_hit")),
            _interval(m["bag"]["summary"].get("as_of_accuracy")),
            f"{m['bag']['summary']['shadows_per_query']:.1f}",
        ]
        for m in bagged
    ]
    intro = "Bag-of-facts mode: each question's candidates are every chunk about its entity."
    return [intro, "", *_md_table(header, rows)]


def _detector(detector: dict[str, Any]) -> list[str]:
    if not detector:
        return []
    rows = []
    for mode in ("bag_of_facts", "retrieved_top_k", "scores"):
        found = detector.get(mode)
        if found:
            rows.append(
                [
                    f"{detector['detector']} ({mode.replace('_', ' ')})",
                    fraction(found["precision"]),
                    fraction(found["recall"]),
                    str(found["reported"]),
                    str(found["expected"]),
                ]
            )
    header = ["detector", "precision", "recall", "pairs reported", "true pairs examined"]
    extra = []
    if "seconds_per_bag" in detector:
        judged = (
            f"LLM judge: {detector['bags']} bags, {detector['seconds_per_bag']:.1f} s per bag, "
            f"{detector['calls']} calls, {detector['malformed']} malformed answers."
        )
        extra = [judged, ""]
    return ["Conflict detector against the ground truth:", "", *_md_table(header, rows), *extra]


def observations_line(observations: dict[str, Any]) -> str:
    """One line: how many statements the judge closed and what it did to recall."""
    o = observations
    return (
        f"{o['name']} ({o['judge']}): closed {o['closed']} of {o['statements']} statements "
        f"({o['closed_share']:.1%}); evidence recall@{o['k']} judge off {o['recall_off']:.3f}, "
        f"on {o['recall_on']:.3f}"
    )


def _observations_section(observations: dict[str, Any] | None) -> list[str]:
    if observations is None:
        return []
    o = observations
    rate = "statements_per_second_"
    figures = [
        ["statements closed", f"{o['closed']} of {o['statements']} ({o['closed_share']:.1%})"],
        [f"evidence recall@{o['k']}, judge off", f"{o['recall_off']:.3f}"],
        [f"evidence recall@{o['k']}, judge on", f"{o['recall_on']:.3f}"],
        ["ingest statements/s, judge off", _per_second(o.get(rate + "off"))],
        ["ingest statements/s, judge on", _per_second(o.get(rate + "on"))],
    ]
    samples = [
        [s["closed"], s["by"], "—" if s["score"] is None else f"{s['score']:.3f}"]
        for s in o["samples"]
    ]
    intro = (
        f"{o['conversations']} conversations, {o['sessions']} sessions, each one `add_many` "
        f"with `valid_from` = its date, written with no prose judge and with {o['judge']}; "
        f"{o['questions']} questions (categories 1-4) scored by the evidence turns the "
        "retrieved statements cite (vectors computed once, so ingest excludes embedding)."
    )
    return [
        "## locomo-observations (write-time prose judging)",
        "",
        intro,
        "",
        *_md_table(["figure", "value"], figures),
        f"A seeded sample of {len(samples)} closed pairs, to read by hand:",
        "",
        *_md_table(["closed statement", "closed by", "score"], samples),
    ]


def _per_second(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _plots(plots: Sequence[str]) -> list[str]:
    lines = ["## Plots", ""]
    lines += [f"![{name}]({name})" for name in plots]
    return [*lines, ""]


def _methods_section(results: dict[str, Any]) -> list[str]:
    seen: dict[str, dict[str, Any]] = {}
    for dataset in results["datasets"]:
        for method in dataset["methods"]:
            seen.setdefault(method["method"], method)
    rows = [[m["method"], m["description"], m.get("real_class") or "—"] for m in seen.values()]
    weights = ", ".join(f"{name} {w}" for name, w in MULTI_FACTOR_WEIGHTS.items())
    return [
        "## Methods",
        "",
        *_md_table(["method", "what it does", "real framework class"], rows),
        "- The baselines read one shared Chroma collection (a query returns ids, texts, "
        "metadata and distances, as a RAG retriever does); the TemporalMemory methods read "
        "their own ChromaIndex collections in the same client. All use the same MiniLM vectors; "
        "query vectors are computed before the reads, so read latency is retrieval only.",
        "- Methods are ingested one by one, then answer the questions interleaved (a seeded "
        "random method order per question, after an untimed warm-up), so machine noise falls "
        "on all of them alike.",
        f"- Re-ranking baselines re-rank the {FETCH_FACTOR} k nearest candidates; time-based "
        f"scores use a half-life of {HALF_LIFE_FRACTION:g} of the dataset's time span.",
        f"- Multi-factor weights: {weights}.",
        f"- `+buffer`: the {BUFFER_SIZE} chunks ingested last (when visible) are unioned into "
        "the candidates and kept beyond k (GC-Mem's short-term buffer).",
        "- As-of questions: every method reads at the time asked about; chunks dated later are "
        "invisible to all of them.",
        "",
    ]
