"""Shared reporting for the benchmark files: wall times that survive ``--benchmark-disable``,
medians, and the summary lines each file prints once at the end of the session."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


class Timed:
    """Wraps a workload and keeps its own wall times (the only timing in disabled mode)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.seconds: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.seconds.append(time.perf_counter() - start)


def median_seconds(benchmark: Any, timed: Timed) -> tuple[float, str]:
    """The median seconds per call: pytest-benchmark's if it ran, else our own single run."""
    if benchmark.stats is not None:
        stats = benchmark.stats.stats
        return stats.median, f"median of {stats.rounds} rounds"
    return statistics.median(timed.seconds), "1 run, benchmark disabled"


def record_rate(
    benchmark: Any, figures: list[str], timed: Timed, label: str, items: int, **info: Any
) -> None:
    """Store and summarise a throughput (items per second)."""
    seconds, how = median_seconds(benchmark, timed)
    rate = items / seconds
    benchmark.extra_info.update(facts=items, seconds=seconds, facts_per_s=round(rate), **info)
    figures.append(f"  {label}: {items:,} in {seconds:.3f} s = {rate:,.0f}/s ({how})")


def record_latency(
    benchmark: Any, figures: list[str], timed: Timed, label: str, **info: Any
) -> None:
    """Store and summarise a latency per call."""
    seconds, how = median_seconds(benchmark, timed)
    benchmark.extra_info.update(median_us_per_query=round(seconds * 1e6, 1), **info)
    figures.append(f"  {label}: {seconds * 1e6:,.1f} us per call ({how})")


def emit(config: pytest.Config, lines: list[str]) -> None:
    """Print past pytest's output capture (so the lines show without ``-s``)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is None:
        print("\n".join(lines))
        return
    with capture.global_and_fixture_disabled():
        print("\n".join(lines), flush=True)


def plot_path(config: pytest.Config, variable: str, default: str, scratch: Path) -> Path:
    """Where a growth plot goes: ``$variable`` if set; else ``default`` (under build/) when
    timing, or ``scratch`` under ``--benchmark-disable`` (a smoke run leaves no files behind)."""
    given = os.environ.get(variable)
    if given:
        return Path(given)
    return scratch if config.getoption("benchmark_disable") else Path(default)


Growth = dict[tuple[str, int], dict[str, float]]
"""Figures of a growth benchmark: (series, size) -> {column: value}, e.g.
``("embedded", 100_000) -> {"current-state (us)": 812.0, ...}``."""


def growth_report(figures: list[str], title: str, growth: Growth, plot: Path) -> None:
    """Append to ``figures`` a table of ``growth`` (a row per series and size, a column per
    figure, then each figure as a multiple of the series' smallest size) and draw one panel
    per figure against size in a PNG at ``plot`` (log-log; matplotlib's Agg backend)."""
    if not growth:
        return
    columns = list(dict.fromkeys(name for row in growth.values() for name in row))
    figures.extend(["", f"  {title}: growth with size", *_growth_table(growth, columns)])
    try:
        _growth_plot(title, growth, columns, plot)
    except ImportError:
        figures.append("  no plot: matplotlib is not installed")
        return
    figures.append(f"  plot written to {plot}")


def _growth_table(growth: Growth, columns: list[str]) -> list[str]:
    smallest = {series: min(n for s, n in growth if s == series) for series, _ in growth}
    header = ["series, size", *columns, *(f"{name.split(' (')[0]} growth" for name in columns)]
    lines = ["  | " + " | ".join(header) + " |", "  |" + " --- |" * len(header)]
    for series, size in sorted(growth):
        row, base = growth[series, size], growth[series, smallest[series]]
        values = [_number(row.get(name)) for name in columns]
        multiples = [_multiple(row.get(name), base.get(name)) for name in columns]
        lines.append(f"  | {series}, {size:,} | " + " | ".join(values + multiples) + " |")
    return lines


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) < 10 else f"{value:,.1f}"


def _multiple(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f} x"


def _growth_plot(title: str, growth: Growth, columns: list[str], plot: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    panels, axes = pyplot.subplots(1, len(columns), figsize=(4.5 * len(columns), 4), squeeze=False)
    for axis, name in zip(axes[0], columns, strict=True):
        for series in sorted({s for s, _ in growth}):
            points = sorted(
                (n, row[name]) for (s, n), row in growth.items() if s == series and name in row
            )
            axis.plot(*zip(*points, strict=True), marker="o", label=series)
        axis.set(xscale="log", yscale="log", xlabel="size", title=name)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
    panels.suptitle(title)
    panels.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    panels.savefig(plot, dpi=100)
    pyplot.close(panels)
