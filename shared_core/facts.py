"""The fact model: what a memory holds, how keys are normalised, and why a version ended.

A :class:`Fact` is one statement as the caller wrote it (``text`` plus, when it has a key, subject,
relation and object) and, once stored, one *version*: the interval of valid time over which the
ledger believes it, and the interval of record time over which the ledger believed that.
Stored facts come back from the ledger with ``recorded_at`` set; the ledger owns ``retired_at``,
``end_reason`` and ``retire_reason``.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple

from shared_core.clock import require_aware
from shared_core.errors import InvalidInputError

ObjectValue = str | int | float | bool
DEFAULT_NAMESPACE = "default"
MAX_TEXT_CHARS = 1_000_000
MAX_NAME_CHARS = 1_000
MAX_METADATA_BYTES = 1_000_000
"""The most a fact's metadata may weigh, as UTF-8 JSON (docs/semantics.md#metadata-limits)."""
MAX_METADATA_FIELDS = 1_000
"""The most top-level fields a fact's metadata may hold: each is a filterable attribute the
vector index keeps per row (Chroma's SQLite fails a write of about 8,000)."""

_SPACES = re.compile(r"\s+")
_RELATION_SEPARATORS = re.compile(r"[\s\-]+")


class Cardinality(StrEnum):
    """How many objects a (subject, relation) may hold at once."""

    ONE = "one"  # a new object supersedes the old one (the default)
    MANY = "many"  # objects accumulate; only a retraction ends one


class Decision(StrEnum):
    """What a write did."""

    NOVEL = "novel"  # a new version; nothing was valid for the key at valid_from
    REINFORCED = "reinforced"  # the same object was already valid at valid_from; provenance added
    SUPERSEDED = "superseded"  # the version valid at valid_from was closed there
    BACKFILLED = "backfilled"  # older than everything known for the key: history, not current
    CORRECTED = "corrected"  # replaced a statement with the same valid_from: it was never true
    DUPLICATE = "duplicate"  # an identical statement is already stored; nothing written
    RETRACTED = "retracted"  # a retraction closed the version(s) valid at its time
    WITHDRAWN = "withdrawn"  # a statement was retired in record time (it was never true)
    RESTORED = "restored"  # unretire: a retired statement or an undone retraction is back


class FactStatus(StrEnum):
    """Where a stored version stands."""

    UNRECORDED = "unrecorded"  # not stored yet
    CURRENT = "current"  # believed, validity open
    SUPERSEDED = "superseded"  # believed, closed by a newer fact with another object
    RETRACTED = "retracted"  # believed, closed by a retraction
    ENDED = "ended"  # believed, closed by its own valid_to
    RETIRED = "retired"  # no longer believed as recorded (see retire_reason)


class ReasonKind(StrEnum):
    """Why a version's validity closed (first three) or why a record was retired (the rest)."""

    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    EXPIRED = "expired"
    REVISED = "revised"  # replaced by a newer record of the same fact (its interval changed)
    CORRECTED = "corrected"  # the statement was wrong and was replaced
    WITHDRAWN = "withdrawn"  # the statement was wrong and was withdrawn
    MERGED = "merged"  # absorbed into an adjacent version with the same object
    UNDONE = "undone"  # a retraction that was undone by unretire

    @property
    def phrase(self) -> str:
        """How to say it before the id of the fact that caused it, e.g. "superseded by"."""
        return _REASON_PHRASES[self]


_REASON_PHRASES = {
    ReasonKind.SUPERSEDED: "superseded by",
    ReasonKind.RETRACTED: "retracted by",
    ReasonKind.EXPIRED: "ended at the valid_to given by",
    ReasonKind.REVISED: "revised because of",
    ReasonKind.CORRECTED: "corrected by",
    ReasonKind.WITHDRAWN: "withdrawn",
    ReasonKind.MERGED: "merged into",
    ReasonKind.UNDONE: "undone",
}


@dataclass(frozen=True, slots=True)
class Reason:
    """Why something ended: what kind, which fact caused it, under which rule, how sure."""

    kind: ReasonKind
    by: str | None
    rule: str
    score: float | None = None


class FactKey(NamedTuple):
    """The normalised identity of what a fact is about; namespaces never share keys."""

    namespace: str
    subject: str
    relation: str


def new_fact_id() -> str:
    """A fresh fact id: a UUIDv7 (RFC 9562) as 32 hex digits.

    The first 48 bits are the wall-clock millisecond it was made in, the rest random, so ids
    sort by creation time and a new fact's id lands at the end of the ledger's fact-id indexes
    instead of on a random page (writes at a million versions touch fewer pages). The id says
    when it was made, to the millisecond; it is an identity, never a valid or record time.
    """
    millis = time.time_ns() // 1_000_000 & _UUID7_TIME_MASK
    value = millis << 80 | int.from_bytes(os.urandom(10), "big")
    return f"{value & _UUID7_CLEAR | _UUID7_VERSION_AND_VARIANT:032x}"


_UUID7_TIME_MASK = (1 << 48) - 1
_UUID7_CLEAR = ~((0xF << 76) | (0x3 << 62))  # the version nibble and the variant bits
_UUID7_VERSION_AND_VARIANT = (0x7 << 76) | (0x2 << 62)


def normalize_text(value: str) -> str:
    """Unicode NFKC, casefolded, trimmed, inner whitespace collapsed to one space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", value).casefold()).strip()


def normalize_subject(value: str) -> str:
    """Normalise a subject for keys (the original spelling is kept for display)."""
    return normalize_text(value)


def normalize_relation(value: str) -> str:
    """Normalise a relation for keys: like subjects, and spaces/hyphens become underscores."""
    return _RELATION_SEPARATORS.sub("_", normalize_text(value)).strip("_")


def normalize_object(value: ObjectValue) -> str:
    """A string that is equal for objects the ledger treats as equal (``1 == 1.0``, not ``"1"``)."""
    if isinstance(value, bool):
        return "b:true" if value else "b:false"
    if isinstance(value, int):
        return f"n:{value}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return f"n:{int(value)}"
        return f"n:{value!r}"
    return f"s:{normalize_text(value)}"


def encode_object(value: ObjectValue) -> str:
    """The object's display form as JSON (keeps its type)."""
    return json.dumps(value, ensure_ascii=False)


def decode_object(encoded: str) -> ObjectValue:
    """Inverse of :func:`encode_object`."""
    value: ObjectValue = json.loads(encoded)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One statement and, once stored, one version of it in valid time and record time.

    Plain prose (no subject and relation) is a fact without a key: it never supersedes and is
    only filtered at read time. Times are aware datetimes; ``None`` ends are open. On input
    ``valid_from=None`` means "from when it is recorded" and ``recorded_at=None`` means "now".
    """

    text: str
    subject: str | None = None
    relation: str | None = None
    object: ObjectValue | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    namespace: str = DEFAULT_NAMESPACE
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    id: str = field(default_factory=new_fact_id)
    recorded_at: datetime | None = None
    retired_at: datetime | None = None
    end_reason: Reason | None = None
    retire_reason: Reason | None = None
    _key: FactKey | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate_fact(self)
        object.__setattr__(self, "metadata", freeze_metadata(self.metadata, "metadata"))
        check_metadata_size(self.metadata, "metadata")

    @classmethod
    def trusted(cls, **fields: Any) -> Fact:
        """Build a fact from values a store already validated (skips validation; internal)."""
        fact = object.__new__(cls)
        setter = object.__setattr__
        for name, default in _FIELD_DEFAULTS.items():
            setter(fact, name, fields.get(name, default))
        setter(fact, "_key", None)
        return fact

    def __copy__(self) -> Fact:
        return self  # immutable all the way down

    def __deepcopy__(self, memo: dict[int, Any]) -> Fact:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        fields = {name: getattr(self, name) for name in _FIELD_NAMES}
        fields["metadata"] = thaw_metadata(self.metadata)
        return (_unpickle_fact, (fields,))

    @property
    def key(self) -> FactKey | None:
        """The normalised (namespace, subject, relation), or ``None`` for prose."""
        if self.subject is None or self.relation is None:
            return None
        if self._key is None:  # computed once: writes and queries ask for it often
            key = FactKey(
                self.namespace, normalize_subject(self.subject), normalize_relation(self.relation)
            )
            object.__setattr__(self, "_key", key)
        return self._key

    @property
    def object_key(self) -> str | None:
        """The normalised object, or ``None`` for prose."""
        return None if self.object is None else normalize_object(self.object)

    @property
    def superseded_by(self) -> str | None:
        """Id of the fact whose newer object closed this version, if one did."""
        reason = self.end_reason
        return reason.by if reason and reason.kind is ReasonKind.SUPERSEDED else None

    @property
    def status(self) -> FactStatus:
        """Current, superseded, retracted, ended or retired (see :class:`FactStatus`)."""
        if self.recorded_at is None:
            return FactStatus.UNRECORDED
        if self.retired_at is not None:
            return FactStatus.RETIRED
        if self.valid_to is None:
            return FactStatus.CURRENT
        kind = self.end_reason.kind if self.end_reason else ReasonKind.EXPIRED
        return {
            ReasonKind.SUPERSEDED: FactStatus.SUPERSEDED,
            ReasonKind.RETRACTED: FactStatus.RETRACTED,
        }.get(kind, FactStatus.ENDED)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 strings)."""
        out: dict[str, Any] = {}
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, Reason):
                value = {
                    "kind": str(value.kind),
                    "by": value.by,
                    "rule": value.rule,
                    "score": value.score,
                }
            elif name == "metadata":
                value = thaw_metadata(value)
            out[name] = value
        out["status"] = str(self.status)
        out["superseded_by"] = self.superseded_by
        return out


_FIELD_NAMES = tuple(name for name in Fact.__dataclass_fields__ if not name.startswith("_"))


def _unpickle_fact(fields: dict[str, Any]) -> Fact:
    fields["metadata"] = freeze_metadata(fields["metadata"], "metadata")
    return Fact.trusted(**fields)


_FIELD_DEFAULTS: dict[str, Any] = dict.fromkeys(_FIELD_NAMES) | {
    "namespace": DEFAULT_NAMESPACE,
    "metadata": MappingProxyType({}),
}


def _check_string(value: object, field_name: str, *, limit: int = MAX_NAME_CHARS) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(
            field_name, f"expected a string, got {type(value).__name__}", "pass a str"
        )
    if not value.strip():
        raise InvalidInputError(field_name, "is empty", "pass a non-empty string")
    if len(value) > limit:
        raise InvalidInputError(
            field_name, f"is {len(value):,} characters long", f"keep it under {limit:,}"
        )
    return _check_unicode(value, field_name)


def _check_unicode(value: str, field_name: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            field_name,
            "holds characters that are not valid Unicode (lone surrogates)",
            "decode the source text properly before storing it",
        ) from exc
    return value


def _check_object(value: object) -> None:
    if isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(
                "object",
                f"{value} is not a finite number",
                "store NaN or infinities as text, or leave them out",
            )
        return
    if isinstance(value, str):
        _check_string(value, "object")
        return
    raise InvalidInputError(
        "object",
        f"type {type(value).__name__} is not supported",
        "use str, int, float or bool (serialise structured values to a string)",
    )


def check_namespace(value: object, field_name: str = "namespace") -> str:
    """A valid namespace (compared verbatim: tenants never merge by spelling)."""
    return _check_string(value, field_name)


def key_subject(value: object, field_name: str = "subject") -> str:
    """Validate a subject and return its normalised key form."""
    normalised = normalize_subject(_check_string(value, field_name))
    if not normalised:
        raise InvalidInputError(field_name, "is empty once normalised", "use a real name")
    return normalised


def key_relation(value: object, field_name: str = "relation") -> str:
    """Validate a relation and return its normalised key form."""
    normalised = normalize_relation(_check_string(value, field_name))
    if not normalised:
        raise InvalidInputError(field_name, "is empty once normalised", "use words")
    return normalised


def _validate_fact(fact: Fact) -> None:
    _check_string(fact.id, "id")
    _check_string(fact.text, "text", limit=MAX_TEXT_CHARS)
    check_namespace(fact.namespace)
    has_subject, has_relation = fact.subject is not None, fact.relation is not None
    if has_subject != has_relation:
        missing = "relation" if has_subject else "subject"
        raise InvalidInputError(
            missing,
            f"is missing while {'subject' if has_subject else 'relation'} is set",
            "give both subject and relation for a keyed fact, or neither for plain prose",
        )
    if has_subject:
        key_subject(fact.subject)
        key_relation(fact.relation)
        if fact.object is None:
            raise InvalidInputError(
                "object",
                "is missing on a keyed fact",
                "give the object (to end a value, use ledger.retract instead)",
            )
        _check_object(fact.object)
    elif fact.object is not None:
        raise InvalidInputError(
            "object",
            "is set on a fact without subject and relation",
            "give subject and relation too, or drop the object for plain prose",
        )
    for name in ("valid_from", "valid_to", "recorded_at", "retired_at"):
        value = getattr(fact, name)
        if value is not None:
            require_aware(value, name)
    if (
        fact.valid_from is not None
        and fact.valid_to is not None
        and (fact.valid_to <= fact.valid_from)
    ):
        raise InvalidInputError(
            "valid_to",
            f"{fact.valid_to.isoformat()} is not after valid_from {fact.valid_from.isoformat()}",
            "use a valid_to later than valid_from, or None",
        )


def freeze_metadata(value: object, field_name: str) -> Mapping[str, Any]:
    """A read-only deep copy of JSON-compatible metadata (clear error otherwise)."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            field_name, f"expected a mapping, got {type(value).__name__}", "pass a dict"
        )
    frozen = _freeze(value, field_name)
    assert isinstance(frozen, Mapping)
    return frozen


def _freeze(value: object, path: str) -> Any:
    if isinstance(value, str):
        return _check_unicode(value, path)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(path, f"{value} is not valid JSON", "use a finite number")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInputError(path, f"key {key!r} is not a string", "use string keys")
            out[key] = _freeze(item, f"{path}.{key}")
        return MappingProxyType(out)
    if isinstance(value, list | tuple):
        return tuple(_freeze(item, f"{path}[{i}]") for i, item in enumerate(value))
    raise InvalidInputError(
        path,
        f"type {type(value).__name__} is not JSON-compatible",
        "use str, int, float, bool, None, lists and dicts (convert datetimes to ISO strings)",
    )


def check_metadata_size(metadata: Mapping[str, Any], field_name: str) -> None:
    """InvalidInputError naming ``field_name`` when ``metadata`` holds more than
    :data:`MAX_METADATA_FIELDS` top-level fields or weighs more than
    :data:`MAX_METADATA_BYTES` as UTF-8 JSON (values JSON cannot hold count as their repr)."""
    fix = (
        "keep metadata to what you filter and cite (ids, dates, tags): put long content in "
        "the text, or in a store of your own with its id in the metadata"
    )
    if len(metadata) > MAX_METADATA_FIELDS:
        raise InvalidInputError(
            field_name,
            f"has {len(metadata):,} fields, more than the limit of {MAX_METADATA_FIELDS:,}",
            fix,
        )
    encoded = json.dumps(thaw_metadata(metadata), ensure_ascii=False, default=repr, skipkeys=True)
    size = len(encoded.encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(
            field_name,
            f"is {size:,} bytes as JSON, more than the limit of {MAX_METADATA_BYTES:,}",
            fix,
        )


def thaw_metadata(value: object) -> Any:
    """Plain dicts and lists from frozen metadata (for JSON and callers that want to edit)."""
    if isinstance(value, Mapping):
        return {key: thaw_metadata(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_metadata(item) for item in value]
    return value


def metadata_to_json(value: Mapping[str, Any]) -> str:
    """Serialise frozen metadata for storage."""
    if not value:
        return "{}"
    return json.dumps(thaw_metadata(value), ensure_ascii=False, allow_nan=False, sort_keys=True)


_EMPTY_METADATA: Mapping[str, Any] = MappingProxyType({})


def metadata_from_json(encoded: str) -> Mapping[str, Any]:
    """Inverse of :func:`metadata_to_json` (read-only)."""
    if encoded == "{}":
        return _EMPTY_METADATA
    frozen = _freeze(json.loads(encoded), "metadata")
    assert isinstance(frozen, Mapping)
    return frozen
