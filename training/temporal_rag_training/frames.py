"""Statements labelled with the attribute they state: the training data of the frame head.

The frame head (shipped beside kappa) reads one statement's sentence embedding and says which
single-valued attribute it states (a family name: ``home_city``, ``employer``, ...) or
:data:`OTHER`: an event, a feeling, a plan, one value of a multi-valued attribute, a remark
about something else. Only two statements of the same subject with the same attribute may
end one another, so "same person, different news" never reaches the pair judge.

Labels: every role of a ``single`` or ``static`` family that states or changes its value
(``state``, ``change``, ``implied``, ``retract``, ``past``, ``detail``) is that family; the
``hedge`` role (a plan, a visit, a remark beside the value) and every statement of a ``multi``
or ``event`` family, and the log entries, are :data:`OTHER`.

The data file ``families/frame_phrasings.json`` (:mod:`temporal_rag_training.phrasings`) adds
more ways of stating each single-valued attribute (``phrasings``, drawn for half the plain
statements) and news about a subject that states no attribute (``news``: feelings, plans,
things that happened), so the head learns the attribute rather than six templates. The pair
generator reads them only when given a ``phrasing_share``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from temporal_rag_training.families import Family, Value
from temporal_rag_training.noise import dress
from temporal_rag_training.phrasings import phrasings
from temporal_rag_training.rendering import Said
from temporal_rag_training.statements import Statements
from temporal_rag_training.subjects import Subject

OTHER = "other"
VALUE_ROLES = ("state", "state", "state", "change", "implied", "retract", "past", "detail")
"""Roles of a single-valued family drawn for a statement (state three times as often)."""
OTHER_SHARE = 0.45
"""About this share of the statements is :data:`OTHER`."""
EXTRA_SHARE = 0.5
"""The share of plain statements said with an extra phrasing (:mod:`.phrasings`)."""
FRAME_SOURCE_SHARE = 0.3
"""The share of statements that name a source ("Per the ticket, ...", "... (from a chat log)"):
notes kept by an assistant or a team often do, and a source says nothing about the attribute,
so the head must learn to read past it (kappa's pairs name one far less often)."""


@dataclass(frozen=True, slots=True)
class FramedStatement:
    """A statement, its attribute (a family name or :data:`OTHER`) and how it was made."""

    text: str
    label: str
    role: str


class FrameStatements(Statements):
    """Draws labelled statements from the families, from one random stream."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.valued = [f for f in self.families if f.shape in ("single", "static")]
        self.others = [f for f in self.families if f.shape in ("multi", "event")]
        self.hedged = [f for f in self.valued if f.hedge]

    def draw(self) -> FramedStatement | None:
        """One statement, or None when the draw did not fit any template."""
        roll = self.rng.random()
        if roll >= OTHER_SHARE:
            return self._valued(self.rng.choice(self.valued))
        if roll < 0.08:
            return self._log()
        if roll < 0.15 and self.hedged:
            return self._hedge(self.rng.choice(self.hedged))
        if roll < 0.3 and phrasings().news:
            return self._news()
        return self._other(self.rng.choice(self.others))

    def _valued(self, family: Family) -> FramedStatement | None:
        rng = self.rng
        role = rng.choice(VALUE_ROLES)
        subj = self.subject(family)
        if rng.random() < 0.3:
            subj = self.follow(subj)
        values = self.values(family, subj)
        value = rng.choice(values)
        old = self._old(family, values, value) if role == "change" else None
        if role == "change" and old is None:
            return None
        extra = phrasings().by_family.get(family.name, ())
        if role == "state" and extra and rng.random() < EXTRA_SHARE:
            return self._rendered(rng.choice(extra), subj, rng.choice(value.forms), family.name)
        said = self.say(family, role, subj, value, old=old, year=self.year())
        return self._framed(said, family.name, role)

    def _news(self) -> FramedStatement | None:
        family = self.rng.choice(self.families)
        return self._rendered(
            self.rng.choice(phrasings().news), self.subject(family), "", OTHER, role="news"
        )

    def _rendered(
        self, template: str, subj: Subject, value: str, label: str, *, role: str = "phrasing"
    ) -> FramedStatement | None:
        return self._framed(self.plain(template, subj, value), label, role)

    def _old(self, family: Family, values: list[Value], value: Value) -> Value | None:
        olds = [v for v in values if self.change_ok(family, v, value)]
        return self.rng.choice(olds) if olds else None

    def _hedge(self, family: Family) -> FramedStatement | None:
        subj = self.subject(family)
        old, value = self.rng.sample(self.values(family, subj), 2)
        said = self.say(family, "hedge", subj, value, old=old, year=self.year())
        return self._framed(said, OTHER, "hedge")

    def _other(self, family: Family) -> FramedStatement | None:
        rng = self.rng
        subj = self.subject(family)
        value = rng.choice(self.values(family, subj))
        role = "add" if family.shape == "multi" and rng.random() < 0.4 else "state"
        when = self.when()[2] if family.shape == "event" else ()
        said = self.say(family, role, subj, value, when=when, year=self.year())
        return self._framed(said, OTHER, f"{family.shape}:{role}")

    def _log(self) -> FramedStatement | None:
        made = self.makers.log_pair()
        if made is None:
            return None
        return self._framed(made[0], OTHER, "log")

    def _framed(self, said: Said | None, label: str, role: str) -> FramedStatement | None:
        if said is None:
            return None
        return FramedStatement(dress(self.rng, said, sources=FRAME_SOURCE_SHARE), label, role)


def generate_statements(*, seed: int, count: int) -> list[FramedStatement]:
    """``count`` distinct labelled statements, the same ones for the same seed."""
    maker = FrameStatements(random.Random(seed))
    found: dict[str, FramedStatement] = {}
    misses = 0
    while len(found) < count:
        drawn = maker.draw()
        if drawn is None or drawn.text in found:
            misses += 1
            if misses > 50 * count:
                raise RuntimeError(f"only {len(found)} distinct statements could be made")
            continue
        found[drawn.text] = drawn
    return list(found.values())
