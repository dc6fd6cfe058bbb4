"""What a memory's extractor got wrong so far: counts per kind of problem, and one log line each.

:class:`ExtractionTally` is the writer's counter; :class:`ExtractionReport` is the frozen
snapshot ``TemporalMemory.extraction_report`` returns (the benchmark reads it). Failures,
invalid answers and dropped facts are logged at WARNING, empty extractions and refused dates at
INFO, on this module's logger.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace

from shared_core.extractors.base import Extraction, ProblemKind

logger = logging.getLogger(__name__)

_SNIPPET_CHARS = 80  # how much of the text a log line quotes


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    """Texts per kind of extraction problem (see :data:`~shared_core.extractors.base.ProblemKind`)
    and proposed dates refused because their sentence does not state them."""

    failed: int = 0
    invalid: int = 0
    dropped: int = 0
    empty: int = 0
    refused_dates: int = 0

    @property
    def problems(self) -> int:
        """Texts whose extraction output was bad (failed, invalid or dropped); what
        ``TemporalMemory.extraction_problems`` counts. Empty extractions are not among them."""
        return self.failed + self.invalid + self.dropped


class ExtractionTally:
    """Counts each text's extraction problems (thread-safe) and logs one line per problem."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._report = ExtractionReport()

    @property
    def report(self) -> ExtractionReport:
        """The counts so far."""
        return self._report

    def count(self, text: str, extraction: Extraction) -> None:
        """Count and log what went wrong with ``text``'s ``extraction`` (if anything)."""
        kind = problem_kind(extraction)
        refused = extraction.refused_dates
        if kind is None and not refused:
            return
        with self._lock:
            changes: dict[str, int] = {"refused_dates": self._report.refused_dates + refused}
            if kind is not None:
                changes[kind] = getattr(self._report, kind) + 1
            self._report = replace(self._report, **changes)
        quoted = _snippet(text)
        if kind == "empty":
            logger.info("extraction found no facts in %s; kept as prose", quoted)
        elif kind is not None:
            logger.warning("extraction %s for %s: %s", kind, quoted, extraction.problem)
        if refused:
            logger.info(
                "extraction: %d proposed date(s) not stated in %s; the caller's time is used",
                refused,
                quoted,
            )


def problem_kind(extraction: Extraction) -> ProblemKind | None:
    """What went wrong with ``extraction``: its ``problem_kind``, else ``"invalid"`` if it has
    a ``problem`` (an extractor that does not classify), else nothing."""
    if extraction.problem_kind is not None:
        return extraction.problem_kind
    return "invalid" if extraction.problem is not None else None


def _snippet(text: str) -> str:
    return repr(text if len(text) <= _SNIPPET_CHARS else text[:_SNIPPET_CHARS] + "...")


__all__ = ["ExtractionReport", "ExtractionTally", "problem_kind"]
