"""The default extractor: a keyed fact taken from named metadata fields, or plain prose.

A text whose metadata names a subject, a relation and an object becomes one keyed statement;
a text without any of the three stays prose. Times may be aware datetimes, ISO-8601 strings with
an offset, or epoch seconds. Errors name the metadata field and say how to fix it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from shared_core.clock import to_datetime
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import ExtractedFact, Extraction
from shared_core.facts import MAX_NAME_CHARS, ObjectValue, key_relation, key_subject


class MetadataExtractor:
    """Reads subject, relation, object, valid_from and valid_to from metadata fields.

    The field names are options (keyword only). A field that is absent or ``None`` counts as
    absent: with none of subject, relation and object the text is prose (no facts); with some
    but not all of them, :class:`~shared_core.errors.InvalidInputError` names the missing one.
    ``valid_from`` / ``valid_to`` may be aware datetimes, ISO-8601 strings with a UTC offset, or
    finite epoch seconds (int or float). The fact's text is the input text; the other metadata
    (without these five fields) becomes the fact's metadata.
    """

    def __init__(
        self,
        *,
        subject_field: str = "subject",
        relation_field: str = "relation",
        object_field: str = "object",
        valid_from_field: str = "valid_from",
        valid_to_field: str = "valid_to",
    ) -> None:
        fields = {
            "subject_field": subject_field,
            "relation_field": relation_field,
            "object_field": object_field,
            "valid_from_field": valid_from_field,
            "valid_to_field": valid_to_field,
        }
        for option, value in fields.items():
            if not isinstance(value, str) or not value:
                raise InvalidInputError(option, f"is {value!r}", "name a metadata field")
        if len(set(fields.values())) != len(fields):
            raise InvalidInputError(
                "fields", f"name the same field twice ({fields})", "use five distinct names"
            )
        self.subject_field = subject_field
        self.relation_field = relation_field
        self.object_field = object_field
        self.valid_from_field = valid_from_field
        self.valid_to_field = valid_to_field

    def __repr__(self) -> str:
        return (
            f"MetadataExtractor(subject_field={self.subject_field!r}, "
            f"relation_field={self.relation_field!r}, object_field={self.object_field!r}, "
            f"valid_from_field={self.valid_from_field!r}, valid_to_field={self.valid_to_field!r})"
        )

    @property
    def _fields(self) -> tuple[str, ...]:
        return (
            self.subject_field,
            self.relation_field,
            self.object_field,
            self.valid_from_field,
            self.valid_to_field,
        )

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction:
        if not isinstance(metadata, Mapping):
            raise InvalidInputError(
                "metadata", f"expected a mapping, got {type(metadata).__name__}", "pass a dict"
            )
        names = {
            "subject": self.subject_field,
            "relation": self.relation_field,
            "object": self.object_field,
        }
        present: dict[str, Any] = {role: metadata.get(name) for role, name in names.items()}
        valid_from, valid_to = self._times(metadata)
        rest = {key: value for key, value in metadata.items() if key not in self._fields}
        if all(value is None for value in present.values()):
            return Extraction(valid_from=valid_from, valid_to=valid_to, metadata=rest)
        for role, value in present.items():
            if value is None:
                raise _missing(role, names, present)
        subject, relation, obj = present["subject"], present["relation"], present["object"]
        key_subject(subject, _label(self.subject_field))
        key_relation(relation, _label(self.relation_field))
        fact = ExtractedFact(
            text=text,
            subject=subject,
            relation=relation,
            object=check_object(obj, _label(self.object_field)),
            valid_from=valid_from,
            valid_to=valid_to,
            metadata=MappingProxyType(rest),
        )
        return Extraction(facts=(fact,))

    def _times(self, metadata: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
        valid_from = to_datetime(metadata.get(self.valid_from_field), _label(self.valid_from_field))
        valid_to = to_datetime(metadata.get(self.valid_to_field), _label(self.valid_to_field))
        if valid_from is not None and valid_to is not None and valid_to <= valid_from:
            raise InvalidInputError(
                _label(self.valid_to_field),
                f"{valid_to.isoformat()} is not after {valid_from.isoformat()}",
                f"use a valid_to later than {_label(self.valid_from_field)}, or leave it out",
            )
        return valid_from, valid_to


def _label(name: str) -> str:
    return f"metadata[{name!r}]"


def _missing(role: str, names: dict[str, str], present: dict[str, Any]) -> InvalidInputError:
    given = ", ".join(_label(names[r]) for r, value in present.items() if value is not None)
    return InvalidInputError(
        _label(names[role]),
        f"is missing while {given} is set",
        f"give all of {', '.join(_label(n) for n in names.values())} for a keyed fact, "
        "or none of them for plain prose",
    )


def check_object(value: object, field: str) -> ObjectValue:
    """``value`` if it can be a fact's object (non-empty str, int, finite float, bool)."""
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise InvalidInputError(field, f"{value} is not a finite number", "use a finite number")
    if isinstance(value, str):
        if not value.strip():
            raise InvalidInputError(field, "is empty", "give a non-empty string")
        if len(value) > MAX_NAME_CHARS:
            raise InvalidInputError(
                field, f"is {len(value):,} characters long", f"keep it under {MAX_NAME_CHARS:,}"
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError(
                field, "holds lone surrogates (not valid Unicode)", "decode the text properly"
            ) from exc
        return value
    raise InvalidInputError(
        field,
        f"type {type(value).__name__} is not supported",
        "use str, int, float or bool (serialise structured values to a string)",
    )


__all__ = ["MetadataExtractor", "check_object", "to_datetime"]
