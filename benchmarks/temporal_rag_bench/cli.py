"""``temporal-rag bench``: registered with the core's command line through the
``temporal_rag.cli`` entry point group (see ``benchmarks/pyproject.toml``).

Registering is cheap (argparse only); the harness is imported when the command runs.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from shared_core.cli.options import EXIT_OK, EXIT_USAGE, PROG, CliError, Commands, positive_int
from temporal_rag_bench.profiles import DATASETS, KNOWN, PROFILES

if TYPE_CHECKING:
    from rich.console import Console

DATA_ENV = "TEMPORAL_RAG_DATA"
"""The environment variable naming the external data folder when ``--data-dir`` is not given."""
TABLE_WIDTH = 132


def _also() -> str:
    also = [d for d in KNOWN if d not in DATASETS]
    return f"; also: {','.join(also)}" if also else ""


def register(commands: Commands) -> None:
    """Add ``bench`` to the ``temporal-rag`` subcommands."""
    bench = commands.add_parser(
        "bench",
        help="compare temporal-rag with plain RAG and the recency baselines",
        description="Run every method on every dataset in one run (same embeddings, same "
        "Chroma collection, same k), print the comparison and write a report folder "
        "(report.md, PNG plots, results.json).",
    )
    bench.add_argument("--profile", choices=list(PROFILES), default="quick", help="run size")
    bench.add_argument(
        "--dataset",
        default=",".join(DATASETS),
        metavar="A,B",
        help=f"datasets, comma-separated (default: all of {','.join(DATASETS)}{_also()})",
    )
    bench.add_argument("--methods", default="", metavar="A,B", help="methods (default: all)")
    bench.add_argument("--out", default="build/bench", metavar="DIR", help="report folder")
    bench.add_argument("--seed", type=positive_int(0), default=0, metavar="N")
    bench.add_argument("--k", type=positive_int(1), default=5, metavar="N", help="top k (5)")
    bench.add_argument(
        "--data-dir",
        metavar="PATH",
        help=f"the external datasets' folder (default: ${DATA_ENV}; without either, the "
        "external datasets are skipped)",
    )
    bench.add_argument("--limit", type=positive_int(1), metavar="N", help="questions per dataset")
    bench.add_argument(
        "--judge",
        metavar="MODULE:NAME",
        help="an LLM judge for the prose track: a function prompt -> reply, importable",
    )
    bench.add_argument(
        "--judge-sample",
        type=positive_int(1),
        metavar="N",
        help="questions answered per prose dataset by the methods that call a model on each "
        "read (the LLM judge's, and kappa's Phi_T) (default: the profile's; quick 20)",
    )
    bench.set_defaults(handler=run)


def data_dir(option: str | None) -> Path | None:
    """``--data-dir``, else ``$TEMPORAL_RAG_DATA``, else none (read when the command runs)."""
    chosen = option if option else os.environ.get(DATA_ENV)
    return Path(chosen) if chosen else None


def run(args: argparse.Namespace, console: Console) -> int:
    """The ``bench`` command."""
    from temporal_rag_bench.bench import BenchRequest, BenchUsageError, bench, failures, parse_list

    if not console.is_terminal and console.width < TABLE_WIDTH:
        console.width = TABLE_WIDTH  # logs and pipes: room for the comparison table
    try:
        request = BenchRequest(
            command=" ".join([PROG, *map(shlex.quote, args.argv)]),
            profile=args.profile,
            datasets=parse_list(args.dataset, KNOWN),
            methods=parse_list(args.methods),
            out=Path(args.out),
            seed=args.seed,
            k=args.k,
            data_dir=data_dir(args.data_dir),
            limit=args.limit,
            judge=args.judge,
            judge_sample=args.judge_sample,
        )
        results, _ = bench(request, console)
    except BenchUsageError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    failed = failures(results)
    if failed:
        raise CliError(f"{len(failed)} method run(s) failed: " + "; ".join(failed))
    return EXIT_OK
