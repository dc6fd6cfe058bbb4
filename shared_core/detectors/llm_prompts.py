"""Building an LLM detector's prompt: chunks on one line each, their dates, the query."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

from shared_core.phi_t import Candidate

QUERY_BLOCK = "They were retrieved to answer this question: {query}\n"
"""How a prompt's ``{query_block}`` field shows the query (empty without one)."""


def query_fields(query: str | None) -> dict[str, str]:
    """A template's ``{query}`` and ``{query_block}`` fields for ``query`` (empty without one)."""
    text = one_line(query) if query else ""
    return {"query": text, "query_block": QUERY_BLOCK.format(query=text) if text else ""}


def one_line(text: str) -> str:
    """Whitespace collapsed, so a chunk with newlines cannot break the numbered list."""
    return " ".join(text.split())


def date_labels(pool: Sequence[Candidate], members: Sequence[int]) -> dict[int, str]:
    """Per member, its UTC date, or its UTC timestamp when a date would not tell two apart."""
    times: dict[int, datetime | None] = {}
    for index in members:
        stamp = pool[index].timestamp
        times[index] = None if stamp is None else stamp.astimezone(UTC)
    by_day: dict[date, set[datetime]] = {}
    for moment in times.values():
        if moment is not None:
            by_day.setdefault(moment.date(), set()).add(moment)
    precise = any(len(moments) > 1 for moments in by_day.values())
    labels = {}
    for index, moment in times.items():
        if moment is None:
            labels[index] = "undated"
        elif precise:
            labels[index] = moment.isoformat(timespec="seconds")
        else:
            labels[index] = moment.date().isoformat()
    return labels
