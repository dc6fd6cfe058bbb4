"""What a caller hands :class:`~shared_core.memory.TemporalMemory`'s writes, checked before any
work: texts, metadata mappings and times, each refused with a message naming the field and the
fix (an empty text and a text that is not a string get different ones)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shared_core.errors import InvalidInputError, InvalidInputTypeError
from shared_core.facts import Fact, check_metadata_size


def check_text(value: object, field: str) -> str:
    """``value`` if it is a non-empty string: InvalidInputTypeError if it is no string,
    InvalidInputError if it is empty or blank."""
    if not isinstance(value, str):
        raise InvalidInputTypeError(
            field,
            f"is of type {type(value).__name__}, not a string",
            "pass the text to remember as a str (str(value) for a number), or a Fact",
        )
    if not value.strip():
        raise InvalidInputError(
            field,
            "is empty" if not value else "is only whitespace",
            "pass the text to remember (a non-empty string); to store nothing, skip the call",
        )
    return value


def check_metadata(value: object, field: str) -> Mapping[str, Any]:
    """``value`` if it is a mapping (``None``: an empty one) within the size limits
    (:func:`~shared_core.facts.check_metadata_size`), checked before any extraction or
    embedding; InvalidInputTypeError if it is no mapping."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputTypeError(
            field,
            f"is of type {type(value).__name__}, not a mapping",
            'pass a dict of field -> value, e.g. {"source": "chat"}, or None',
        )
    check_metadata_size(value, field)
    return value


def checked_items(
    items: Iterable[object], metadatas: Sequence[object] | None
) -> tuple[list[Any], list[Mapping[str, Any]] | None]:
    """``items`` as a list, each a Fact or a text (:func:`check_text`, field ``items[i]``), and
    ``metadatas`` each a mapping (field ``metadatas[i]``); their counts the writer checks."""
    listed = list(items)
    for position, item in enumerate(listed):
        if not isinstance(item, Fact):
            check_text(item, f"items[{position}]")
    if metadatas is None:
        return listed, None
    if isinstance(metadatas, str | Mapping) or not isinstance(metadatas, Sequence):
        raise InvalidInputTypeError(
            "metadatas",
            f"is of type {type(metadatas).__name__}, not a sequence of mappings",
            "pass a list with one dict per item, or None",
        )
    return listed, [check_metadata(m, f"metadatas[{i}]") for i, m in enumerate(metadatas)]


def checked_vectors(vectors: object, dimension: int) -> dict[str, list[float]]:
    """Vectors a caller already has for some texts (``None``: none), each a sequence of
    ``dimension`` finite floats, else InvalidInputError naming ``vectors[text]``."""
    if vectors is None:
        return {}
    if not isinstance(vectors, Mapping):
        raise InvalidInputTypeError(
            "vectors",
            f"is of type {type(vectors).__name__}, not a mapping",
            "pass a dict of text -> vector (a list of floats), or None",
        )
    checked: dict[str, list[float]] = {}
    for text, vector in vectors.items():
        field = f"vectors[{text!r}]"
        try:
            floats = [float(x) for x in vector]
        except (TypeError, ValueError) as exc:
            raise InvalidInputTypeError(
                field, "is not a sequence of numbers", "pass a list of floats"
            ) from exc
        if len(floats) != dimension or not all(map(math.isfinite, floats)) or not any(floats):
            raise InvalidInputError(
                field,
                f"has {len(floats)} values (finite, not all zero: required)",
                f"pass a vector of the memory's dimension, {dimension}",
            )
        checked[str(text)] = floats
    return checked
