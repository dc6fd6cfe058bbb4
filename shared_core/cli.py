"""The ``temporal-rag`` command line: a demo and read-only views of any ledger file.

Commands::

    temporal-rag demo    [--ledger PATH] [--fresh]
    temporal-rag current --ledger PATH [--namespace NS] [--subject S] [--relation R] [--json]
    temporal-rag history SUBJECT RELATION --ledger PATH [--namespace NS] [--known-at ISO] [--json]
    temporal-rag as-of   --ledger PATH [--valid-at ISO] [--known-at ISO] [--namespace NS]
                         [--subject S] [--relation R] [--json]
    temporal-rag explain FACT_ID --ledger PATH [--json]
    temporal-rag bench   [--profile tiny|quick|full] [--dataset A,B] [--methods A,B] [--out DIR]
                         [--seed N] [--k N] [--data-dir PATH] [--limit N] [--judge MODULE:NAME]

Exit codes: 0 success, 1 an error of the ledger or of the request (e.g. an unknown fact id),
2 a usage error (bad arguments, a naive datetime, a missing ledger file, a file that is not a
ledger). Read commands never create a ledger. Errors are one line on stderr, never a traceback.

Rich is imported only by the functions that render, so importing this module stays cheap.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from shared_core.clock import parse_datetime
from shared_core.errors import (
    InvalidInputError,
    LedgerNotFoundError,
    NotALedgerError,
    TemporalRagError,
)
from shared_core.facts import DEFAULT_NAMESPACE
from shared_core.render import (
    emit_json,
    explanation_to_dict,
    fit_ids,
    format_time,
    plain,
    print_facts,
    timeline_table,
    versions_table,
)

if TYPE_CHECKING:
    from rich.console import Console

    from shared_core.ledger import SQLiteLedger

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

PROG = "temporal-rag"
BENCH_WIDTH = 132
DEFAULT_DEMO_LEDGER = "temporal-rag-demo.sqlite"
SIDE_FILES = ("-wal", "-shm", "-journal")

Handler = Callable[[argparse.Namespace, "Console"], int]
IdStyle = Literal["full", "short", "none"]


class CliError(Exception):
    """A failure reported as one line on stderr with an exit code (no traceback)."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# --------------------------------------------------------------------------- entry point
def main(argv: list[str] | None = None, *, console: Console | None = None) -> int:
    """Run the command line; returns the exit code (``console`` is for tests and embedding)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage or help already
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    handler: Handler = args.handler
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return handler(args, console if console is not None else _default_console())
    except CliError as exc:
        return _fail(exc.message, exc.code)
    except NotALedgerError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except InvalidInputError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except TemporalRagError as exc:
        return _fail(str(exc), EXIT_ERROR)
    except OSError as exc:
        return _fail(str(exc), EXIT_ERROR)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def _default_console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


# --------------------------------------------------------------------------- arguments
def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``temporal-rag`` (every subcommand)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Temporally valid memory: a bi-temporal fact ledger you can query in "
        "valid time (when a fact was true) and record time (when the memory knew it).",
        epilog=f"Start with `{PROG} demo`, then try the read commands on the file it writes. "
        "Datetimes are ISO-8601 with an offset, e.g. 2022-06-01T00:00:00Z.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="write a small changing timeline and show it",
        description="Write Maria's changing timeline into a ledger file, then show the "
        "current state, a history and as-of answers.",
    )
    demo.add_argument(
        "--ledger",
        default=DEFAULT_DEMO_LEDGER,
        metavar="PATH",
        help=f"where to write it (default: ./{DEFAULT_DEMO_LEDGER})",
    )
    demo.add_argument(
        "--fresh",
        action="store_true",
        help="delete an existing ledger at PATH (and its -wal/-shm) first",
    )
    demo.set_defaults(handler=_cmd_demo)
    _add_read_commands(commands, _shared_options())
    _add_bench_command(commands)
    _add_kappa_command(commands)
    return parser


def _shared_options() -> dict[str, argparse.ArgumentParser]:
    def group() -> argparse.ArgumentParser:
        return argparse.ArgumentParser(add_help=False)

    options = {name: group() for name in ("ledger", "output", "namespace", "narrow", "known_at")}
    options["ledger"].add_argument("--ledger", required=True, metavar="PATH", help="ledger file")
    options["output"].add_argument("--json", action="store_true", help="print JSON, not tables")
    options["namespace"].add_argument(
        "--namespace",
        default=DEFAULT_NAMESPACE,
        metavar="NS",
        help=f"the namespace to read (default: {DEFAULT_NAMESPACE})",
    )
    options["narrow"].add_argument("--subject", metavar="S", help="only facts about S")
    options["narrow"].add_argument("--relation", metavar="R", help="only facts with relation R")
    options["known_at"].add_argument(
        "--known-at",
        type=_datetime_arg("--known-at"),
        metavar="ISO",
        help="as recorded up to this time (default: now)",
    )
    return options


def _add_read_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    options: dict[str, argparse.ArgumentParser],
) -> None:
    def parents(*names: str) -> list[argparse.ArgumentParser]:
        return [options[name] for name in names]

    current = commands.add_parser(
        "current",
        parents=parents("ledger", "namespace", "narrow", "output"),
        help="what is true now, as known now",
    )
    current.set_defaults(handler=_cmd_current)

    history = commands.add_parser(
        "history",
        parents=parents("ledger", "namespace", "known_at", "output"),
        help="every version of one (subject, relation) key, in valid-time order",
    )
    history.add_argument("subject", metavar="SUBJECT")
    history.add_argument("relation", metavar="RELATION")
    history.set_defaults(handler=_cmd_history)

    as_of = commands.add_parser(
        "as-of",
        parents=parents("ledger", "known_at", "namespace", "narrow", "output"),
        help="what was true at --valid-at, as known at --known-at",
    )
    as_of.add_argument(
        "--valid-at",
        type=_datetime_arg("--valid-at"),
        metavar="ISO",
        help="when the facts were true in the world (default: now)",
    )
    as_of.set_defaults(handler=_cmd_as_of)

    explain = commands.add_parser(
        "explain",
        parents=parents("ledger", "output"),
        help="every record of a fact id and why it stands where it does",
    )
    explain.add_argument("fact_id", metavar="FACT_ID")
    explain.set_defaults(handler=_cmd_explain)


def _add_bench_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from shared_core.eval.profiles import DATASETS, PROFILES

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
        help=f"datasets, comma-separated (default: all of {','.join(DATASETS)})",
    )
    bench.add_argument("--methods", default="", metavar="A,B", help="methods (default: all)")
    bench.add_argument("--out", default="build/bench", metavar="DIR", help="report folder")
    bench.add_argument("--seed", type=_positive(0), default=0, metavar="N")
    bench.add_argument("--k", type=_positive(1), default=5, metavar="N", help="top k (5)")
    bench.add_argument(
        "--data-dir",
        metavar="PATH",
        help="external datasets (default: ../shared/data when it exists; skipped otherwise)",
    )
    bench.add_argument("--limit", type=_positive(1), metavar="N", help="questions per dataset")
    bench.add_argument(
        "--judge",
        metavar="MODULE:NAME",
        help="an LLM judge for the prose track: a function prompt -> reply, importable",
    )
    bench.add_argument(
        "--judge-sample",
        type=_positive(1),
        default=40,
        metavar="N",
        help="questions the judge's methods answer per prose dataset (default 40)",
    )
    bench.set_defaults(handler=_cmd_bench)


def _add_kappa_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kappa = commands.add_parser(
        "kappa-eval",
        help="score the prose conflict detector on the hand-written pair sets",
        description="Precision, recall and F1 per pair kind of kappa-minilm (at the threshold "
        "its card holds, chosen on the dev set) and of the cosine baseline (threshold chosen on "
        "dev), on the dev and test pair sets, with the cost per pair and per 10-pair set.",
    )
    kappa.add_argument("--folder", metavar="DIR", help="a kappa model folder (default: shipped)")
    kappa.add_argument("--no-baseline", action="store_true", help="skip the cosine baseline")
    kappa.add_argument("--out", metavar="FILE", help="also write the report (markdown) here")
    kappa.add_argument("--json", metavar="FILE", help="also write the figures (JSON) here")
    kappa.set_defaults(handler=_cmd_kappa_eval)


def _positive(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from exc
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}")
        return value

    parse.__name__ = "integer"
    return parse


def _datetime_arg(option: str) -> Callable[[str], datetime]:
    def parse(text: str) -> datetime:
        try:
            return parse_datetime(text, option)
        except InvalidInputError as exc:  # argparse reports it as a usage error (exit 2)
            raise argparse.ArgumentTypeError(f"{exc.problem}; {exc.fix}") from exc

    parse.__name__ = "datetime"  # argparse names the type in some messages
    return parse


# --------------------------------------------------------------------------- commands
def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from shared_core.demo import run_demo

    path = Path(args.ledger)
    prepare_demo_path(path, fresh=bool(args.fresh))
    run_demo(path, console)
    return EXIT_OK


def _cmd_current(args: argparse.Namespace, console: Console) -> int:
    with open_existing_ledger(Path(args.ledger)) as ledger:
        facts = ledger.current(
            namespace=args.namespace, subject=args.subject, relation=args.relation
        )
    if args.json:
        emit_json(console, [fact.to_dict() for fact in facts])
        return EXIT_OK
    title = f"Current facts (namespace {args.namespace!r})"
    print_facts(console, facts, title, empty="Nothing is current.")
    return EXIT_OK


def _cmd_history(args: argparse.Namespace, console: Console) -> int:
    with open_existing_ledger(Path(args.ledger)) as ledger:
        facts = ledger.history(
            args.subject, args.relation, namespace=args.namespace, known_at=args.known_at
        )
    if args.json:
        emit_json(console, [fact.to_dict() for fact in facts])
        return EXIT_OK
    known = f", as known at {format_time(args.known_at)}" if args.known_at else ""
    title = f"History of {args.subject} / {args.relation}{known}"
    if not facts:
        console.print(plain(f"{title}: no versions."))
    else:
        console.print(fit_ids(console, lambda ids: timeline_table(facts, title=title, ids=ids)))
    return EXIT_OK


def _cmd_as_of(args: argparse.Namespace, console: Console) -> int:
    valid_at: datetime | None = args.valid_at
    known_at: datetime | None = args.known_at
    with open_existing_ledger(Path(args.ledger)) as ledger:
        facts = ledger.as_of(
            valid_at=valid_at,
            known_at=known_at,
            namespace=args.namespace,
            subject=args.subject,
            relation=args.relation,
        )
    if args.json:
        emit_json(console, [fact.to_dict() for fact in facts])
        return EXIT_OK
    valid = f"Valid at {format_time(valid_at)}" if valid_at else "Valid now"
    known = f"as known at {format_time(known_at)}" if known_at else "as known now"
    title = f"{valid}, {known} (namespace {args.namespace!r})"
    print_facts(console, facts, title, empty="Nothing was valid then, as known then.")
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace, console: Console) -> int:
    with open_existing_ledger(Path(args.ledger)) as ledger:
        explanation = ledger.explain(args.fact_id)
    if args.json:
        emit_json(console, explanation_to_dict(explanation))
        return EXIT_OK
    console.print(plain(explanation.summary()))
    if explanation.versions:
        console.print(versions_table(explanation))
    else:
        console.print(plain("This statement has no version of its own."))
    return EXIT_OK


def _cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from shared_core.eval.bench import BenchRequest, BenchUsageError, bench, failures, parse_list
    from shared_core.eval.profiles import DATASETS, default_data_dir

    if not console.is_terminal and console.width < BENCH_WIDTH:
        console.width = BENCH_WIDTH  # logs and pipes: room for the comparison table

    try:
        request = BenchRequest(
            command=" ".join([PROG, *map(shlex.quote, args.argv)]),
            profile=args.profile,
            datasets=parse_list(args.dataset, DATASETS),
            methods=parse_list(args.methods),
            out=Path(args.out),
            seed=args.seed,
            k=args.k,
            data_dir=Path(args.data_dir) if args.data_dir else default_data_dir(),
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


def _cmd_kappa_eval(args: argparse.Namespace, console: Console) -> int:
    from shared_core.detectors.kappa import KappaScorer
    from shared_core.embedders.minilm import MiniLMEmbedder
    from shared_core.eval.kappa_eval import Scorer, cosine_scorer, run

    scorer = KappaScorer(folder=args.folder)
    scorers: list[tuple[str, Scorer, float | None]] = [
        (scorer.name, scorer.contradiction_scores, scorer.card.threshold)
    ]
    if not args.no_baseline:
        embedder = MiniLMEmbedder()
        scorers.append(("cosine (MiniLM)", cosine_scorer(embedder.embed_documents), None))
    text, record = run(scorers)
    console.print(text, markup=False)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return EXIT_OK


# --------------------------------------------------------------------------- ledger files
@contextmanager
def open_existing_ledger(path: Path) -> Iterator[SQLiteLedger]:
    """Open a ledger file that must already exist (read commands never create one)."""
    from shared_core.ledger import SQLiteLedger

    try:
        ledger = SQLiteLedger(path, create=False)
    except LedgerNotFoundError as exc:
        raise CliError(f"{exc} (write one with `{PROG} demo --ledger {path}`)", EXIT_USAGE) from exc
    with ledger:
        yield ledger


def prepare_demo_path(path: Path, *, fresh: bool) -> None:
    """Refuse to overwrite a non-empty file; with ``fresh`` delete an old ledger first.

    Even with ``fresh``, a file that is not an SQLite database is left alone: a mistyped
    ``--ledger`` must not delete someone's document.
    """
    if path.is_dir():
        raise CliError(f"{path} is a directory; pass the path of a ledger file", EXIT_USAGE)
    if not path.parent.is_dir():
        raise CliError(f"directory {path.parent} does not exist; create it first", EXIT_USAGE)
    exists = path.exists() and path.stat().st_size > 0
    if exists and not fresh:
        raise CliError(
            f"{path} already exists; pass --fresh to replace it, or choose another --ledger"
        )
    if not fresh:
        return
    if exists and not _looks_like_sqlite(path):
        raise CliError(f"{path} is not an SQLite ledger file; refusing to delete it")
    for candidate in [path, *(path.with_name(path.name + side) for side in SIDE_FILES)]:
        candidate.unlink(missing_ok=True)


def _looks_like_sqlite(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


if __name__ == "__main__":  # pragma: no cover - `python -m shared_core.cli`
    sys.exit(main())
