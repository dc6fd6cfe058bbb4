"""Saying one statement of a family: subjects, values, event times, the templates that fit and
the finished pair with its noise. The base of the pair builder
(:class:`temporal_rag_training.builder.Builder`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from temporal_rag_training.families import Family, Value, families
from temporal_rag_training.labelled import POSITIVE_KINDS, LabelledPair
from temporal_rag_training.makers import Made, Makers
from temporal_rag_training.noise import dress, stamps
from temporal_rag_training.phrasings import phrasings
from temporal_rag_training.rendering import LEFTOVER, Said, render
from temporal_rag_training.subjects import Subject, other_subject, subject

VALUE_ROLES = frozenset({"state", "change", "implied", "retract"})  # templates a Value may have
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("March", "April", "May", "June", "September", "October", "November")
_DAYS = (3, 8, 12, 17, 21, 26)

Times = tuple[tuple[str, tuple[str, ...]], ...]  # (key, forms); separate events differ in key


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _times() -> dict[str, Times]:
    """The times of events by type: weekdays and dates."""
    days = tuple((day, (f"on {day}",)) for day in _WEEKDAYS)
    dates = tuple(
        (
            f"{month}-{day}",
            (f"on {day} {month}", f"on {month} {day}", f"on the {_ordinal(day)} of {month}"),
        )
        for month in _MONTHS
        for day in _DAYS
    )
    return {"weekday": days, "date": dates}


_TIMES = _times()


@dataclass(frozen=True, slots=True)
class Slots:
    """What limits the templates of a statement (see :meth:`Statements.say`)."""

    old: Value | None  # the value it replaced: {old}, changes marked + or -
    when: tuple[str, ...]  # the event's time forms: {when}
    oldwhen: tuple[str, ...]  # the time it moved from: {oldwhen}
    no_year: bool  # no template naming {year}
    avoid: Callable[[str], bool] | None  # templates to leave out
    same_as: Said | None  # only the template of this statement


class Statements:
    """Statements and pairs about the families, drawn from one random stream."""

    def __init__(self, rng: random.Random, *, phrasing_share: float = 0.0) -> None:
        self.rng = rng
        self.families = families()
        self.makers = Makers(rng)
        self.phrasing_share = phrasing_share

    @staticmethod
    def templates(family: Family, value: Value, role: str) -> tuple[str, ...]:
        """The templates of ``role`` for ``value``: its own, then the family's."""
        own: tuple[str, ...] = getattr(value, role) if role in VALUE_ROLES else ()
        shared: tuple[str, ...] = () if value.own else getattr(family, role)
        return own + shared

    @classmethod
    def has(cls, family: Family, role: str) -> bool:
        """Whether some value of the family has templates of ``role``."""
        return any(cls.templates(family, value, role) for value in family.values)

    def subject(self, family: Family) -> Subject:
        """A subject for the family."""
        return subject(family.subject, self.rng, no_partner=family.subject_filter == "no_partner")

    def other(self, family: Family, first: Subject) -> Subject | None:
        """A subject for the family that is clearly not ``first``, or None."""
        no_partner = family.subject_filter == "no_partner"
        return other_subject(family.subject, first, self.rng, no_partner=no_partner)

    def follow(self, subj: Subject) -> Subject:
        """How a later statement names the same subject."""
        roll = self.rng.random()
        if subj.kind == "name":
            if roll < 0.2:
                return subj.as_pronoun()
            return subj.as_short() if roll < 0.45 else subj
        if subj.kind == "relation":
            return subj.as_pronoun() if roll < 0.2 else subj
        if subj.kind == "thing":
            return subj.as_pronoun() if roll < 0.1 else subj
        return subj

    @staticmethod
    def values(family: Family, *subjects: Subject) -> list[Value]:
        """The family's values that do not name one of the subjects ("Arjun's son Arjun")."""
        givens = {s.given for s in subjects if s.given}
        if not givens:
            return list(family.values)
        return [v for v in family.values if not givens & set(v.key.split())]

    @staticmethod
    def change_ok(family: Family, old: Value, new: Value, template: str = "") -> bool:
        """Whether ``old`` may change into ``new`` (with ``template``'s ``+``/``-`` mark)."""
        if old.key == new.key or (old.key, new.key) in family.never:
            return False
        if family.ordered:
            i, j = family.values.index(old), family.values.index(new)
            if (family.monotone and j < i) or (family.adjacent and j != i + 1):
                return False
            if template.startswith("+"):
                return j > i
            if template.startswith("-"):
                return j < i
        return not template.startswith(("+", "-"))

    def when(self, kind: str | None = None) -> tuple[str, str, tuple[str, ...]]:
        """An event time: (type, key, forms)."""
        kind = kind or self.rng.choice(("weekday", "date"))
        key, forms = self.rng.choice(_TIMES[kind])
        return kind, key, forms

    def other_when(self, kind: str, key: str) -> tuple[str, tuple[str, ...]]:
        """Another event time of the same type: (key, forms)."""
        while True:
            other_key, forms = self.rng.choice(_TIMES[kind])
            if other_key != key:
                return other_key, forms

    def year(self) -> int:
        """A year for "since {year}"."""
        return self.rng.randint(2012, 2022)

    def say(
        self,
        family: Family,
        role: str,
        subj: Subject,
        value: Value,
        *,
        old: Value | None = None,
        when: tuple[str, ...] = (),
        oldwhen: tuple[str, ...] = (),
        year: int = 2019,
        form: str | None = None,
        no_year: bool = False,
        avoid: Callable[[str], bool] | None = None,
        same_as: Said | None = None,
    ) -> Said | None:
        """One statement of ``role`` about ``value``, or None when no template fits (see
        :class:`Slots` for the options). A plain statement (``state``) is said with one of the
        family's extra phrasings (:mod:`temporal_rag_training.phrasings`) ``phrasing_share``
        of the time, when one fits."""
        rng = self.rng
        slots = Slots(old, when, oldwhen, no_year, avoid, same_as)
        fits = self._fitting(family, role, self.templates(family, value, role), value, slots)
        if role == "state" and self.phrasing_share > 0 and rng.random() < self.phrasing_share:
            extra = phrasings().by_family.get(family.name, ())
            fits = self._fitting(family, role, extra, value, slots) or fits
        if not fits:
            return None
        chosen = rng.choice(fits)
        filled = {
            "v": form if form is not None else rng.choice(value.forms),
            "vb": value.bare_form,
            "old": rng.choice(old.forms) if old is not None else "",
            "oldb": old.bare_form if old is not None else "",
            "when": rng.choice(when) if when else "",
            "oldwhen": rng.choice(oldwhen) if oldwhen else "",
            "year": str(year),
        }
        text, may_capitalise = render(chosen.lstrip("+-"), subj, filled)
        if LEFTOVER.search(text) or len(text.split()) < 3:
            return None
        return Said(text, may_capitalise, chosen, subj.kind == "pronoun")

    def news(self, subj: Subject) -> Said | None:
        """News about ``subj`` that states no attribute (:mod:`temporal_rag_training.phrasings`):
        "Dana baked sourdough bread for the first time"."""
        return self.plain(self.rng.choice(phrasings().news), subj)

    def plain(self, template: str, subj: Subject, value: str = "") -> Said | None:
        """An extra phrasing (:mod:`temporal_rag_training.phrasings`) filled for ``subj`` and
        ``value`` (its only slot besides the year), or None when it does not fit."""
        empty = dict.fromkeys(("old", "oldb", "when", "oldwhen"), "")
        slots = {**empty, "v": value, "vb": value, "year": str(self.year())}
        text, may_capitalise = render(template, subj, slots)
        if LEFTOVER.search(text) or len(text.split()) < 3:
            return None
        return Said(text, may_capitalise, template, subj.kind == "pronoun")

    def _fitting(
        self, family: Family, role: str, templates: Sequence[str], value: Value, slots: Slots
    ) -> list[str]:
        """The ``templates`` of ``role`` that can say ``value`` with these slots."""
        old, when, oldwhen = slots.old, slots.when, slots.oldwhen
        fits = []
        for template in templates:
            if ("{old" in template and old is None) or (slots.no_year and "{year}" in template):
                continue
            if ("{when}" in template and not when) or ("{oldwhen}" in template and not oldwhen):
                continue
            if family.shape == "event" and "{when}" not in template and when and role == "state":
                continue
            if slots.avoid is not None and slots.avoid(template):
                continue
            if slots.same_as is not None and template != slots.same_as.template:
                continue
            if template.startswith(("+", "-")) and (
                old is None or not self.change_ok(family, old, value, template)
            ):
                continue
            fits.append(template)
        return fits

    def pair(
        self,
        older: Said,
        newer: Said,
        kind: str,
        family: Family,
        *,
        swap: bool = False,
        other_family: Family | None = None,
    ) -> LabelledPair:
        """The labelled pair, maybe swapped (when ``swap``), with noise and timestamps."""
        if swap and self.rng.random() < 0.5 and not (older.anaphoric or newer.anaphoric):
            older, newer = newer, older
        events = any(f is not None and f.shape == "event" for f in (family, other_family))
        first_stamp, second_stamp = stamps(self.rng, events=events)
        return LabelledPair(
            older=dress(self.rng, older, first_stamp),
            newer=dress(self.rng, newer, second_stamp),
            label=1 if kind in POSITIVE_KINDS else 0,
            kind=kind,
            family=family.name,
        )

    def made(self, made: Made, kind: str) -> LabelledPair | None:
        """The labelled pair of a maker's statements (:mod:`temporal_rag_training.makers`)."""
        if made is None:
            return None
        older, newer, name = made
        if LEFTOVER.search(older.text + newer.text) or older.text == newer.text:
            return None
        if min(len(older.text.split()), len(newer.text.split())) < 3:
            return None
        return LabelledPair(
            older=dress(self.rng, older),
            newer=dress(self.rng, newer),
            label=1 if kind in POSITIVE_KINDS else 0,
            kind=kind,
            family=name,
        )
