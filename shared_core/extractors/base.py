"""The extractor port: text and metadata in, zero or more keyed statements out.

An extractor proposes; the ledger decides. Zero statements means "keep the text as plain prose".
An extractor never loses the text: when its model's output is malformed it returns no
statements and says why in ``problem``, and the memory stores the text as prose and counts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from shared_core.facts import ObjectValue


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractedFact:
    """One keyed statement proposed by an extractor; ``text`` is its source sentence."""

    text: str
    subject: str
    relation: str
    object: ObjectValue
    valid_from: datetime | None = None  # None: the caller's valid_from, else the record time
    valid_to: datetime | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor found in one text: keyed facts, or none (store it as prose).

    ``problem`` explains why the extractor's output was rejected (the text is then kept as
    prose); it is ``None`` when the extractor simply found nothing keyed. For prose,
    ``valid_from`` / ``valid_to`` / ``metadata`` carry what the extractor read for the text
    itself (e.g. a timestamp field); ``metadata=None`` keeps the caller's metadata as given.
    """

    facts: tuple[ExtractedFact, ...] = ()
    problem: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    metadata: Mapping[str, Any] | None = None


@runtime_checkable
class Extractor(Protocol):
    """Turns one text (and its metadata) into keyed statements.

    An extractor that calls a model may also define ``async aextract(text, metadata)`` with the
    same contract (:class:`~shared_core.extractors.LLMExtractor` does): the memory's async
    writes (``aadd``, ``aadd_many``) await it on the running loop instead of running
    ``extract`` in a worker thread."""

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction: ...


class NoExtraction:
    """Keeps every text as plain prose (the extractor to use when nothing is keyed)."""

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction:
        return Extraction()
