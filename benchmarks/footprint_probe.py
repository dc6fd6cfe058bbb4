"""The process that ``bench_footprint.py`` measures: it opens a memory that is already built,
searches it, and prints its resident memory at each step as one JSON line.

``python -m benchmarks.footprint_probe LEDGER INDEX --schema S --prefix P --searches N``:
LEDGER and INDEX as for ``TemporalMemory.connect`` (an SQLite file or ``postgresql://...``; a
Chroma folder or ``http://...``). The embedder is :class:`HashingEmbedder` named
``random-384`` (the name the store was bound with), so no model is loaded. Resident memory
(VmRSS, and its peak VmHWM, from /proc/self/status) is read four times (``ru_maxrss`` is
reported too, but on Linux it keeps the parent's resident size across the fork and exec that
started this process, so VmHWM is the peak to read):

- ``bare``: the interpreter, before any import of the library;
- ``imported``: after importing the library and the drivers it will use (chromadb, psycopg for
  a PostgreSQL ledger): the baseline a process pays before it holds any memory;
- ``opened``: after ``TemporalMemory.connect`` (which checks the index mirrors the ledger);
- ``searched``: after N current-state searches (k = 10), which load the index into memory.

Only the standard library is imported before ``bare``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from typing import Any

DIM = 384
EMBEDDER = "random-384"


def status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, in MB, from /proc/PID/status."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as lines:
        for line in lines:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[f"{name[2:].lower()}_mb"] = int(value.split()[0]) / 1024
    return found


def _parsed(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="footprint_probe")
    parser.add_argument("ledger")
    parser.add_argument("index")
    parser.add_argument("--schema", default="temporal_rag")
    parser.add_argument("--prefix", default="temporal_rag")
    parser.add_argument("--searches", type=int, default=20)
    return parser.parse_args(argv)


def probe(argv: list[str] | None = None) -> dict[str, Any]:
    """Open, search, and measure (see the module docstring)."""
    args = _parsed(argv)
    report: dict[str, Any] = {"bare": status()}
    import chromadb  # noqa: F401  (the index's driver is part of the baseline)

    from shared_core import HashingEmbedder, MemoryConfig, TemporalMemory

    if args.ledger.startswith(("postgresql://", "postgres://")):
        import psycopg  # noqa: F401  (so is the ledger's)
    report["imported"] = status()
    start = time.perf_counter()
    memory = TemporalMemory.connect(
        ledger=args.ledger,
        index=args.index,
        schema=args.schema,
        prefix=args.prefix,
        config=MemoryConfig(embedder=HashingEmbedder(DIM, name=EMBEDDER)),
    )
    report["open_s"] = time.perf_counter() - start
    report["opened"] = status()
    start = time.perf_counter()
    with memory:
        report["hits"] = [
            len(memory.search(f"user {n} lives in city {n * 7}", k=10))
            for n in range(args.searches)
        ]
        report["search_s"] = time.perf_counter() - start
        report["searched"] = status()
        report["reconciled"] = memory.reconcile().applied
    report["ru_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


if __name__ == "__main__":
    print(json.dumps(probe()))
