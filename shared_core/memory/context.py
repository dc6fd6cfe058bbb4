"""Context packing (MemStrata's read path): surviving facts as one dated block, cut to a budget.

Token counting is documented and replaceable: by default every run of letters or digits and
every other non-space character counts as one token, which over-counts slightly against
common BPE tokenizers for English (so a block that fits here fits there). Pass
``count_tokens`` (e.g. a tiktoken encoder's ``lambda s: len(enc.encode(s))``) to be exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from shared_core.errors import InvalidInputError
from shared_core.memory.hits import Hit

_TOKEN = re.compile(r"\w+|[^\w\s]")
RELEVANCE_DIGITS = 2
"""Scores equal to this many decimals count as equal relevance (then newest-valid first)."""


def count_tokens_default(text: str) -> int:
    """Words and punctuation marks: the documented default token count."""
    return len(_TOKEN.findall(text))


def context_line(hit: Hit) -> str:
    """``[valid 2024-03-01 -> now] Maria moved to Lisbon.`` (valid time, then the sentence)."""
    fact = hit.fact
    start = _day(fact.valid_from) if fact.valid_from is not None else "?"
    end = _day(fact.valid_to) if fact.valid_to is not None else "now"
    return f"[valid {start} -> {end}] {' '.join(fact.text.split())}"


def pack_context(
    hits: Sequence[Hit],
    *,
    token_budget: int,
    count_tokens: Callable[[str], int] | None = None,
) -> str:
    """One block of the hits' sentences, most relevant first and, within equal relevance, the
    newest-valid first; lines are added in that order until the next one would exceed the
    budget. Returns ``""`` when not even the first line fits."""
    if not isinstance(token_budget, int) or isinstance(token_budget, bool) or token_budget < 1:
        raise InvalidInputError(
            "token_budget", f"{token_budget!r} is not a positive int", "use e.g. 512"
        )
    count = count_tokens or count_tokens_default
    block = ""
    for hit in sorted(hits, key=_priority):
        longer = f"{block}\n{context_line(hit)}" if block else context_line(hit)
        if count(longer) > token_budget:  # the whole block is counted: exact for any counter
            break
        block = longer
    return block


def _priority(hit: Hit) -> tuple[float, float]:
    newest = hit.fact.valid_from.timestamp() if hit.fact.valid_from is not None else 0.0
    return (-round(hit.score, RELEVANCE_DIGITS), -newest)


def _day(moment: datetime) -> str:
    if moment.hour or moment.minute or moment.second or moment.microsecond:
        return moment.isoformat(timespec="minutes")
    return moment.date().isoformat()
