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
from typing import Any, Literal, Protocol, runtime_checkable

from shared_core.facts import ObjectValue

ValidFromSource = Literal["caller", "statement", "record_time"]
"""Where a statement's valid_from came from: the caller (the ``valid_from`` argument or the
text's metadata), the statement itself (a date its sentence states), or the record time."""

VALID_FROM_SOURCE = "valid_from_source"
"""The metadata key under which an extracted statement records its :data:`ValidFromSource`."""

ProblemKind = Literal["failed", "invalid", "dropped", "empty"]
"""What went wrong with one text's extraction: the model call ``failed`` (raised or returned a
non-str); its answer was ``invalid`` (unreadable, or no valid fact: the text is kept as prose);
some facts were ``dropped`` as invalid (the rest kept); or the model was asked and found no
facts (``empty``: the text is kept as prose)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractedFact:
    """One keyed statement proposed by an extractor; ``text`` is its source sentence.

    ``valid_from_source`` asks the memory to record where the statement's valid time came from
    (metadata :data:`VALID_FROM_SOURCE`): ``"statement"`` when ``valid_from`` is a date its
    sentence states, ``"caller"`` when it is the caller's (given here, or else the write's
    ``valid_from`` or the record time); ``None`` records nothing (the metadata extractor, whose
    times are always the caller's).
    """

    text: str
    subject: str
    relation: str
    object: ObjectValue
    valid_from: datetime | None = None  # None: the caller's valid_from, else the record time
    valid_to: datetime | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    valid_from_source: Literal["caller", "statement"] | None = None


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor found in one text: keyed facts, or none (store it as prose).

    ``problem`` explains why the extractor's output was rejected (the text is then kept as
    prose); it is ``None`` when the extractor simply found nothing keyed. For prose,
    ``valid_from`` / ``valid_to`` / ``metadata`` carry what the extractor read for the text
    itself (e.g. a timestamp field); ``metadata=None`` keeps the caller's metadata as given.
    ``problem_kind`` says what went wrong (a ``problem`` without one counts as ``"invalid"``;
    ``"empty"`` has no ``problem``); ``refused_dates`` counts dates the extractor proposed but
    did not use because the sentence does not state them.
    """

    facts: tuple[ExtractedFact, ...] = ()
    problem: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    metadata: Mapping[str, Any] | None = None
    problem_kind: ProblemKind | None = None
    refused_dates: int = 0


@runtime_checkable
class Extractor(Protocol):
    """Turns one text (and its metadata) into keyed statements.

    An extractor that calls a model may also define ``async aextract(text, metadata)`` with the
    same contract (:class:`~shared_core.judging.LLMExtractor` does): the memory's async
    writes (``aadd``, ``aadd_many``) await it on the running loop instead of running
    ``extract`` in a worker thread."""

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction: ...


class NoExtraction:
    """Keeps every text as plain prose (the extractor to use when nothing is keyed)."""

    def extract(self, text: str, metadata: Mapping[str, Any]) -> Extraction:
        return Extraction()
