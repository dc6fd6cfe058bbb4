"""TemporalMemory write and search figures on the embedded default (issue 4, "Figures to report").

1. ``add_many`` throughput on SQLite + Chroma persistent + the real MiniLM, as a ratio to the raw
   embedding throughput of the same embedder on texts of the same kind, measured in the same
   run (aim >= 0.8: the ledger and the index add little to the cost of embedding);
2. current-state and as-of ``search`` latency through the whole read path (query embedding,
   index, ledger resolution) on the memory built in (1).

The 100k-version index figures (current state vs an unfiltered Chroma query) are in
bench_index.py. Under ``--benchmark-disable`` (``make test``) each workload runs once on a few
texts as a smoke test; no timing is asserted.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from benchmarks.reporting import Timed, record_latency
from shared_core.clock import ManualClock
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.facts import Fact
from shared_core.memory import MemoryConfig, TemporalMemory

NOW = datetime(2025, 1, 1, tzinfo=UTC)
FULL_TEXTS, SMOKE_TEXTS, BATCH = 2_000, 40, 500
SEED = 4_242
PEOPLE = ["Maria", "João", "Anna", "Pedro", "Sofia", "Liam", "Chen", "Aisha", "Omar", "Elena"]
THINGS = ["lives in", "works at", "drives", "prefers", "studies"]
VALUES = ["Berlin", "Acme", "a bicycle", "green tea", "chemistry", "Porto", "Globex", "a van"]


def _texts(n: int, salt: str) -> list[Fact | str]:
    """Distinct statements (half keyed, half prose) so every text must be embedded."""
    rng = random.Random(f"{SEED}{salt}")
    items: list[Fact | str] = []
    for i in range(n):
        person, thing, value = rng.choice(PEOPLE), rng.choice(THINGS), rng.choice(VALUES)
        text = f"{person} {thing} {value} (note {salt}-{i})."
        if i % 2:
            items.append(text)
        else:
            when = NOW - timedelta(days=n - i)
            items.append(Fact(text=text, subject=f"{person}-{i % 97}", relation=thing,
                              object=value, valid_from=when))  # fmt: skip
    return items


@pytest.fixture(scope="module")
def size(request: pytest.FixtureRequest) -> int:
    return SMOKE_TEXTS if request.config.getoption("benchmark_disable") else FULL_TEXTS


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: MiniLMEmbedder,
    size: int,
    figures: list[str],
) -> Iterator[TemporalMemory]:
    """add_many vs raw embedding, measured once each on fresh texts of the same kind."""
    raw_items = _texts(size, "raw")
    raw_texts = [i.text if isinstance(i, Fact) else i for i in raw_items]
    start = time.perf_counter()
    for at in range(0, size, BATCH):
        embedder.embed_documents(raw_texts[at : at + BATCH])
    raw = time.perf_counter() - start

    clock = ManualClock(NOW)
    memory = TemporalMemory.open(
        tmp_path_factory.mktemp("memory"), config=MemoryConfig(embedder=embedder, clock=clock)
    )
    items = _texts(size, "memory")
    start = time.perf_counter()
    for at in range(0, size, BATCH):
        memory.add_many(items[at : at + BATCH])
    ours = time.perf_counter() - start
    assert memory.index.count() >= size  # supersessions add closed versions
    figures.append(
        f"  add_many: {size:,} texts in {ours:.2f} s = {size / ours:,.0f}/s; raw embedding "
        f"{size / raw:,.0f}/s; ratio {raw / ours:.2f} (aim >= 0.8)"
    )
    yield memory
    memory.close()


def test_add_many_throughput_ratio(built: TemporalMemory) -> None:
    assert built.index.count() > 0  # the figure is printed by the fixture


@pytest.mark.parametrize("mode", ["current", "as_of"])
def test_search_latency(
    benchmark: Any, built: TemporalMemory, figures: list[str], mode: str
) -> None:
    options: dict[str, Any] = {}
    if mode == "as_of":
        options = {"valid_at": NOW - timedelta(days=10), "known_at": NOW}
    questions = iter(f"What does {p} prefer?" for p in PEOPLE * 10_000)
    timed = Timed(lambda: built.search(next(questions), k=10, **options))
    hits = benchmark(timed)
    assert hits
    record_latency(benchmark, figures, timed, f"search ({mode}), whole read path, k=10")
