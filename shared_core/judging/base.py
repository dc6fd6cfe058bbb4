"""The write-time judging port: the writer hands a judge one batch of planned statements and
gets back what to write in their place.

A memory's writer plans each item (a Fact as given; a text through the extractor, which reads
keys the caller put in its metadata) and then calls its judge **once per batch**
(:meth:`Judge.judge`, or :meth:`AsyncJudge.ajudge` from the async paths). A judge turns prose
into keys (an LLM proposing subject, relation and object; the deterministic subject rule and
frame head placing claims) or finds the prose a new statement ends (a pairwise scorer). It
proposes; the ledger's deterministic key rule decides what closes.

Rules every judge keeps:

- **Nothing is lost.** Every input statement maps to at least one statement to write; a judge
  that cannot read a statement returns it unchanged (it stays prose).
- **Nothing closes across speakers or namespaces.** First person resolves to the statement's
  speaker (:func:`speaker_subject`); a key proposed for a statement with a speaker is scoped to
  that speaker (:func:`scoped_subject`), and a supersession joins statements of one namespace
  and one speaker only.
- **Prefer missing a change to retiring a fact that still holds.** When unsure, a judge keeps
  prose, or proposes a multi-valued relation (``Cardinality.MANY``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from shared_core.clock import Instant
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import Extraction
from shared_core.facts import Cardinality, Fact, key_subject
from shared_core.index.base import Vector, VectorIndex
from shared_core.ledger.prose import ProseSupersession
from shared_core.ledger.protocol import LedgerStore

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "user", "the user"})
"""Subjects (as keyed) that name whoever wrote the statement."""

SPEAKER_SEPARATOR = "::"
"""Joins a speaker and a subject they named in a scoped subject (``ana::tom``)."""


def speaker_subject(speaker: str | None) -> str:
    """The keyed subject first person resolves to: the speaker, or ``"i"`` for a write
    without one (then its namespace is its speaker's scope)."""
    return key_subject(speaker) if speaker is not None else "i"


def scoped_subject(subject: str, speaker: str | None) -> str:
    """The subject a judge keys a statement of ``speaker`` under: first person is the speaker
    (:func:`speaker_subject`); anything else a speaker names is scoped to them
    (``ana::tom``), so no key of one speaker's statements is shared with another's."""
    keyed = key_subject(subject)
    if keyed in FIRST_PERSON:
        return speaker_subject(speaker)
    if speaker is None:
        return keyed
    return f"{key_subject(speaker)}{SPEAKER_SEPARATOR}{keyed}"


@dataclass(frozen=True, slots=True)
class WriteBatch:
    """What a judge sees of one write: the planned statements (keyed facts and prose, whose
    ``key`` is None), who wrote each (``speakers``, parallel; None: nobody named), the memory's
    vectors of their texts, read access to what the memory holds (``ledger``, and ``index``,
    brought up to date before the call) at record time ``now``, the memory's ``embed`` (texts
    to vectors, e.g. to compare relation names) and ``speaker_field``, the metadata field that
    names a stored statement's speaker (None: speakers are not recorded)."""

    statements: tuple[Fact, ...]
    speakers: tuple[str | None, ...]
    vectors: Mapping[str, Vector]
    ledger: LedgerStore
    index: VectorIndex
    now: Instant
    embed: Callable[[Sequence[str]], list[Vector]]
    speaker_field: str | None = None

    def __post_init__(self) -> None:
        if len(self.speakers) != len(self.statements):
            raise ValueError("WriteBatch needs one speaker (or None) per statement")

    @property
    def prose(self) -> tuple[int, ...]:
        """Positions of the statements without a key."""
        return tuple(i for i, fact in enumerate(self.statements) if fact.key is None)


@dataclass(frozen=True, slots=True)
class Judgement:
    """A judge's answer for one :class:`WriteBatch`.

    - ``statements``: per input statement (same order), the statements to write in its place,
      at least one each (the input itself when the judge left it alone).
    - ``supersessions``: prose statements that new prose ends, written in the same transaction.
    - ``cardinalities``: relations to declare before the write (a judge proposes MANY for a new
      relation it is unsure of; a relation already declared or holding facts is never
      redeclared).
    - ``extractions``: per input position a judge read with a model, what it made of it (the
      memory's ``extraction_report`` counts problems from these).
    """

    statements: tuple[tuple[Fact, ...], ...]
    supersessions: tuple[ProseSupersession, ...] = ()
    cardinalities: tuple[tuple[str, Cardinality], ...] = ()
    extractions: Mapping[int, Extraction] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def unchanged(cls, batch: WriteBatch) -> Judgement:
        """Every statement written as planned, nothing closed."""
        return cls(statements=tuple((fact,) for fact in batch.statements))


@runtime_checkable
class Judge(Protocol):
    """Judges a batch of planned statements at write time (see the module doc)."""

    def judge(self, batch: WriteBatch) -> Judgement: ...


@runtime_checkable
class AsyncJudge(Judge, Protocol):
    """A :class:`Judge` with a native async form (an LLM judge's): the memory's async writes
    await it on the running loop."""

    async def ajudge(self, batch: WriteBatch) -> Judgement: ...


def flattened(judgement: Judgement) -> list[Fact]:
    """A judgement's statements in write order."""
    return [fact for group in judgement.statements for fact in group]


def check_judgement(batch: WriteBatch, judgement: object, judge: object) -> Judgement:
    """``judgement`` if it answers ``batch`` (one non-empty group per statement), else
    TypeError naming the judge."""
    name = type(judge).__name__
    if not isinstance(judgement, Judgement):
        raise TypeError(f"{name}.judge returned a {type(judgement).__name__}, not a Judgement")
    groups: Sequence[tuple[Fact, ...]] = judgement.statements
    if len(groups) != len(batch.statements) or any(not group for group in groups):
        raise TypeError(
            f"{name}.judge must return at least one statement per input statement "
            f"({len(batch.statements)} in, {len(groups)} groups out)"
        )
    return judgement


def checked_number(
    option: str, value: object, low: float, high: float, *, low_open: bool = False
) -> float:
    """A judge's numeric option as a float: InvalidInputError naming ``option`` unless
    ``value`` is a real number (not a bool) in [low, high], or (low, high] with ``low_open``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    number = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not ok or not (low < number <= high if low_open else low <= number <= high):
        bounds = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise InvalidInputError(option, f"is {value!r}", f"pass a number in {bounds}")
    return number
