"""Noise on rendered statements: asides, sources, chatty lowercase and timestamps.

The texts are data, ``families/noise.json``, loaded on first use.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from temporal_rag_training.datafiles import Node, build, read
from temporal_rag_training.rendering import Said, capitalise

NOISE_FILE = "noise.json"
_CHATTY_ENDS = ("", "", "", ".", " lol", " haha", "!")
SOURCE_SHARE = 0.15
"""The share of (not chatty) statements :func:`dress` gives a source, as a prefix or a suffix."""
_PREFIX_PART = 0.6  # of the sourced statements, the share whose source is a prefix
_MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class Noise:
    """The texts of ``noise.json``."""

    source_prefixes: tuple[str, ...]  # "Per the CRM,"
    source_suffixes: tuple[str, ...]  # " (per the CRM)"
    asides: tuple[str, ...]  # ", for what it's worth"
    chatty: tuple[str, ...]  # "btw": the statement then goes lower case
    still: tuple[tuple[str, str], ...]  # (prefix, suffix) around a repeated statement
    no_prefix: tuple[str, ...]  # statements starting with these get no source prefix


@functools.cache
def noise() -> Noise:
    """The noise texts."""
    root = read(NOISE_FILE)
    still = tuple(_still(node) for node in root.require("still").children())
    texts = build(Noise, root, still=still)
    for key in ("source_prefixes", "source_suffixes", "asides", "chatty", "still"):
        if not getattr(texts, key):
            root.require(key).fail("should not be empty")
    return texts


def _still(node: Node) -> tuple[str, str]:
    node.entries(["prefix", "suffix"])
    prefix, suffix = node.get("prefix"), node.get("suffix")
    return (
        prefix.text() if prefix is not None else "",
        suffix.text() if suffix is not None else "",
    )


def dress(rng: random.Random, said: Said, stamp: str = "", *, sources: float = SOURCE_SHARE) -> str:
    """The statement with optional noise: an aside, a source (for about ``sources`` of the
    statements that are not chatty), chatty lowercase, a stamp."""
    texts = noise()
    text = said.text
    if rng.random() < 0.1:
        text += rng.choice(texts.asides)
    if rng.random() < 0.09:
        text = f"{rng.choice(texts.chatty)} {text}".lower()
        text += rng.choice(_CHATTY_ENDS)
    else:
        prefix = suffix = ""
        roll = rng.random()
        if roll < sources * _PREFIX_PART and not text.startswith(texts.no_prefix):
            prefix = rng.choice(texts.source_prefixes) + " "
        elif roll < sources:
            suffix = rng.choice(texts.source_suffixes)
        if said.may_capitalise and not prefix.endswith(", "):
            text = capitalise(text)
        end = "." if rng.random() < 0.88 else rng.choice(("", "!"))
        text = f"{prefix}{text}{suffix}{end}"
    return f"{stamp} {text}" if stamp else text


def stamps(rng: random.Random, *, events: bool) -> tuple[str, str]:
    """Timestamps for (older, newer), newer after older; mostly none, and none for ``events``."""
    if rng.random() >= 0.07 or events:
        return "", ""
    year = rng.randint(2019, 2024)
    first = rng.randint(0, 300)
    second = first + rng.randint(1, 35)
    style = rng.randrange(3)
    return _stamp(year, first, style), _stamp(year, second, style)


def _stamp(year: int, day_of_year: int, style: int) -> str:
    month, day = divmod(day_of_year, 28)
    day += 1
    if style == 0:
        return f"{year}-{month + 1:02d}-{day:02d}:"
    if style == 1:
        return f"({day} {_MONTH_ABBR[month]} {year})"
    return f"{_MONTH_ABBR[month]} {day}, {year} —"
