"""The report's PNG plots (matplotlib, Agg backend, imported only when plotting).

- ``clean_vs_ratio.png``: clean@k against the N:M ratio on each synthetic track, one line per
  method (buffer off; the framework classes included): plain RAG collapsing as N grows.
- ``latency.png``: read latency p50 (bar) and p95 (tick) per method, per dataset.
- ``static_retention.png``: static-fact hit rate per method, per dataset with static
  questions: what recency baselines lose.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporal_rag_bench.results import RATIOS, headline, rate, ratio_cell

DPI = 110


def _pyplot() -> Any:
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg", force=True)
    return importlib.import_module("matplotlib.pyplot")


def write_plots(results: dict[str, Any], out: Path) -> list[Path]:
    """Every plot that has data, written into ``out``; returns their paths."""
    plt = _pyplot()
    written = []
    for name, draw in (
        ("clean_vs_ratio.png", _clean_vs_ratio),
        ("latency.png", _latency),
        ("static_retention.png", _static_retention),
    ):
        figure = draw(plt, results["datasets"])
        if figure is None:
            continue
        path = out / name
        figure.savefig(path, dpi=DPI, bbox_inches="tight")
        plt.close(figure)
        written.append(path)
    return written


def _ran(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in dataset["methods"] if m["status"] == "ok"]


def _ratios(method: dict[str, Any]) -> list[tuple[int, float]]:
    points = [(n, rate(method, ratio_cell(n))) for n in RATIOS]
    return [(n, v) for n, v in points if v is not None]


def _styles(datasets: Sequence[dict[str, Any]]) -> dict[str, tuple[Any, str]]:
    """One (colour, marker) per method name, the same in every panel."""
    names = list(dict.fromkeys(m["method"] for d in datasets for m in d["methods"]))
    palette = _pyplot().get_cmap("tab20")
    markers = "osD^v<>ph*"
    return {n: (palette(i % 20), markers[i % len(markers)]) for i, n in enumerate(names)}


def _clean_vs_ratio(plt: Any, datasets: Sequence[dict[str, Any]]) -> Any:
    panels = [d for d in datasets if any(len(_ratios(m)) > 1 for m in _ran(d))]
    if not panels:
        return None
    styles = _styles(datasets)
    figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    for axis, dataset in zip(axes[0], panels, strict=True):
        for method in _ran(dataset):
            if method["buffered"]:
                continue
            shown = _ratios(method)
            color, marker = styles[method["method"]]
            axis.plot(
                [n for n, _ in shown],
                [v for _, v in shown],
                "--" if method.get("real_class") else "-",
                color=color,
                marker=marker,
                linewidth=2.6 if method["method"] == "supersession+phi-t" else 1.3,
                label=method["method"],
            )
        axis.set_xscale("log")
        axis.set_xticks(list(RATIOS), [str(n) for n in RATIOS])
        axis.set_ylim(-0.03, 1.03)
        axis.set_xlabel("stale statements N (N:M, M = 1-2 current)")
        axis.set_ylabel("clean@k (current value in, no stale value)")
        axis.set_title(dataset["name"])
        axis.grid(alpha=0.3)
    legend: dict[str, Any] = {}
    for axis in axes[0]:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    figure.legend(
        list(legend.values()), list(legend), fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5)
    )
    figure.suptitle("clean@k against the old:new accumulation ratio (dashed: framework class)")
    return figure


def _latency(plt: Any, datasets: Sequence[dict[str, Any]]) -> Any:
    panels = [d for d in datasets if _ran(d)]
    if not panels:
        return None
    rows = max(len(_ran(d)) for d in panels)
    figure, axes = plt.subplots(
        1,
        len(panels),
        figsize=(5.4 * len(panels), 0.3 * rows + 1.8),
        squeeze=False,
        layout="constrained",
    )
    for axis, dataset in zip(axes[0], panels, strict=True):
        methods = _ran(dataset)
        names = [m["method"] for m in methods]
        p50 = [m["summary"]["latency_p50"] * 1000 for m in methods]
        p95 = [m["summary"]["latency_p95"] * 1000 for m in methods]
        positions = list(range(len(methods)))
        axis.barh(positions, p50, color="#4c72b0")
        axis.plot(p95, positions, "|", color="black", markersize=9)
        axis.set_yticks(positions, names, fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("read latency, ms (bar p50, tick p95)")
        axis.set_title(dataset["name"], fontsize=9)
        axis.grid(axis="x", alpha=0.3)
    figure.suptitle("read latency per method (query embedding excluded)")
    return figure


def _static_retention(plt: Any, datasets: Sequence[dict[str, Any]]) -> Any:
    panels = [d for d in datasets if any(headline(m, "static_hit") is not None for m in _ran(d))]
    if not panels:
        return None
    rows = max(len(_ran(d)) for d in panels)
    figure, axes = plt.subplots(
        1,
        len(panels),
        figsize=(5.4 * len(panels), 0.3 * rows + 1.8),
        squeeze=False,
        layout="constrained",
    )
    for axis, dataset in zip(axes[0], panels, strict=True):
        methods = [m for m in _ran(dataset) if headline(m, "static_hit") is not None]
        values = [headline(m, "static_hit") for m in methods]
        positions = list(range(len(methods)))
        colors = ["#55a868" if m["method"] == "plain" else "#8172b2" for m in methods]
        axis.barh(positions, values, color=colors)
        axis.set_yticks(positions, [m["method"] for m in methods], fontsize=7)
        axis.invert_yaxis()
        axis.set_xlim(0, 1.02)
        axis.set_xlabel("static facts retrieved (hit rate)")
        axis.set_title(dataset["name"], fontsize=9)
        axis.grid(axis="x", alpha=0.3)
    figure.suptitle("static retention per method (green: plain top-k)")
    return figure
