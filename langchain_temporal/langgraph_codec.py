"""How :class:`~langchain_temporal.TemporalStore` keeps LangGraph items in a TemporalMemory.

Pure functions (no langgraph import), each reversible where it names something:

- **Namespaces.** A LangGraph namespace, a tuple of labels, is the memory namespace
  ``"langgraph"`` followed by ``"." + label`` for each label: ``("users", "ana")`` is
  ``"langgraph.users.ana"``. LangGraph refuses labels that are empty or hold a ``"."`` (every
  op is checked with its ``validate_op_namespace``), so splitting on ``"."`` gives the labels
  back and two namespaces never meet. The ``langgraph`` root keeps the store's namespaces apart
  from the memory's others and gives the empty tuple a name of its own.
- **Keys.** An item is one keyed fact: subject the encoded key, relation ``langgraph_item``.
  The core compares subjects case- and space-insensitively (NFKC, casefold, whitespace
  collapsed), while LangGraph keys are exact, so the key is percent-encoded into a form that
  normalisation leaves alone: printable ASCII stays as it is except capitals, ``%`` and space;
  every other character becomes ``%xx`` per UTF-8 byte (lower-case hex). ``"user_1"`` stays
  ``"user_1"``, ``"Prefs"`` is ``"%50refs"``; the empty key is ``"%"``.
- **Values and texts.** The value (a JSON object) is kept verbatim in the fact's metadata; the
  fact's text is what the index config says to embed (:func:`item_text`), and the metadata
  also keeps the paths it was read from (``fields``) and its digest (:func:`text_digest`), so
  a text corrected through the memory is read back as the value it stands for
  (:func:`corrected_value`).
- **Filters.** :func:`value_matches` is LangGraph's in-memory store's filter: exact match on
  value fields, nested objects and lists compared as JSON, and the ``$eq``, ``$ne``, ``$gt``,
  ``$gte``, ``$lt``, ``$lte`` operators.
"""

from __future__ import annotations

import hashlib
import json
import math
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from shared_core.errors import InvalidInputError
from shared_core.facts import MAX_NAME_CHARS

NAMESPACE_ROOT = "langgraph"
"""The memory namespace of the empty LangGraph namespace; every other one starts with it."""
ITEM_RELATION = "langgraph_item"
"""The relation of every item's fact (its subject is the encoded key)."""
EMPTY_KEY = "%"  # never produced otherwise: an encoded "%" is always followed by two hex digits

_KEPT = frozenset(chr(c) for c in range(0x21, 0x7F)) - set("ABCDEFGHIJKLMNOPQRSTUVWXYZ%")

TextPaths = Sequence[tuple[str, str | list[str]]]
"""Where to read an item's text: (path as written, its tokens or ``"$"`` for the whole value)."""


def encode_namespace(labels: tuple[str, ...]) -> str:
    """The memory namespace of a LangGraph namespace (labels already validated)."""
    return ".".join((NAMESPACE_ROOT, *labels))


def decode_namespace(namespace: str) -> tuple[str, ...] | None:
    """The LangGraph namespace of a memory namespace, or ``None`` if it is not the store's."""
    if namespace == NAMESPACE_ROOT:
        return ()
    head, dot, rest = namespace.partition(".")
    if head != NAMESPACE_ROOT or not dot:
        return None
    return tuple(rest.split("."))


def encode_key(key: str) -> str:
    """The fact subject of a LangGraph key (see the module docstring)."""
    if not isinstance(key, str):
        raise InvalidInputError("key", f"is a {type(key).__name__}", "pass a str")
    if not key:
        return EMPTY_KEY
    encoded = "".join(
        char if char in _KEPT else "".join(f"%{byte:02x}" for byte in char.encode()) for char in key
    )
    if len(encoded) > MAX_NAME_CHARS:
        raise InvalidInputError(
            "key",
            f"is {len(encoded):,} characters long once encoded",
            f"keep keys under {MAX_NAME_CHARS:,} characters (capitals and non-ASCII count 3+)",
        )
    return encoded


def decode_key(subject: str) -> str:
    """Inverse of :func:`encode_key`."""
    if subject == EMPTY_KEY:
        return ""
    return urllib.parse.unquote(subject, errors="strict")


def json_text(value: Mapping[str, Any]) -> str:
    """The whole value as text, as LangGraph embeds the path ``"$"``."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def item_text(
    value: Mapping[str, Any],
    paths: TextPaths | None,
    texts_at: Callable[[Any, str | list[str]], list[str]],
) -> tuple[str, bool]:
    """The text the memory embeds for an item, and whether the item is indexed.

    ``paths`` ``None`` (no index config, or ``index=False``) or paths that find no text: the
    whole value as JSON, not indexed (a query search ranks it after every indexed item, with no
    score). Otherwise the texts found, in path order, one per line: one vector per item where
    LangGraph's in-memory store embeds each text and keeps the best match.
    """
    if paths is not None:
        texts = [
            text
            for _, tokens in paths
            for text in ([json_text(value)] if tokens == "$" else texts_at(value, tokens))
        ]
        joined = "\n".join(texts)
        if joined.strip():
            return joined, True
    return json_text(value), False


def value_digest(value: Mapping[str, Any], text: str, indexed: bool) -> str:
    """The fact's object: equal for equal values embedded alike, so a put that changes
    nothing reinforces the current version instead of writing a new one."""
    canonical = json.dumps([value, text, indexed], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def placeholder_vector(text: str, dimension: int) -> list[float]:
    """The vector kept for an item that is not indexed, instead of an embedding: a unit vector
    drawn from the text's SHA-256 (distinct texts, distinct vectors; no embedder is called).
    The store never ranks such items by it (they are listed, not ranked)."""
    raw = b""
    block = 0
    while len(raw) < 2 * dimension:
        raw += hashlib.sha256(f"{block}:{text}".encode()).digest()
        block += 1
    values = [(raw[2 * i] << 8 | raw[2 * i + 1]) / 32767.5 - 1.0 for i in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def text_digest(text: str) -> str:
    """A digest of the text the store wrote for an item, kept beside its value: a fact whose
    text no longer has it was corrected outside the store (``TemporalMemory.correct``)."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def corrected_value(
    value: Mapping[str, Any],
    text: str,
    fields: Sequence[str] | None,
    tokens_of: Callable[[str], list[str]],
) -> dict[str, Any] | None:
    """The value a corrected text stands for, or ``None`` when it cannot be told.

    A text that is a JSON object is the value (an item not indexed, or indexed on ``"$"``, has
    its whole value as text); otherwise, when the item's text was read from one plain field
    (``fields`` one path of object keys, such as ``"text"`` or ``"profile.city"``) holding a
    string, the value with that field set to the text.
    """
    whole = _json_object(text)
    if whole is not None:
        return whole
    if fields is None or len(fields) != 1 or fields[0] == "$":
        return None
    tokens = tokens_of(fields[0])
    if not tokens or any(t.startswith("[") or t == "*" for t in tokens):
        return None
    corrected: dict[str, Any] = json.loads(json.dumps(value))  # a deep copy of plain JSON
    holder: Any = corrected
    for token in tokens[:-1]:
        holder = holder.get(token) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or not isinstance(holder.get(tokens[-1]), str):
        return None
    holder[tokens[-1]] = text
    return corrected


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        found = json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# ---------------------------------------------------------------- filters
_ORDERED: dict[str, Callable[[float, float], bool]] = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}
OPERATORS = ("$eq", "$ne", *_ORDERED)


def value_matches(value: Mapping[str, Any], condition: Mapping[str, Any] | None) -> bool:
    """Whether an item's value satisfies a LangGraph search ``filter`` (``None``: always)."""
    if not condition:
        return True
    return all(_matches(value.get(field), wanted) for field, wanted in condition.items())


def _matches(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(isinstance(name, str) and name.startswith("$") for name in wanted):
            return all(_operator(found, name, operand) for name, operand in wanted.items())
        return isinstance(found, Mapping) and all(
            _matches(found.get(name), inner) for name, inner in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(found, list | tuple)
            and len(found) == len(wanted)
            and all(_matches(f, w) for f, w in zip(found, wanted, strict=True))
        )
    return _equal(found, wanted)


def _operator(found: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return _same(found, operand)
    if name == "$ne":
        return not _same(found, operand)
    compare = _ORDERED.get(name)
    if compare is None:
        raise InvalidInputError(
            "filter", f"operator {name!r} is not supported", f"use one of {', '.join(OPERATORS)}"
        )
    if not (_is_number(found) and _is_number(operand)):
        return False  # like JSON comparisons in SQL: a missing or non-numeric field never matches
    return compare(float(found), float(operand))


def _same(found: Any, wanted: Any) -> bool:
    """Equal as JSON values, all the way down."""
    if isinstance(wanted, Mapping):
        return (
            isinstance(found, Mapping)
            and found.keys() == wanted.keys()
            and all(_same(found[name], inner) for name, inner in wanted.items())
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(found, list | tuple)
            and len(found) == len(wanted)
            and all(_same(f, w) for f, w in zip(found, wanted, strict=True))
        )
    return _equal(found, wanted)


def _equal(found: Any, wanted: Any) -> bool:
    """JSON equality: booleans equal only booleans, numbers compare as numbers."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return isinstance(found, bool) and isinstance(wanted, bool) and found is wanted
    return bool(found == wanted)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not (isinstance(value, float) and math.isnan(value))
    )


# ---------------------------------------------------------------- namespace matching
def namespace_matches(match_type: str, path: Sequence[str], namespace: tuple[str, ...]) -> bool:
    """LangGraph's ``MatchCondition``: ``path`` is a prefix (or suffix) of ``namespace``, label by
    label, ``"*"`` matching any one label."""
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInputError(
            "match_type", f"{match_type!r} is not supported", "use 'prefix' or 'suffix'"
        )
    return all(wanted in ("*", label) for label, wanted in pairs)


def fixed_prefix(path: Sequence[str]) -> tuple[str, ...]:
    """The labels of a prefix path before its first wildcard (what a ledger query can narrow)."""
    labels: list[str] = []
    for label in path:
        if label == "*":
            break
        labels.append(label)
    return tuple(labels)
