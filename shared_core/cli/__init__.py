"""The ``temporal-rag`` command line (see :mod:`shared_core.cli.commands`)."""

from shared_core.cli.commands import main

__all__ = ["main"]
