"""Labelled (older, newer) statement pairs for training kappa, the supersession cross-encoder.

Each :class:`LabelledPair` holds a statement said first (``older``), one said later (``newer``)
and ``label`` 1 when, once the newer is said, the older is no longer true (changed, implied to
have changed, retracted), else 0 (a paraphrase, another attribute, one more value of a
multi-valued attribute, another event, another person, something unrelated). The texts come from
the attribute families of the ``kappa_families_*`` modules: people, software, organisations,
multi-valued attributes and events, with source prefixes, chatty lowercase, asides and
timestamps as noise. Deterministic: the same ``seed`` gives the same pairs. Standard library
only.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from shared_core.errors import InvalidInputError
from shared_core.eval import (
    kappa_families_code,
    kappa_families_devices,
    kappa_families_events,
    kappa_families_extra,
    kappa_families_health,
    kappa_families_life,
    kappa_families_multi,
    kappa_families_org,
    kappa_families_people,
    kappa_families_personal,
    kappa_families_possessions,
    kappa_families_products,
    kappa_families_projects,
    kappa_families_tech,
)
from shared_core.eval.kappa_families import Family, Value
from shared_core.eval.kappa_families_subjects import Subject, other_subject, subject

KINDS = (
    "explicit_change",
    "implied_change",
    "retraction",
    "paraphrase",
    "compatible",
    "multi_valued",
    "separate_events",
    "other_person",
    "unrelated",
)
POSITIVE_KINDS = frozenset(KINDS[:3])
DEFAULT_MIX: Mapping[str, float] = {
    "explicit_change": 0.18,
    "implied_change": 0.20,
    "retraction": 0.10,
    "paraphrase": 0.14,
    "compatible": 0.14,
    "multi_valued": 0.08,
    "separate_events": 0.06,
    "other_person": 0.06,
    "unrelated": 0.04,
}
MAX_COUNT = 5_000_000

FAMILIES: tuple[Family, ...] = (
    *kappa_families_people.FAMILIES,
    *kappa_families_possessions.FAMILIES,
    *kappa_families_life.FAMILIES,
    *kappa_families_health.FAMILIES,
    *kappa_families_personal.FAMILIES,
    *kappa_families_devices.FAMILIES,
    *kappa_families_tech.FAMILIES,
    *kappa_families_code.FAMILIES,
    *kappa_families_org.FAMILIES,
    *kappa_families_products.FAMILIES,
    *kappa_families_projects.FAMILIES,
    *kappa_families_multi.FAMILIES,
    *kappa_families_events.FAMILIES,
)
FAMILY_NAMES = tuple(family.name for family in FAMILIES) + kappa_families_extra.NAMES


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """One training pair: does ``newer`` make ``older`` no longer true?"""

    older: str
    newer: str
    label: int  # 1: the newer makes the older no longer true; 0: both can hold
    kind: str  # one of KINDS
    family: str  # the attribute family it came from


# ---------------------------------------------------------------------------------------------
# Rendering

_TOKEN = re.compile(r"\{(\w+)\}|\[([^\[\]|{}]*)\|([^\[\]|{}]*)\]")
_CAPITALISE = re.compile(r"[a-z][a-z']*[,:]?")
_SUBJECT_START = ("{S}", "{Sbe}", "{Shave}", "{P}", "{O}")
_LEFTOVER = re.compile(r"[{}\[\]|]")
_ARTICLE = re.compile(r"\b([Aa]) (?=[aeio]|u(?!ni|s|ti|r))")
_DOUBLE_ARTICLE = re.compile(r"\b([Tt])he (the|an?) ")


def _possessive(subj: Subject) -> str:
    if subj.kind in ("first", "we", "pronoun"):
        return subj.pronoun.poss
    if subj.kind == "thing" and subj.nom.endswith("s"):
        return f"{subj.nom}'"
    return f"{subj.nom}'s"


def _object(subj: Subject) -> str:
    return subj.pronoun.obj if subj.kind in ("first", "we", "pronoun") else subj.nom


def _render(template: str, subj: Subject, slots: Mapping[str, str]) -> tuple[str, bool]:
    """The template filled for ``subj``; and whether its first letter may be capitalised."""
    pron = subj.pronoun
    plural, first = subj.plural, subj.kind == "first"
    out: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        out.append(template[pos : match.start()])
        pos = match.end()
        name = match.group(1)
        if name is None:
            out.append(match.group(2) if plural else match.group(3))
            continue
        if name in ("S", "Sbe", "Shave"):
            plural, first = subj.plural, subj.kind == "first"
            contract = subj.kind in ("first", "we", "pronoun")
            if name == "S":
                out.append(subj.nom)
            elif name == "Sbe":
                out.append(pron.be_c if contract else f"{subj.nom} is")
            else:
                out.append(pron.have_c if contract else f"{subj.nom} has")
        elif name == "s":
            plural, first = pron.plural, subj.pron == "i"
            out.append(pron.nom)
        elif name == "P":
            out.append(_possessive(subj))
        elif name == "O":
            out.append(_object(subj))
        elif name == "p":
            out.append(pron.poss)
        elif name == "o":
            out.append(pron.obj)
        elif name == "r":
            out.append(pron.refl)
        elif name == "be":
            out.append("am" if first else "are" if plural else "is")
        elif name == "was":
            out.append("was" if first or not plural else "were")
        elif name == "have":
            out.append("have" if plural else "has")
        elif name == "do":
            out.append("do" if plural else "does")
        else:
            out.append(slots[name])
    out.append(template[pos:])
    text = _ARTICLE.sub(r"\1n ", "".join(out))
    text = _DOUBLE_ARTICLE.sub(_one_article, text)
    may_capitalise = not (subj.nocap and template.startswith(_SUBJECT_START))
    return text, may_capitalise


def _one_article(match: re.Match[str]) -> str:
    """ "the the Netherlands" -> "the Netherlands", "The a ..." -> "A ..." """
    second = match.group(2)
    return (second.capitalize() if match.group(1) == "T" else second) + " "


def _capitalise(text: str) -> str:
    head = text.split(" ", 1)[0]
    if _CAPITALISE.fullmatch(head):
        return text[0].upper() + text[1:]
    return text


# ---------------------------------------------------------------------------------------------
# Times of events: (type, key, forms); two events are separate when their keys differ.

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("March", "April", "May", "June", "September", "October", "November")


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _times() -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    days = tuple((day, (f"on {day}",)) for day in _WEEKDAYS)
    dates: list[tuple[str, tuple[str, ...]]] = []
    for month in _MONTHS:
        for day in (3, 8, 12, 17, 21, 26):
            forms = (f"on {day} {month}", f"on {month} {day}", f"on the {_ordinal(day)} of {month}")
            dates.append((f"{month}-{day}", forms))
    return {"weekday": days, "date": tuple(dates)}


_TIMES = _times()

# ---------------------------------------------------------------------------------------------
# Noise

_SOURCE_PREFIXES = (
    "According to the wiki,",
    "From the standup notes:",
    "Per the CRM,",
    "Note:",
    "Memory:",
    "User said:",
    "From Slack:",
    "Per the ticket,",
    "In the onboarding doc:",
    "FYI,",
    "Update:",
    "For the record,",
    "As noted in the handover doc,",
    "Assistant memory:",
    "Call notes:",
)
_SOURCE_SUFFIXES = (
    " (per the CRM)",
    " (from the support ticket)",
    " (source: onboarding doc)",
    ", according to the wiki",
    " — from the Monday sync",
    " (noted by the assistant)",
    " (from an email thread)",
    " [from chat]",
)
_ASIDES = (
    ", which came up when we were talking about holiday plans over dinner last night",
    " — worth keeping in mind when we plan the next quarter and the budget reviews",
    ", as mentioned in the long email thread about the reorganisation last week",
    " (this came up again at the end of the meeting, after everyone else had left)",
    " — mentioned it over coffee",
    ", for what it's worth",
    " (this came up during the weekly sync)",
    ", according to the notes from the onboarding call",
    " — noting it here for later",
    ", which came up while we were planning the offsite",
    ", in case that matters for the booking",
    " (came up in passing)",
    ", as discussed on the phone earlier",
)
_CHATTY = ("btw", "fyi", "oh and", "heads up,", "so", "ok so", "just so you know,", "also")
_STILL = (
    ("Still: ", ""),
    ("As before, ", ""),
    ("", ", same as before"),
    ("", " — nothing has changed there"),
    ("Reminder: ", ""),
    ("", ", as always"),
)
_NO_PREFIX = (
    "correction",
    "actually",
    "scratch that",
    "post-mortem",
    "Still:",
    "As before",
    "Reminder",
)
_MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class _Said:
    """A rendered statement before noise."""

    text: str
    may_capitalise: bool
    template: str = ""
    anaphoric: bool = False  # names its subject with a pronoun: it cannot be said first


class _Builder:
    """Makes the pairs of one kind after another from one random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.by_name = {family.name: family for family in FAMILIES}
        self.single = [f for f in FAMILIES if f.shape == "single"]
        self.multi = [f for f in FAMILIES if f.shape == "multi"]
        self.events = [f for f in FAMILIES if f.shape == "event"]
        self.change_families = [
            f
            for f in FAMILIES
            if (f.shape == "single" and self._has(f, "change"))
            or (f.shape == "event" and (f.change or f.move))
        ]
        self.implied_families = [
            f for f in self.single if self._has(f, "implied") or f.plain_contradicts
        ]
        self.retract_families = [
            f for f in FAMILIES if f.shape != "static" and (self._has(f, "retract") or f.past)
        ]
        self.hedge_families = [f for f in self.single if f.hedge or f.past]
        self.pools: dict[str, list[Family]] = {}
        for family in FAMILIES:
            self.pools.setdefault(family.subject, []).append(family)
        self.compatible_pools = [pool for pool, fams in self.pools.items() if len(fams) >= 2]
        self.extra = kappa_families_extra.Extra(rng, _render)

    def _extra(self, made: kappa_families_extra.Made, kind: str) -> LabelledPair | None:
        """A pair from the log, instance and implied-state tables (kappa_families_extra)."""
        if made is None:
            return None
        (old_text, old_cap), (new_text, new_cap), name = made
        if _LEFTOVER.search(old_text + new_text) or old_text == new_text:
            return None
        if min(len(old_text.split()), len(new_text.split())) < 3:
            return None
        older, newer = _Said(old_text, old_cap), _Said(new_text, new_cap)
        return LabelledPair(
            older=self._dress(older),
            newer=self._dress(newer),
            label=1 if kind in POSITIVE_KINDS else 0,
            kind=kind,
            family=name,
        )

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _templates(family: Family, value: Value, role: str) -> tuple[str, ...]:
        own: tuple[str, ...] = getattr(value, role) if role in _VALUE_ROLES else ()
        shared: tuple[str, ...] = () if value.own else getattr(family, role)
        return own + shared

    @classmethod
    def _has(cls, family: Family, role: str) -> bool:
        return any(cls._templates(family, value, role) for value in family.values)

    def _subject(self, family: Family) -> Subject:
        return subject(family.subject, self.rng, no_partner=family.subject_filter == "no_partner")

    def _other(self, family: Family, first: Subject) -> Subject | None:
        no_partner = family.subject_filter == "no_partner"
        return other_subject(family.subject, first, self.rng, no_partner=no_partner)

    def _follow(self, subj: Subject) -> Subject:
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

    def _values(self, family: Family, *subjects: Subject) -> list[Value]:
        """The family's values that do not name one of the subjects ("Arjun's son Arjun")."""
        givens = {s.given for s in subjects if s.given}
        if not givens:
            return list(family.values)
        return [v for v in family.values if not givens & set(v.key.split())]

    def _change_ok(self, family: Family, old: Value, new: Value, template: str = "") -> bool:
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

    def _when(self, kind: str | None = None) -> tuple[str, str, tuple[str, ...]]:
        kind = kind or self.rng.choice(("weekday", "date"))
        key, forms = self.rng.choice(_TIMES[kind])
        return kind, key, forms

    def _other_when(self, kind: str, key: str) -> tuple[str, tuple[str, ...]]:
        while True:
            other_key, forms = self.rng.choice(_TIMES[kind])
            if other_key != key:
                return other_key, forms

    def _say(
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
        same_as: _Said | None = None,
    ) -> _Said | None:
        """One statement of ``role`` about ``value``, or None when no template fits."""
        fits = []
        for template in self._templates(family, value, role):
            if ("{old" in template and old is None) or (no_year and "{year}" in template):
                continue
            if ("{when}" in template and not when) or ("{oldwhen}" in template and not oldwhen):
                continue
            if family.shape == "event" and "{when}" not in template and when and role == "state":
                continue
            if avoid is not None and avoid(template):
                continue
            if same_as is not None and template != same_as.template:
                continue
            if template.startswith(("+", "-")) and (
                old is None or not self._change_ok(family, old, value, template)
            ):
                continue
            fits.append(template)
        if not fits:
            return None
        chosen = self.rng.choice(fits)
        template = chosen.lstrip("+-")
        slots = {
            "v": form if form is not None else self.rng.choice(value.forms),
            "vb": value.bare_form,
            "old": self.rng.choice(old.forms) if old is not None else "",
            "oldb": old.bare_form if old is not None else "",
            "when": self.rng.choice(when) if when else "",
            "oldwhen": self.rng.choice(oldwhen) if oldwhen else "",
            "year": str(year),
        }
        text, may_capitalise = _render(template, subj, slots)
        if _LEFTOVER.search(text) or len(text.split()) < 3:
            return None
        return _Said(text, may_capitalise, chosen, subj.kind == "pronoun")

    def _dress(self, said: _Said, stamp: str = "") -> str:
        """The statement with optional noise: an aside, a source, chatty lowercase, a stamp."""
        rng = self.rng
        text = said.text
        if rng.random() < 0.1:
            text += rng.choice(_ASIDES)
        if rng.random() < 0.09:
            text = f"{rng.choice(_CHATTY)} {text}".lower()
            text += rng.choice(("", "", "", ".", " lol", " haha", "!"))
        else:
            prefix = suffix = ""
            roll = rng.random()
            if roll < 0.09 and not text.startswith(_NO_PREFIX):
                prefix = rng.choice(_SOURCE_PREFIXES) + " "
            elif roll < 0.15:
                suffix = rng.choice(_SOURCE_SUFFIXES)
            if said.may_capitalise and not prefix.endswith(", "):
                text = _capitalise(text)
            end = "." if rng.random() < 0.88 else rng.choice(("", "!"))
            text = f"{prefix}{text}{suffix}{end}"
        return f"{stamp} {text}" if stamp else text

    def _stamps(self, family_names: Iterable[str]) -> tuple[str, str]:
        """Timestamps for (older, newer), newer after older; none for events or mostly."""
        if self.rng.random() >= 0.07:
            return "", ""
        if any(self.by_name[name].shape == "event" for name in family_names):
            return "", ""
        year = self.rng.randint(2019, 2024)
        first = self.rng.randint(0, 300)
        second = first + self.rng.randint(1, 35)
        style = self.rng.randrange(3)
        return _stamp(year, first, style), _stamp(year, second, style)

    def _pair(
        self,
        older: _Said,
        newer: _Said,
        kind: str,
        family: Family,
        *,
        swap: bool = False,
        other_family: Family | None = None,
    ) -> LabelledPair:
        if swap and self.rng.random() < 0.5 and not (older.anaphoric or newer.anaphoric):
            older, newer = newer, older
        names = [family.name] + ([other_family.name] if other_family else [])
        first_stamp, second_stamp = self._stamps(names)
        return LabelledPair(
            older=self._dress(older, first_stamp),
            newer=self._dress(newer, second_stamp),
            label=1 if kind in POSITIVE_KINDS else 0,
            kind=kind,
            family=family.name,
        )

    def _year(self) -> int:
        return self.rng.randint(2012, 2022)

    # -- kinds -----------------------------------------------------------------------------

    def explicit_change(self) -> LabelledPair | None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.12:
            return self._extra(self.extra.state_change(), "explicit_change")
        if roll < 0.2:
            return self._extra(self.extra.instance_change(), "explicit_change")
        family = rng.choice(self.change_families)
        subj = self._subject(family)
        later = self._follow(subj)
        year = self._year()
        if family.shape == "event":
            kind, key, when = self._when()
            if family.move and (not family.change or rng.random() < 0.5):
                value = rng.choice(family.values)
                _key, new_when = self._other_when(kind, key)
                older = self._say(family, "state", subj, value, when=when)
                newer = self._say(family, "move", later, value, when=new_when, oldwhen=when)
            else:
                old, value = rng.sample(family.values, 2)
                older = self._say(family, "state", subj, old, when=when)
                newer = self._say(family, "change", later, value, old=old, when=when)
        else:
            values = self._values(family, subj)
            old, value = rng.sample(values, 2)
            if not self._change_ok(family, old, value):
                return None
            roll = rng.random()
            role = "implied" if roll < 0.1 else "detail" if roll < 0.16 else "state"
            older = self._say(family, role, subj, old, year=year) or self._say(
                family, "state", subj, old, year=year
            )
            newer = self._say(family, "change", later, value, old=old, year=year)
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "explicit_change", family)

    def implied_change(self) -> LabelledPair | None:
        rng = self.rng
        if rng.random() < 0.5:
            return self._extra(self.extra.implied(), "implied_change")
        family = rng.choice(self.implied_families)
        subj = self._subject(family)
        year = self._year()
        old, value = rng.sample(self._values(family, subj), 2)
        if not self._change_ok(family, old, value):
            return None
        later = self._follow(subj)
        newer = None
        if rng.random() < 0.72 or not family.plain_contradicts:
            newer = self._say(family, "implied", later, value, old=old, year=year)
        role = "implied" if rng.random() < 0.15 or newer is None else "state"
        older = self._say(family, role, subj, old, year=year) or self._say(
            family, "state", subj, old, year=year
        )
        if newer is None and family.plain_contradicts:
            same = older if rng.random() < 0.4 else None  # "I live in X" / "I live in Y"
            newer = self._say(
                family, "state", later, value, year=year, no_year=True, same_as=same
            ) or self._say(family, "state", later, value, year=year, no_year=True)
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "implied_change", family)

    def retraction(self) -> LabelledPair | None:
        rng = self.rng
        if rng.random() < 0.1:
            return self._extra(self.extra.implied_retract(), "retraction")
        family = rng.choice(self.retract_families)
        subj = self._subject(family)
        later = self._follow(subj)
        value = rng.choice(self._values(family, subj))
        when: tuple[str, ...] = ()
        if family.shape == "event":
            when = self._when()[2]
        use_past = bool(family.past) and (
            rng.random() < 0.25 or not self._templates(family, value, "retract")
        )
        newer = self._say(family, "past" if use_past else "retract", later, value, when=when)
        older = self._say(family, "state", subj, value, when=when, year=self._year())
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "retraction", family)

    def paraphrase(self) -> LabelledPair | None:
        rng = self.rng
        family = rng.choice(FAMILIES)
        subj = self._subject(family)
        later = self._follow(subj)
        value = rng.choice(self._values(family, subj))
        year = self._year()
        when = self._when()[2] if family.shape == "event" else ()
        older = self._say(family, "state", subj, value, when=when, year=year)
        roll = rng.random()
        newer: _Said | None = None
        swap = True
        if roll < 0.14 and value.broader:
            newer = self._say(
                family,
                "state",
                later,
                value,
                when=when,
                year=year,
                form=rng.choice(value.broader),
                avoid=lambda t: "{v}" not in t,
            )
            swap = False
        elif roll < 0.26 and family.detail:
            newer = self._say(family, "detail", later, value, when=when, year=year)
        elif roll < 0.38 and self._templates(family, value, "implied"):
            implied = self._say(family, "implied", subj, value, year=year)
            if implied is not None:
                older, newer, swap = (
                    implied,
                    self._say(family, "state", later, value, year=year),
                    False,
                )
        elif roll < 0.46 and family.shape != "event":
            prefix, suffix = rng.choice(_STILL)
            again = self._say(family, "state", later, value, when=when, year=year)
            if again is not None:
                newer = _Said(f"{prefix}{again.text}{suffix}", again.may_capitalise)
                swap = False
        if newer is None:
            newer = self._say(family, "state", later, value, when=when, year=year)
        if older is None or newer is None or older.text == newer.text:
            return None
        return self._pair(older, newer, "paraphrase", family, swap=swap)

    def compatible(self) -> LabelledPair | None:
        rng = self.rng
        if rng.random() < 0.15:
            return self._extra(self.extra.implied_plan(), "compatible")
        year = self._year()
        if rng.random() < 0.22:  # the same attribute: a plan, a visit, a past value
            family = rng.choice(self.hedge_families)
            subj = self._subject(family)
            old, value = rng.sample(self._values(family, subj), 2)
            role = "hedge" if family.hedge and (not family.past or rng.random() < 0.7) else "past"
            older = self._say(family, "state", subj, old, year=year)
            newer = self._say(family, role, self._follow(subj), value, old=old, year=year)
            if older is None or newer is None:
                return None
            return self._pair(older, newer, "compatible", family)
        pool = rng.choice(self.compatible_pools)
        first = rng.choice(self.pools[pool])
        partners = [
            f
            for f in self.pools[pool]
            if f is not first and f.name not in first.conflicts and first.name not in f.conflicts
        ]
        shared = [f for f in partners if first.domain in _SHARED and f.domain == first.domain]
        if shared and rng.random() < 0.6:
            partners = shared
        if not partners:
            return None
        second = rng.choice(partners)
        subj = self._subject(first)
        if second.subject_filter == "no_partner" and subj.group == "partner":
            return None
        value_a = rng.choice(self._values(first, subj))
        value_b = rng.choice(self._values(second, subj))
        if second in shared:
            same = [v for v in second.values if v.key == value_a.key]
            value_b = same[0] if same else value_b
        clustered = bool(set(first.clusters) & set(second.clusters))
        role = "state"
        if not clustered and second.shape == "single" and rng.random() < 0.35:
            role = rng.choice(("change", "implied"))
        older = self._say(first, "state", subj, value_a, when=self._when()[2], year=year)
        later = self._follow(subj)
        newer = None
        if role != "state":
            others = [v for v in self._values(second, subj) if v.key != value_b.key]
            old_b = rng.choice(others) if others else None
            if old_b is not None and self._change_ok(second, old_b, value_b):
                newer = self._say(second, role, later, value_b, old=old_b, year=year)
        if newer is None:
            newer = self._say(second, "state", later, value_b, when=self._when()[2], year=year)
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "compatible", first, swap=True, other_family=second)

    def multi_valued(self) -> LabelledPair | None:
        rng = self.rng
        family = rng.choice(self.multi)
        subj = self._subject(family)
        old, value = rng.sample(self._values(family, subj), 2)
        year = self._year()
        older = self._say(family, "add" if rng.random() < 0.2 else "state", subj, old, year=year)
        role = "add" if rng.random() < 0.55 else "state"
        later = self._follow(subj)
        same = older if role == "state" and rng.random() < 0.5 else None
        newer = self._say(family, role, later, value, year=year, same_as=same) or self._say(
            family, role, later, value, year=year
        )
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "multi_valued", family, swap=role == "state")

    def separate_events(self) -> LabelledPair | None:
        rng = self.rng
        if rng.random() < 0.6:
            return self._extra(self.extra.log_pair(), "separate_events")
        family = rng.choice(self.events)
        subj = self._subject(family)
        kind, key, when = self._when()
        _other_key, other_when = self._other_when(kind, key)
        old = rng.choice(family.values)
        value = rng.choice(family.values)
        if family.move and old.key == value.key:
            return None
        older = self._say(family, "state", subj, old, when=when)
        later = self._follow(subj)
        same = older if rng.random() < 0.35 else None
        newer = self._say(
            family, "state", later, value, when=other_when, same_as=same
        ) or self._say(family, "state", later, value, when=other_when)
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "separate_events", family)

    def other_person(self) -> LabelledPair | None:
        rng = self.rng
        if rng.random() < 0.45:
            return self._extra(self.extra.instance_pair(), "other_person")
        family = rng.choice(FAMILIES)
        first = self._subject(family)
        second = self._other(family, first)
        if second is None:
            return None
        values = self._values(family, first, second)
        old = rng.choice(values)
        value = old if rng.random() < 0.4 and not family.unique else rng.choice(values)
        if family.unique and value.key == old.key:
            return None
        year = self._year()
        kind, key, when = self._when()
        older = self._say(family, "state", first, old, when=when, year=year)
        role = _other_person_role(family.shape, rng.random())
        new_when = when if rng.random() < 0.5 else self._other_when(kind, key)[1]
        same = older if role == "state" and rng.random() < 0.4 else None
        newer = self._say(
            family,
            role,
            second,
            value,
            old=old if value.key != old.key else None,
            when=new_when,
            year=year,
            avoid=_shared_reference,
            same_as=same,
        ) or self._say(family, "state", second, value, when=new_when, year=year)
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "other_person", family)

    def unrelated(self) -> LabelledPair | None:
        rng = self.rng
        first, second = rng.sample(FAMILIES, 2)
        subj_a = self._subject(first)
        if first.subject == second.subject:
            subj_b = self._other(second, subj_a)
            if subj_b is None:
                return None
        else:
            subj_b = self._subject(second)
        value_a = rng.choice(self._values(first, subj_a, subj_b))
        value_b = rng.choice(self._values(second, subj_a, subj_b))
        older = self._say(first, "state", subj_a, value_a, when=self._when()[2], year=self._year())
        newer = None
        if second.shape == "single" and rng.random() < 0.25:
            others = [v for v in second.values if v.key != value_b.key]
            old_b = rng.choice(others)
            if self._change_ok(second, old_b, value_b):
                newer = self._say(
                    second, "change", subj_b, value_b, old=old_b, avoid=_shared_reference
                )
        if newer is None:
            newer = self._say(second, "state", subj_b, value_b, when=self._when()[2])
        if older is None or newer is None:
            return None
        return self._pair(older, newer, "unrelated", first, other_family=second)


_VALUE_ROLES = frozenset({"state", "change", "implied", "retract"})
_SHARED = frozenset({"city", "language"})  # domains whose shared values make good compatibles


def _other_person_role(shape: str, roll: float) -> str:
    """What another person's statement does: state, change, imply or end their own value."""
    if shape == "multi":
        return "add" if roll < 0.3 else "retract" if roll < 0.5 else "state"
    if shape == "single":
        for role, below in (("change", 0.3), ("implied", 0.42), ("retract", 0.55)):
            if roll < below:
                return role
    return "state"


def _shared_reference(template: str) -> bool:
    """Whether a template says "the <value>" (another person's "sold the Honda Civic" could be
    read as selling the first person's car)."""
    return any(f"the {{{slot}}}" in template for slot in ("v", "vb", "old", "oldb"))


def _stamp(year: int, day_of_year: int, style: int) -> str:
    month, day = divmod(day_of_year, 28)
    day += 1
    if style == 0:
        return f"{year}-{month + 1:02d}-{day:02d}:"
    if style == 1:
        return f"({day} {_MONTH_ABBR[month]} {year})"
    return f"{_MONTH_ABBR[month]} {day}, {year} —"


# ---------------------------------------------------------------------------------------------
# Public API


def _check_mix(mix: Mapping[str, float] | None) -> dict[str, float]:
    if mix is None:
        return dict(DEFAULT_MIX)
    if not isinstance(mix, Mapping):
        raise InvalidInputError(
            "mix", f"is a {type(mix).__name__}", "pass a mapping of kind to fraction"
        )
    for kind, fraction in mix.items():
        if kind not in KINDS:
            raise InvalidInputError("mix", f"has an unknown kind {kind!r}", f"use kinds of {KINDS}")
        if (
            isinstance(fraction, bool)
            or not isinstance(fraction, int | float)
            or not math.isfinite(fraction)
            or fraction < 0
        ):
            raise InvalidInputError(
                "mix", f"gives {kind!r} the fraction {fraction!r}", "use finite numbers >= 0"
            )
    total = float(sum(mix.values()))
    if total <= 0:
        raise InvalidInputError("mix", "has no positive fraction", "give at least one kind > 0")
    return {kind: float(mix.get(kind, 0.0)) / total for kind in KINDS}


def quotas(count: int, mix: Mapping[str, float]) -> dict[str, int]:
    """How many pairs of each kind: the fractions of ``count``, largest remainders rounded up."""
    exact = {kind: count * mix.get(kind, 0.0) for kind in KINDS}
    out = {kind: math.floor(value) for kind, value in exact.items()}
    rest = count - sum(out.values())
    order = sorted(KINDS, key=lambda kind: (-(exact[kind] - out[kind]), KINDS.index(kind)))
    for kind in order[:rest]:
        out[kind] += 1
    return out


def generate_pairs(
    *, seed: int, count: int, mix: Mapping[str, float] | None = None
) -> list[LabelledPair]:
    """``count`` distinct labelled pairs, kinds in the proportions of ``mix`` (default
    :data:`DEFAULT_MIX`; normalised to sum 1), shuffled; the same ``seed`` gives the same list."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError("seed", f"is {seed!r}", "pass an int")
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
        raise InvalidInputError("count", f"is {count!r}", f"pass an int from 0 to {MAX_COUNT}")
    fractions = _check_mix(mix)
    rng = random.Random(seed)
    builder = _Builder(rng)
    seen: set[tuple[str, str]] = set()
    pairs: list[LabelledPair] = []
    for kind, wanted in quotas(count, fractions).items():
        make: Callable[[], LabelledPair | None] = getattr(builder, kind)
        made = failures = 0
        while made < wanted:
            pair = make()
            if pair is None or (pair.older, pair.newer) in seen:
                failures += 1
                if failures > 50 * wanted + 5000:
                    raise InvalidInputError(
                        "count",
                        f"only {made} distinct {kind} pairs could be made",
                        "ask for fewer pairs or give this kind a smaller share of the mix",
                    )
                continue
            seen.add((pair.older, pair.newer))
            pairs.append(pair)
            made += 1
    rng.shuffle(pairs)
    return pairs


def write_jsonl(pairs: Iterable[LabelledPair], path: str | os.PathLike[str]) -> int:
    """Write one JSON object per pair ({"older", "newer", "label", "kind", "family"}) to
    ``path``; returns the number written."""
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for index, pair in enumerate(pairs):
            if not isinstance(pair, LabelledPair):
                raise InvalidInputError(
                    f"pairs[{index}]", f"is a {type(pair).__name__}", "pass LabelledPair objects"
                )
            record = {
                "older": pair.older,
                "newer": pair.newer,
                "label": pair.label,
                "kind": pair.kind,
                "family": pair.family,
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written
