"""Where a TemporalMemory's ledger and index live, from one location string each."""

from __future__ import annotations

from pathlib import Path

from shared_core.clock import Clock
from shared_core.errors import InvalidInputError
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.ledger import Ledger
from shared_core.ledger.postgres.ledger import PostgresLedger
from shared_core.ledger.sqlite.connection import Durability
from shared_core.ledger.sqlite.ledger import SQLiteLedger

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
CHROMA_SCHEMES = ("http://", "https://")


def open_ledger(
    location: str | Path,
    *,
    schema: str,
    clock: Clock | None = None,
    durability: Durability = "full",
    create: bool = True,
) -> Ledger:
    """A PostgreSQL ledger for ``postgresql://...`` (in ``schema``), else an SQLite file;
    ``create=False`` opens an existing one only (LedgerNotFoundError)."""
    if isinstance(location, str) and location.startswith(POSTGRES_SCHEMES):
        return PostgresLedger(location, schema=schema, clock=clock, create=create)
    _refuse_other_urls("ledger", location, "postgresql://user@host:5432/db or an SQLite file")
    return SQLiteLedger(location, clock=clock, durability=durability, create=create)


def open_index(location: str | Path, *, prefix: str) -> ChromaIndex:
    """An index on a Chroma server for ``http(s)://host:port``, else in a Chroma folder."""
    if isinstance(location, str) and location.startswith(CHROMA_SCHEMES):
        return ChromaIndex.connect(location, prefix=prefix)
    _refuse_other_urls("index", location, "http://host:8000 (chroma run) or a folder")
    return ChromaIndex(location, prefix=prefix)


def _refuse_other_urls(field: str, location: str | Path, fix: str) -> None:
    if not isinstance(location, str | Path) or (isinstance(location, str) and "://" in location):
        raise InvalidInputError(field, f"is {location!r}", f"pass {fix}")
