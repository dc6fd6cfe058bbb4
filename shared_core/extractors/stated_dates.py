"""Whether a sentence states a date: the deterministic check an LLM's proposed valid time must
pass before it replaces the caller's.

A date (taken in the offset the model wrote it in) is *stated* by a sentence when the sentence
holds, as whole tokens:

1. its year as a four-digit number ("in 2019", "2019-05-03"), or
2. its month's English name or abbreviation and its day ("May 3", "3rd of May", "Sept 14"), or
3. its day and month as a numeric pair, either order ("3/5", "05.03", "5-3").

Anything else (relative dates such as "last May" or "two years ago", a month alone, a weekday)
is not stated: the caller's valid time is kept. A small model copies dates it was shown, so the
check is deliberately strict; a missed date costs the caller's time, a wrong one corrupts
history.
"""

from __future__ import annotations

import re
from datetime import date, datetime

_MONTHS = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
_WORD = re.compile(r"[a-z]+")
_NUMBER = re.compile(r"(?<!\d)(\d{1,4})(?:st|nd|rd|th)?(?!\d)")
_PAIR = re.compile(r"(?<!\d)(\d{1,2})[./-](\d{1,2})(?!\d)")
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def states_date(when: datetime, sentence: str) -> bool:
    """Whether ``sentence`` states the calendar date of ``when`` (see the module docstring)."""
    day = when.date()
    lowered = sentence.lower()
    numbers = {int(found) for found in _NUMBER.findall(lowered)}
    if day.year >= 1000 and day.year in numbers:
        return True
    words = set(_WORD.findall(lowered))
    if day.day in numbers and words.intersection(_MONTHS[day.month - 1]):
        return True
    wanted = {(day.day, day.month), (day.month, day.day)}
    return any((int(a), int(b)) in wanted for a, b in _PAIR.findall(lowered))


def dates_in(text: str) -> frozenset[date]:
    """The ISO calendar dates (``YYYY-MM-DD``) written in ``text``, e.g. a prompt's examples."""
    found = set()
    for year, month, day in _ISO_DATE.findall(text):
        try:
            found.add(date(int(year), int(month), int(day)))
        except ValueError:
            continue
    return frozenset(found)


__all__ = ["dates_in", "states_date"]
