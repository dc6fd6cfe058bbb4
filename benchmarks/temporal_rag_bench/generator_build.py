"""Building blocks of the synthetic generator: entities, chains, drafts, varied wording.

Timestamps live in [START, END), questions are asked at NOW; chain versions start in distinct
30-day slots so every interval is at least 20 days long. Pure: standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from temporal_rag_bench import generator_families as tables
from temporal_rag_bench.generator_families import Family, Subject
from temporal_rag_bench.model import ChunkKind, Question, QuestionKind

START = datetime(2021, 1, 1, tzinfo=UTC)
SLOT = timedelta(days=30)  # chain versions start in distinct 30-day slots
SLOTS = 40
END = START + SLOT * (SLOTS + 1)  # every statement is before END (mid 2024)
NOW = END + timedelta(days=10)  # the dataset's ``now``
MAX_CHANGES = 4


@dataclass(frozen=True, slots=True)
class Entity:
    key: str  # Chunk.entity and the keyed subject
    mention: str  # how texts name it ("the Halcyon billing service")
    subject: Subject


@dataclass(frozen=True, slots=True)
class Chain:
    ident: str
    entity: Entity
    family: Family
    values: tuple[str, ...]  # version i states values[i]; the last is current
    starts: tuple[datetime, ...]  # when version i became true

    def end(self, version: int) -> datetime:
        return self.starts[version + 1] if version + 1 < len(self.starts) else END

    def others(self, value: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for v in self.values if v != value))

    @property
    def flip_flop(self) -> bool:
        return len(set(self.values)) < len(self.values)


@dataclass(slots=True)
class Draft:
    text: str
    timestamp: datetime
    kind: ChunkKind
    entity: Entity | None = None
    family: Family | None = None
    value: str | None = None
    late: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


class Phraser:
    """Cycles through a shuffled pool of (phrasing, prefix, suffix): varied wording, shared by
    every version of a chain."""

    def __init__(self, rng: random.Random, family: Family, mention: str) -> None:
        self._family, self._mention = family, mention
        sizes = (len(family.phrasings), len(tables.PREFIXES), len(tables.SUFFIXES))
        self._sizes = sizes
        self._order = rng.sample(
            range(sizes[0] * sizes[1] * sizes[2]), sizes[0] * sizes[1] * sizes[2]
        )
        self._next = 0

    def say(self, value: str) -> str:
        index = self._order[self._next % len(self._order)]
        self._next += 1
        rest, suffix = divmod(index, self._sizes[2])
        phrasing, prefix = divmod(rest, self._sizes[1])
        return render(
            self._family.phrasings[phrasing],
            tables.PREFIXES[prefix],
            tables.SUFFIXES[suffix],
            name=self._mention,
            value=value,
        )


def render(phrasing: str, prefix: str, suffix: str, *, name: str, value: str) -> str:
    """A phrasing filled in, framed by a prefix and a suffix, as one sentence."""
    body = phrasing.format(name=name, value=value)
    if prefix and not phrasing.startswith("{"):
        body = body[0].lower() + body[1:]
    if suffix:
        body = body[:-1] + suffix + body[-1]
    text = prefix + body
    return text[0].upper() + text[1:]


def sentence(text: str) -> str:
    return text[0].upper() + text[1:]


def as_of_text(question: str, when: datetime) -> str:
    return f"As of {when:%B} {when.day}, {when.year}, {question[0].lower()}{question[1:]}"


def moment(rng: random.Random, start: datetime, end: datetime) -> datetime:
    """A whole second strictly inside (start, end)."""
    span = int((end - start).total_seconds())
    return start + timedelta(seconds=rng.randrange(1, max(span, 2)))


def split_counts(total: int, parts: int) -> list[int]:
    """``total`` statements over ``parts`` versions, as evenly as possible (earliest get more)."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _chain_values(rng: random.Random, family: Family, changes: int, flip: bool) -> list[str]:
    if not flip:
        return rng.sample(family.values, changes + 1)
    pool = rng.sample(family.values, changes + 1)
    values = pool[:2]
    for step in range(2, changes + 1):
        used = list(dict.fromkeys(values))
        must_repeat = step == changes and len(used) == len(values)
        options = [v for v in used if v != values[-1]]
        if not must_repeat and rng.random() < 0.4:
            options.append(pool[step])
        values.append(rng.choice(options))
    return values


class Builder:
    """Accumulates drafts and questions; the random stream never depends on the track."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.drafts: list[Draft] = []
        self.questions: list[Question] = []
        self.chains: list[Chain] = []

    def question(self, text: str, kind: QuestionKind, gold: Sequence[str], **kw: Any) -> None:
        ident = f"q{len(self.questions):05d}"
        cell = kw.pop("cell")
        self.questions.append(
            Question(id=ident, text=text, kind=kind, gold=tuple(gold), cell=cell, **kw)
        )

    def chain(self, entity: Entity, family: Family, changes: int, *, flip: bool) -> Chain:
        slots = sorted(self.rng.sample(range(SLOTS), changes + 1))
        starts = tuple(
            START + SLOT * slot + timedelta(seconds=self.rng.randrange(10 * 86400))
            for slot in slots
        )
        values = _chain_values(self.rng, family, changes, flip)
        chain = Chain(f"chain{len(self.chains):04d}", entity, family, tuple(values), starts)
        self.chains.append(chain)
        return chain

    def state(self, chain: Chain, phraser: Phraser, version: int, count: int) -> None:
        """``count`` statements of one version: the first when it became true, the rest later
        inside its interval."""
        start, end = chain.starts[version], chain.end(version)
        for i in range(count):
            when = start if i == 0 else moment(self.rng, start, end)
            self._add_state(chain, phraser, version, when, late=False)

    def late(self, chain: Chain, phraser: Phraser, version: int) -> None:
        """An old statement ingested after everything (earlier timestamp, later order)."""
        when = moment(self.rng, chain.starts[version], chain.end(version))
        self._add_state(chain, phraser, version, when, late=True)

    def _add_state(
        self, chain: Chain, phraser: Phraser, version: int, when: datetime, *, late: bool
    ) -> None:
        value = chain.values[version]
        meta = {"chain": chain.ident, "version": version, "late": late}
        self.drafts.append(
            Draft(
                phraser.say(value),
                when,
                ChunkKind.STATE,
                chain.entity,
                chain.family,
                value,
                late=late,
                metadata=meta,
            )
        )

    def current_question(self, chain: Chain, ratio: tuple[int, int], cell: str) -> None:
        family, entity = chain.family, chain.entity
        self.question(
            sentence(family.question.format(name=entity.mention)),
            QuestionKind.CURRENT,
            (chain.values[-1],),
            stale=chain.others(chain.values[-1]),
            entity=entity.key,
            family=family.relation,
            ratio=ratio,
            changes=len(chain.values) - 1,
            flip_flop=chain.flip_flop,
            cell=cell,
        )
