"""A search request with its times resolved, and which ledger versions it may return."""

from __future__ import annotations

from dataclasses import dataclass

from shared_core.clock import Instant
from shared_core.filters import matches
from shared_core.ledger.results import StoredVersion
from shared_core.memory.options import SearchOptions


@dataclass(frozen=True, slots=True)
class Query:
    """A search request with its times resolved: ``valid_at`` is the instant asked about (now
    unless the options say otherwise; ``None``: any valid time, i.e. history) and ``known_at``
    ``None`` means as known now."""

    text: str | None  # None: a search by vector
    options: SearchOptions
    valid_at: Instant | None
    known_at: Instant | None

    def shows(self, version: StoredVersion) -> bool:
        """Whether this query may return ``version``: its namespace, times and ``where``."""
        record = version.record
        return (
            record.namespace == self.options.namespace
            and record.visible(self.valid_at, self.known_at)
            and matches(self.options.where, record.attributes)
        )
