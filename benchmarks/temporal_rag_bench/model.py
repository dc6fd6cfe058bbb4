"""The benchmark's data model: chunks to ingest, questions with gold and stale answers.

Every dataset (the synthetic generator, SituatedQA, LoCoMo) becomes a :class:`Dataset`; every
method ingests its chunks and answers its questions with retrieved chunks; the metrics compare
what was retrieved with each question's ``gold`` (current) and ``stale`` (superseded) answers.
Pure: standard library only.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from shared_core.facts import Cardinality, ObjectValue


class Track(StrEnum):
    """Keyed: chunks carry subject/relation/object (a structured extractor's output). Prose:
    no keys; old and new versions differ only in the value (recency is the only signal)."""

    KEYED = "keyed"
    PROSE = "prose"


class ChunkKind(StrEnum):
    STATE = "state"  # states a value of a changing attribute
    STATIC = "static"  # states a fact that never changes
    DISTRACTOR = "distractor"  # unrelated text


SPEAKER_FIELD = "user_id"
"""The metadata field naming a chat chunk's speaker (TemporalMemory's default ``speaker_field``)."""


class QuestionKind(StrEnum):
    CURRENT = "current"  # what holds now (the dataset's ``now``)
    STATIC = "static"  # a fact that never changed
    AS_OF = "as_of"  # what held at ``valid_at``


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """One text to remember, with what the benchmark knows about it (never shown to methods
    except ``text``, ``timestamp`` and, on the keyed track, ``subject``/``relation``/``object``).
    """

    id: str
    text: str
    timestamp: datetime  # when it became true (tau); aware
    kind: ChunkKind
    entity: str | None = None  # whom or what it is about (bag-of-facts mode groups by it)
    family: str | None = None  # attribute family, e.g. "residence"
    value: str | None = None  # the value it states (scoring), None for distractors
    subject: str | None = None  # keyed track only
    relation: str | None = None
    object: ObjectValue | None = None
    recorded_order: int = 0  # ingestion order (late-arriving facts come after newer ones)
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    speaker: str | None = None  # chat track: the user id of who wrote it (first person)

    @property
    def keyed(self) -> bool:
        return self.subject is not None and self.relation is not None and self.object is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """A question and how to score the chunks retrieved for it.

    ``gold``: answers any of which counts as a hit; ``stale``: superseded answers any of which
    counts as a leak (empty for static questions). ``evidence``: chunk ids that answer it (when
    scoring by id, as LoCoMo's turn ids). ``cell`` labels the slice it reports into.
    """

    id: str
    text: str
    kind: QuestionKind
    gold: tuple[str, ...]
    stale: tuple[str, ...] = ()
    entity: str | None = None
    family: str | None = None
    valid_at: datetime | None = None  # AS_OF questions: the time asked about
    ratio: tuple[int, int] | None = None  # (N stale repeats, M current repeats)
    changes: int = 0  # length of the change chain (0 for static)
    flip_flop: bool = False
    evidence: tuple[str, ...] = ()
    cell: str = ""
    speaker: str | None = None  # chat track: whose memory it asks about (a user id)
    first_person: str = ""  # chat track: the same question as that speaker asks it ("I")

    @property
    def asked(self) -> str:
        """What a reader searches with: in a speaker's own memory (chat), the question as that
        speaker asks it; otherwise :attr:`text`."""
        return self.first_person if self.speaker is not None and self.first_person else self.text

    @property
    def where(self) -> dict[str, str] | None:
        """The metadata filter of the memory it is asked in: its speaker's (chat), else None."""
        return None if self.speaker is None else {SPEAKER_FIELD: self.speaker}


@dataclass(frozen=True, slots=True, kw_only=True)
class Dataset:
    """Chunks in ingestion order, questions, and the moment questions are asked (``now``)."""

    name: str
    track: Track
    chunks: tuple[Chunk, ...]
    questions: tuple[Question, ...]
    now: datetime
    cardinalities: Mapping[str, Cardinality] = field(default_factory=lambda: MappingProxyType({}))
    score_by_evidence: bool = False  # LoCoMo: a hit is retrieving an evidence chunk id
    description: str = ""

    def by_id(self) -> dict[str, Chunk]:
        return {chunk.id: chunk for chunk in self.chunks}


@dataclass(frozen=True, slots=True)
class Retrieved:
    """What one method returned for one question: chunks in rank order, how many candidates
    Phi_T removed (0 for methods without it), and the read latency in seconds."""

    chunks: tuple[Chunk, ...]
    shadows: int = 0
    seconds: float = 0.0


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD-style: NFKC, lower case, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def states(chunk: Chunk, answer: str) -> bool:
    """Whether ``chunk`` states ``answer``: by its known value if it has one, else by the
    normalised answer appearing as whole words in the normalised text."""
    wanted = normalize_answer(answer)
    if not wanted:
        return False
    if chunk.value is not None:
        return normalize_answer(chunk.value) == wanted
    return f" {wanted} " in f" {normalize_answer(chunk.text)} "
