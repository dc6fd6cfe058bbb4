"""Reading an LLM judge's answers defensively: JSON in prose or fences, numbers, yes and no.

Nothing here raises on bad input: an unusable answer or pair is reported, not crashed on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from shared_core.phi_t import Candidate

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_VERDICT = re.compile(r"[\W_]*(?:answer[\W_]*)?(yes|no)\b", re.IGNORECASE)
_MAX_JSON_STARTS = 64  # bounds the scan for a JSON object inside prose
_SNIPPET_CHARS = 200  # how much of a bad answer a log line quotes


def find_json(text: str, accept: Callable[[Any], bool]) -> Any | None:
    """The first JSON value that ``accept`` takes: the whole text, a ``` fence, or in prose."""
    chunks = [text.strip(), *(match.group(1).strip() for match in _FENCE.finditer(text))]
    for chunk in chunks:
        try:
            value = json.loads(chunk)
        except (ValueError, RecursionError):
            continue
        if accept(value):
            return value
    decoder = json.JSONDecoder()
    starts = [match.start() for match in re.finditer(r"\{", text)][:_MAX_JSON_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if accept(value):
            return value
    return None


def has_conflict_list(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("conflicts"), list)


def read_pairs(
    items: list[Any], window: Sequence[int], pool: Sequence[Candidate]
) -> tuple[set[tuple[int, int]], list[str]]:
    """(older, newer) candidate indices from 1-based statement numbers, and why others fail."""
    found: set[tuple[int, int]] = set()
    problems: list[str] = []
    for item in items:
        numbers = two_ints(item)
        if numbers is None:
            problems.append(f"{snippet(item)} is not two statement numbers")
            continue
        first, second = numbers
        if not (1 <= first <= len(window) and 1 <= second <= len(window)):
            problems.append(f"{snippet(item)} names a statement outside 1..{len(window)}")
            continue
        if first == second:
            problems.append(f"{snippet(item)} pairs a statement with itself")
            continue
        one, other = window[first - 1], window[second - 1]
        if pool[other].is_newer_than(pool[one]):
            found.add((one, other))
        elif pool[one].is_newer_than(pool[other]):
            found.add((other, one))  # given newer first: the timestamps decide
        else:
            problems.append(f"{snippet(item)} pairs two statements with the same time")
    return found, problems


def two_ints(item: Any) -> tuple[int, int] | None:
    if isinstance(item, list) and len(item) == 2:
        values = item
    elif isinstance(item, dict) and "older" in item and "newer" in item:
        values = [item["older"], item["newer"]]
    else:
        return None
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return values[0], values[1]
    return None


def read_verdict(answer: str) -> bool | None:
    """Yes (True), no (False), or None when the answer says neither."""
    match = _VERDICT.match(answer)
    if match is not None:
        return match.group(1).lower() == "yes"
    payload = find_json(
        answer, lambda v: isinstance(v, dict) and isinstance(v.get("conflict"), bool)
    )
    return None if payload is None else bool(payload["conflict"])


def snippet(value: object) -> str:
    """A repr short enough for a log line."""
    text = repr(value)
    return text if len(text) <= _SNIPPET_CHARS else text[:_SNIPPET_CHARS] + "..."
