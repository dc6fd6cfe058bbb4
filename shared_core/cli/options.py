"""What every ``temporal-rag`` subcommand shares: the program name, exit codes, the error a
handler raises, and argument types. Subcommands of other distributions (``temporal-rag bench``
from ``temporal-rag-bench``, ``temporal-rag kappa-eval`` from ``temporal-rag-training``) build on
these; see :func:`shared_core.cli.commands.build_parser` for how they are found.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

from shared_core.clock import parse_datetime
from shared_core.errors import InvalidInputError

if TYPE_CHECKING:
    from rich.console import Console

PROG = "temporal-rag"
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace, "Console"], int]
"""A subcommand: its parsed arguments and the console to print to -> the exit code."""

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The subparsers a plugin's ``register`` function adds its commands to."""


class CliError(Exception):
    """A failure reported as one line on stderr with an exit code (no traceback)."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def positive_int(least: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``least``."""

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


def datetime_arg(option: str) -> Callable[[str], datetime]:
    """An argparse type: an ISO-8601 datetime with an offset (naive ones are usage errors)."""

    def parse(text: str) -> datetime:
        try:
            return parse_datetime(text, option)
        except InvalidInputError as exc:  # argparse reports it as a usage error (exit 2)
            raise argparse.ArgumentTypeError(f"{exc.problem}; {exc.fix}") from exc

    parse.__name__ = "datetime"  # argparse names the type in some messages
    return parse
