"""Every shipped ledger passes the conformance suite."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from shared_core.clock import Clock
from shared_core.ledger import InMemoryLedger, Ledger, PostgresLedger, SQLiteLedger
from tests.conformance.ledger_suite import LedgerConformance
from tests.servers import drop_schema


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


class TestPostgresLedger(LedgerConformance):
    """On a real PostgreSQL server; each ledger in a schema of its own, dropped after."""

    examples = 60
    url = ""

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def server(cls, postgres_url: str) -> None:
        cls.url = postgres_url

    @contextmanager
    def open_ledger(self, clock: Clock) -> Iterator[Ledger]:
        name = f"t_{uuid.uuid4().hex[:12]}"
        try:
            with PostgresLedger(self.url, schema=name, clock=clock) as ledger:
                yield ledger
        finally:
            drop_schema(self.url, name)
