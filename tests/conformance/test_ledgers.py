"""Both shipped ledgers pass the conformance suite."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shared_core.clock import Clock
from shared_core.ledger import InMemoryLedger, Ledger, SQLiteLedger
from tests.conformance.ledger_suite import LedgerConformance


class TestInMemoryLedger(LedgerConformance):
    examples = 200

    @contextmanager
    def open_ledger(self, clock: Clock) -> Iterator[Ledger]:
        with InMemoryLedger(clock=clock) as ledger:
            yield ledger


class TestSQLiteLedger(LedgerConformance):
    examples = 120

    @contextmanager
    def open_ledger(self, clock: Clock) -> Iterator[Ledger]:
        with (
            tempfile.TemporaryDirectory() as folder,
            SQLiteLedger(
                Path(folder) / "ledger.sqlite", clock=clock, durability="normal"
            ) as ledger,
        ):
            yield ledger
