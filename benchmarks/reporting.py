"""Shared reporting for the benchmark files: wall times that survive ``--benchmark-disable``,
medians, and the summary lines each file prints once at the end of the session."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
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
