"""The ``temporal-rag`` command line: a demo and read-only views of any ledger file.

Commands::

    temporal-rag demo    [--ledger PATH] [--fresh]
    temporal-rag current --ledger PATH [--namespace NS] [--subject S] [--relation R] [--json]
    temporal-rag history SUBJECT RELATION --ledger PATH [--namespace NS] [--known-at ISO] [--json]
    temporal-rag as-of   --ledger PATH [--valid-at ISO] [--known-at ISO] [--namespace NS]
                         [--subject S] [--relation R] [--json]
    temporal-rag explain FACT_ID --ledger PATH [--json]   (FACT_ID: a full id or the short id
                                                           the tables show, a unique end or start)
    temporal-rag namespaces --ledger PATH [--json]
    temporal-rag repair  FOLDER [--embedder minilm] [--json]

Other installed distributions add commands through the ``temporal_rag.cli`` entry point group
(in this repository: ``bench`` from ``benchmarks/``, ``kappa-eval`` from ``training/``); each
entry point names a function that takes the subparsers and adds its commands (see
:mod:`shared_core.cli.options` for what they share).

Exit codes: 0 success, 1 an error of the ledger or of the request (e.g. an unknown fact id),
2 a usage error (bad arguments, a naive datetime, a missing ledger file, a file that is not a
ledger, a read-only file or folder). Read commands never create a ledger. Errors are one line
on stderr, never a traceback.

Rich is imported only by the functions that render, so importing this module stays cheap.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shared_core.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    Commands,
    Handler,
    datetime_arg,
)
from shared_core.cli.render import (
    emit_json,
    explanation_to_dict,
    fit_ids,
    format_time,
    plain,
    print_facts,
    timeline_table,
    versions_table,
)
from shared_core.errors import (
    EmbedderMismatchError,
    FactNotFoundError,
    InvalidInputError,
    LedgerNotFoundError,
    NotALedgerError,
    TemporalRagError,
)
from shared_core.facts import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from rich.console import Console

    from shared_core.embedders.base import Embedder
    from shared_core.ledger import SQLiteLedger

DEFAULT_DEMO_LEDGER = "temporal-rag-demo.sqlite"
SIDE_FILES = ("-wal", "-shm", "-journal")

PLUGIN_GROUP = "temporal_rag.cli"


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
    _add_copy_command(commands)
    _add_repair_command(commands)
    _add_plugin_commands(commands)
    return parser


def plugin_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed ``temporal_rag.cli`` entry points, by name."""
    return sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda p: p.name)


def _add_plugin_commands(commands: Commands) -> None:
    """The commands of other installed distributions (the ``temporal_rag.cli`` group): each
    entry point names a function taking ``commands``. One that cannot load is left out."""
    for point in plugin_entry_points():
        try:
            register: Callable[[Commands], None] = point.load()
        except ImportError:
            continue
        register(commands)


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
        type=datetime_arg("--known-at"),
        metavar="ISO",
        help="as recorded up to this time (default: now)",
    )
    return options


def _add_read_commands(
    commands: Commands,
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
        type=datetime_arg("--valid-at"),
        metavar="ISO",
        help="when the facts were true in the world (default: now)",
    )
    as_of.set_defaults(handler=_cmd_as_of)

    explain = commands.add_parser(
        "explain",
        parents=parents("ledger", "output"),
        help="every record of a fact id and why it stands where it does",
    )
    explain.add_argument(
        "fact_id", metavar="FACT_ID", help="a fact id, or the short id a table shows (its end)"
    )
    explain.set_defaults(handler=_cmd_explain)

    namespaces = commands.add_parser(
        "namespaces",
        parents=parents("ledger", "output"),
        help="the namespaces holding current facts, with how many each holds",
    )
    namespaces.set_defaults(handler=_cmd_namespaces)


def _add_copy_command(commands: Commands) -> None:
    copy = commands.add_parser(
        "copy-ledger",
        help="copy a ledger, history included, into a new one (e.g. SQLite into PostgreSQL)",
        description="Copy every row of SOURCE (an SQLite file or postgresql://...) into the "
        "new, empty TARGET, ids and record times unchanged, then check the copy: the same rows "
        "and the same as-of answers at sampled (valid, known) times.",
    )
    copy.add_argument("source", metavar="SOURCE", help="an SQLite ledger file or postgresql://")
    copy.add_argument("target", metavar="TARGET", help="a new SQLite file or postgresql://")
    for end in ("source", "target"):
        copy.add_argument(
            f"--{end}-schema",
            default="temporal_rag",
            metavar="NAME",
            help=f"the PostgreSQL schema of the {end} ledger (default: temporal_rag)",
        )
    copy.add_argument(
        "--samples", type=int, default=200, metavar="N", help="as-of points to compare"
    )
    copy.add_argument("--json", action="store_true", help="print JSON, not a sentence")
    copy.set_defaults(handler=_cmd_copy_ledger)


def _add_repair_command(commands: Commands) -> None:
    repair = commands.add_parser(
        "repair",
        help="rebuild an embedded folder's index from its ledger",
        description="Rebuild the vector index of FOLDER (TemporalMemory.open's folder) from its "
        "ledger, the source of truth: a missing or stale index is brought up to date, one that "
        "cannot be read is moved aside (FOLDER/index.damaged-<UTC time>, never deleted) and "
        "built anew. The folder must not be open in another process.",
    )
    repair.add_argument("folder", metavar="FOLDER", help="the folder TemporalMemory.open used")
    repair.add_argument(
        "--embedder",
        default="minilm",
        metavar="NAME",
        help="the embedder the folder was built with (default and only choice here: minilm; "
        "for another, call TemporalMemory.repair(FOLDER, config=MemoryConfig(embedder=...)))",
    )
    repair.add_argument("--json", action="store_true", help="print JSON, not a sentence")
    repair.set_defaults(handler=_cmd_repair)


def repair_embedder(name: str) -> Embedder:
    """The embedder ``temporal-rag repair --embedder NAME`` rebuilds with."""
    if name != "minilm":
        raise CliError(
            f"--embedder {name!r} is unknown here; the command line rebuilds with minilm (the "
            "default of TemporalMemory.open); for another embedder call "
            "TemporalMemory.repair(FOLDER, config=MemoryConfig(embedder=...)) from Python",
            EXIT_USAGE,
        )
    from shared_core.embedders.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


# --------------------------------------------------------------------------- commands
def _cmd_repair(args: argparse.Namespace, console: Console) -> int:
    from shared_core.memory import MemoryConfig, TemporalMemory

    folder = Path(args.folder)
    if not (folder / "ledger.sqlite").is_file():
        raise CliError(f"{folder} holds no ledger.sqlite: not a TemporalMemory.open folder", 2)
    refuse_read_only(folder / "ledger.sqlite", "repair rewrites its index")
    embedder = repair_embedder(args.embedder)
    try:
        report = TemporalMemory.repair(folder, config=MemoryConfig(embedder=embedder))
    except EmbedderMismatchError as exc:
        raise CliError(
            f"{exc}; rebuild it from Python with that embedder: "
            "TemporalMemory.repair(FOLDER, config=MemoryConfig(embedder=...))"
        ) from exc
    if args.json:
        emit_json(console, dataclasses.asdict(report))
        return EXIT_OK
    moved = (
        f"; the damaged index was moved to {report.moved_to}"
        if report.moved_to
        else "; the index could be read"
    )
    console.print(
        plain(
            f"repaired {folder}: {report.applied} records applied, {report.embedded} texts "
            f"embedded, {report.removed} stray rows removed{moved}"
        )
    )
    return EXIT_OK


def _cmd_copy_ledger(args: argparse.Namespace, console: Console) -> int:
    from shared_core.ledger.copying import copy_ledger
    from shared_core.memory.connection import open_ledger

    with (
        open_ledger(args.source, schema=args.source_schema, create=False) as source,
        open_ledger(args.target, schema=args.target_schema) as target,
    ):
        report = copy_ledger(source, target, samples=args.samples)
    if args.json:
        emit_json(console, {**dataclasses.asdict(report), "faithful": report.faithful})
    else:
        verdict = (
            "a faithful copy" if report.faithful else "MISMATCHES: " + "; ".join(report.mismatches)
        )
        console.print(
            plain(
                f"copied {report.statements} statements and {report.versions} versions; "
                f"{report.checked} as-of points compared: {verdict}"
            )
        )
    return EXIT_OK if report.faithful else EXIT_ERROR


def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from shared_core.cli.demo import run_demo

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
        try:
            explanation = ledger.explain(args.fact_id)
        except FactNotFoundError:
            explanation = ledger.explain(resolve_fact_id(ledger, args.fact_id))
    if args.json:
        emit_json(console, explanation_to_dict(explanation))
        return EXIT_OK
    console.print(plain(explanation.summary()))
    if explanation.versions:
        console.print(versions_table(explanation))
    else:
        console.print(plain("This statement has no version of its own."))
    return EXIT_OK


def _cmd_namespaces(args: argparse.Namespace, console: Console) -> int:
    with open_existing_ledger(Path(args.ledger)) as ledger:
        counts = {name: len(ledger.current(namespace=name)) for name in ledger.namespaces()}
    if args.json:
        emit_json(console, [{"namespace": name, "current": n} for name, n in counts.items()])
        return EXIT_OK
    if not counts:
        console.print(plain("Namespaces: none holds a current fact."))
        return EXIT_OK
    from shared_core.cli.render import add_row, new_table

    table = new_table("Namespaces", ["namespace", "current facts"])
    for name, count in counts.items():
        add_row(table, [name, str(count)])
    console.print(table)
    return EXIT_OK


def resolve_fact_id(ledger: SQLiteLedger, given: str) -> str:
    """The one fact id that ends (as the tables' short ids do) or else starts with ``given``;
    none -> FactNotFoundError, several -> a CliError listing them."""
    text = given.strip()
    statements, _ = ledger.export() if text else ([], [])
    found = sorted(
        {row.fact_id for row in statements if row.fact_id.endswith(text)}
        or {row.fact_id for row in statements if row.fact_id.startswith(text)}
    )
    if len(found) == 1:
        return found[0]
    if not found:
        raise FactNotFoundError(given)
    shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    raise CliError(
        f"{given!r} is the short form of {len(found)} fact ids: {shown}; pass more characters "
        "or the full id (--json prints full ids)",
        EXIT_USAGE,
    )


# --------------------------------------------------------------------------- ledger files
def refuse_read_only(path: Path, why: str) -> None:
    """A CliError, not a traceback, when ``path`` or its folder cannot be written (SQLite writes
    its journal beside the file even to read, and ``why``)."""
    for target in (path.parent, path):
        if target.exists() and not os.access(target, os.W_OK):
            kind = "folder" if target.is_dir() else "file"
            raise CliError(
                f"{target} is a read-only {kind}: the ledger cannot be opened there ({why}); "
                "fix: make it writable (chmod u+w), or copy the ledger to a writable place "
                f"(`{PROG} copy-ledger {path} COPY.sqlite`) and read the copy",
                EXIT_USAGE,
            )


@contextmanager
def open_existing_ledger(path: Path) -> Iterator[SQLiteLedger]:
    """Open a ledger file that must already exist (read commands never create one)."""
    from shared_core.ledger import SQLiteLedger

    if path.is_file():
        refuse_read_only(path, "SQLite writes its -wal and -shm files beside it even to read")
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
