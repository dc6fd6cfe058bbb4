"""Makes the labelled pairs of each kind, one kind after another, from one random stream.

Each kind's method returns one :class:`~temporal_rag_training.labelled.LabelledPair` or None
when the draw did not work out (no template fits, an ambiguous change); the generator then
draws again. About a fifth of the pairs come from the log, instance and implied-state tables
(:mod:`temporal_rag_training.makers`), the rest from the attribute families.
"""

from __future__ import annotations

import random

from temporal_rag_training.families import Family
from temporal_rag_training.labelled import LabelledPair
from temporal_rag_training.noise import noise
from temporal_rag_training.rendering import Said
from temporal_rag_training.statements import Statements


class Builder(Statements):
    """One method per pair kind (see :data:`temporal_rag_training.labelled.KINDS`)."""

    def __init__(self, rng: random.Random, *, phrasing_share: float = 0.0) -> None:
        super().__init__(rng, phrasing_share=phrasing_share)
        every = self.families
        self.single = [f for f in every if f.shape == "single"]
        self.multi = [f for f in every if f.shape == "multi"]
        self.events = [f for f in every if f.shape == "event"]
        self.change_families = [
            f
            for f in every
            if (f.shape == "single" and self.has(f, "change"))
            or (f.shape == "event" and (f.change or f.move))
        ]
        self.implied_families = [
            f for f in self.single if self.has(f, "implied") or f.plain_contradicts
        ]
        self.retract_families = [
            f for f in every if f.shape != "static" and (self.has(f, "retract") or f.past)
        ]
        self.hedge_families = [f for f in self.single if f.hedge or f.past]
        self.bare_families = [
            f for f in self.single if f.plain_contradicts and self.has(f, "state")
        ]
        self.pools: dict[str, list[Family]] = {}
        for family in every:
            self.pools.setdefault(family.subject, []).append(family)
        self.compatible_pools = [pool for pool, fams in self.pools.items() if len(fams) >= 2]

    def explicit_change(self) -> LabelledPair | None:
        """A value, then a statement that it changed to another (label 1)."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.12:
            return self.made(self.makers.state_change(), "explicit_change")
        if roll < 0.2:
            return self.made(self.makers.instance_change(), "explicit_change")
        family = rng.choice(self.change_families)
        subj = self.subject(family)
        later = self.follow(subj)
        year = self.year()
        if family.shape == "event":
            kind, key, when = self.when()
            if family.move and (not family.change or rng.random() < 0.5):
                value = rng.choice(family.values)
                _key, new_when = self.other_when(kind, key)
                older = self.say(family, "state", subj, value, when=when)
                newer = self.say(family, "move", later, value, when=new_when, oldwhen=when)
            else:
                old, value = rng.sample(family.values, 2)
                older = self.say(family, "state", subj, old, when=when)
                newer = self.say(family, "change", later, value, old=old, when=when)
        else:
            values = self.values(family, subj)
            old, value = rng.sample(values, 2)
            if not self.change_ok(family, old, value):
                return None
            roll = rng.random()
            role = "implied" if roll < 0.1 else "detail" if roll < 0.16 else "state"
            older = self.say(family, role, subj, old, year=year) or self.say(
                family, "state", subj, old, year=year
            )
            newer = self.say(family, "change", later, value, old=old, year=year)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "explicit_change", family)

    def bare_change(self) -> LabelledPair | None:
        """A value, then another value said plainly, with no word of change (label 1): only
        families whose plain statements of two values contradict."""
        rng = self.rng
        family = rng.choice(self.bare_families)
        subj = self.subject(family)
        old, value = rng.sample(self.values(family, subj), 2)
        if not self.change_ok(family, old, value):
            return None
        older = self.say(family, "state", subj, old, year=self.year())
        newer = self.say(family, "state", self.follow(subj), value, year=self.year(), no_year=True)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "bare_change", family)

    def same_subject_news(self) -> LabelledPair | None:
        """A value of one attribute and news about the same subject (an event, one more value
        of a multi-valued attribute, a plan), in either order (label 0)."""
        rng = self.rng
        family = rng.choice(self.single)
        subj = self.subject(family)
        news = [f for f in self.pools.get(family.subject, []) if f.shape in ("event", "multi")]
        if not news:
            return None
        other = rng.choice(news)
        value = rng.choice(self.values(family, subj))
        older = self.say(family, "state", subj, value, year=self.year())
        if self.phrasing_share > 0 and rng.random() < self.phrasing_share / 2:
            newer = self.news(self.follow(subj))
        else:
            when = self.when()[2] if other.shape == "event" else ()
            newer = self.say(
                other,
                "state",
                self.follow(subj),
                rng.choice(self.values(other, subj)),
                when=when,
                year=self.year(),
            )
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "same_subject_news", family, swap=True, other_family=other)

    def implied_change(self) -> LabelledPair | None:
        """A value, then one that implies another without naming the change (label 1)."""
        rng = self.rng
        if rng.random() < 0.5:
            return self.made(self.makers.implied(), "implied_change")
        family = rng.choice(self.implied_families)
        subj = self.subject(family)
        year = self.year()
        old, value = rng.sample(self.values(family, subj), 2)
        if not self.change_ok(family, old, value):
            return None
        later = self.follow(subj)
        newer = None
        if rng.random() < 0.72 or not family.plain_contradicts:
            newer = self.say(family, "implied", later, value, old=old, year=year)
        role = "implied" if rng.random() < 0.15 or newer is None else "state"
        older = self.say(family, role, subj, old, year=year) or self.say(
            family, "state", subj, old, year=year
        )
        if newer is None and family.plain_contradicts:
            same = older if rng.random() < 0.4 else None  # "I live in X" / "I live in Y"
            newer = self.say(
                family, "state", later, value, year=year, no_year=True, same_as=same
            ) or self.say(family, "state", later, value, year=year, no_year=True)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "implied_change", family)

    def retraction(self) -> LabelledPair | None:
        """A value, then a statement that it no longer holds (label 1)."""
        rng = self.rng
        if rng.random() < 0.1:
            return self.made(self.makers.implied_retract(), "retraction")
        family = rng.choice(self.retract_families)
        subj = self.subject(family)
        later = self.follow(subj)
        value = rng.choice(self.values(family, subj))
        when: tuple[str, ...] = ()
        if family.shape == "event":
            when = self.when()[2]
        use_past = bool(family.past) and (
            rng.random() < 0.25 or not self.templates(family, value, "retract")
        )
        newer = self.say(family, "past" if use_past else "retract", later, value, when=when)
        older = self.say(family, "state", subj, value, when=when, year=self.year())
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "retraction", family)

    def paraphrase(self) -> LabelledPair | None:
        """The same value said twice: reworded, broader, detailed or repeated (label 0)."""
        rng = self.rng
        family = rng.choice(self.families)
        subj = self.subject(family)
        later = self.follow(subj)
        value = rng.choice(self.values(family, subj))
        year = self.year()
        when = self.when()[2] if family.shape == "event" else ()
        older = self.say(family, "state", subj, value, when=when, year=year)
        roll = rng.random()
        newer: Said | None = None
        swap = True
        if roll < 0.14 and value.broader:
            newer = self.say(
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
            newer = self.say(family, "detail", later, value, when=when, year=year)
        elif roll < 0.38 and self.templates(family, value, "implied"):
            implied = self.say(family, "implied", subj, value, year=year)
            if implied is not None:
                older, newer, swap = (
                    implied,
                    self.say(family, "state", later, value, year=year),
                    False,
                )
        elif roll < 0.46 and family.shape != "event":
            prefix, suffix = rng.choice(noise().still)
            again = self.say(family, "state", later, value, when=when, year=year)
            if again is not None:
                newer = Said(f"{prefix}{again.text}{suffix}", again.may_capitalise)
                swap = False
        if newer is None:
            newer = self.say(family, "state", later, value, when=when, year=year)
        if older is None or newer is None or older.text == newer.text:
            return None
        return self.pair(older, newer, "paraphrase", family, swap=swap)

    def compatible(self) -> LabelledPair | None:
        """Two statements that both hold: another attribute of the subject, or a plan (label 0)."""
        rng = self.rng
        if rng.random() < 0.15:
            return self.made(self.makers.implied_plan(), "compatible")
        year = self.year()
        if rng.random() < 0.22:  # the same attribute: a plan, a visit, a past value
            return self._hedged(year)
        pool = rng.choice(self.compatible_pools)
        first = rng.choice(self.pools[pool])
        partner = self._partner(first)
        if partner is None:
            return None
        second, shares_values = partner
        subj = self.subject(first)
        if second.subject_filter == "no_partner" and subj.group == "partner":
            return None
        value_a = rng.choice(self.values(first, subj))
        value_b = rng.choice(self.values(second, subj))
        if shares_values:
            same = [v for v in second.values if v.key == value_a.key]
            value_b = same[0] if same else value_b
        clustered = bool(set(first.clusters) & set(second.clusters))
        role = "state"
        if not clustered and second.shape == "single" and rng.random() < 0.35:
            role = rng.choice(("change", "implied"))
        older = self.say(first, "state", subj, value_a, when=self.when()[2], year=year)
        later = self.follow(subj)
        newer = None
        if role != "state":
            others = [v for v in self.values(second, subj) if v.key != value_b.key]
            old_b = rng.choice(others) if others else None
            if old_b is not None and self.change_ok(second, old_b, value_b):
                newer = self.say(second, role, later, value_b, old=old_b, year=year)
        if newer is None:
            newer = self.say(second, "state", later, value_b, when=self.when()[2], year=year)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "compatible", first, swap=True, other_family=second)

    def _hedged(self, year: int) -> LabelledPair | None:
        """A value, then a plan, a visit or a past value of another: both hold."""
        rng = self.rng
        family = rng.choice(self.hedge_families)
        subj = self.subject(family)
        old, value = rng.sample(self.values(family, subj), 2)
        role = "hedge" if family.hedge and (not family.past or rng.random() < 0.7) else "past"
        older = self.say(family, "state", subj, old, year=year)
        newer = self.say(family, role, self.follow(subj), value, old=old, year=year)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "compatible", family)

    def _partner(self, first: Family) -> tuple[Family, bool] | None:
        """Another family of the same subject pool that may hold with ``first``, and whether it
        shares its values (a home city and a work city), or None."""
        partners = [
            f
            for f in self.pools[first.subject]
            if f is not first and f.name not in first.conflicts and first.name not in f.conflicts
        ]
        shared = [f for f in partners if first.domain in _SHARED and f.domain == first.domain]
        if shared and self.rng.random() < 0.6:
            partners = shared
        if not partners:
            return None
        second = self.rng.choice(partners)
        return second, second in shared

    def multi_valued(self) -> LabelledPair | None:
        """Two values of a multi-valued attribute: one more, not a replacement (label 0)."""
        rng = self.rng
        family = rng.choice(self.multi)
        subj = self.subject(family)
        old, value = rng.sample(self.values(family, subj), 2)
        year = self.year()
        older = self.say(family, "add" if rng.random() < 0.2 else "state", subj, old, year=year)
        role = "add" if rng.random() < 0.55 else "state"
        later = self.follow(subj)
        same = older if role == "state" and rng.random() < 0.5 else None
        newer = self.say(family, role, later, value, year=year, same_as=same) or self.say(
            family, role, later, value, year=year
        )
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "multi_valued", family, swap=role == "state")

    def separate_events(self) -> LabelledPair | None:
        """Two events, or log entries, at different times (label 0)."""
        rng = self.rng
        if rng.random() < 0.6:
            return self.made(self.makers.log_pair(), "separate_events")
        family = rng.choice(self.events)
        subj = self.subject(family)
        kind, key, when = self.when()
        _other_key, other_when = self.other_when(kind, key)
        old = rng.choice(family.values)
        value = rng.choice(family.values)
        if family.move and old.key == value.key:
            return None
        older = self.say(family, "state", subj, old, when=when)
        later = self.follow(subj)
        same = older if rng.random() < 0.35 else None
        newer = self.say(family, "state", later, value, when=other_when, same_as=same) or self.say(
            family, "state", later, value, when=other_when
        )
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "separate_events", family)

    def other_person(self) -> LabelledPair | None:
        """The same attribute of two different subjects (label 0)."""
        rng = self.rng
        if rng.random() < 0.45:
            return self.made(self.makers.instance_pair(), "other_person")
        family = rng.choice(self.families)
        first = self.subject(family)
        second = self.other(family, first)
        if second is None:
            return None
        values = self.values(family, first, second)
        old = rng.choice(values)
        value = old if rng.random() < 0.4 and not family.unique else rng.choice(values)
        if family.unique and value.key == old.key:
            return None
        year = self.year()
        kind, key, when = self.when()
        older = self.say(family, "state", first, old, when=when, year=year)
        role = _other_person_role(family.shape, rng.random())
        new_when = when if rng.random() < 0.5 else self.other_when(kind, key)[1]
        same = older if role == "state" and rng.random() < 0.4 else None
        newer = self.say(
            family,
            role,
            second,
            value,
            old=old if value.key != old.key else None,
            when=new_when,
            year=year,
            avoid=_shared_reference,
            same_as=same,
        ) or self.say(family, "state", second, value, when=new_when, year=year)
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "other_person", family)

    def unrelated(self) -> LabelledPair | None:
        """Two statements of different families about different subjects (label 0)."""
        rng = self.rng
        first, second = rng.sample(self.families, 2)
        subj_a = self.subject(first)
        if first.subject == second.subject:
            subj_b = self.other(second, subj_a)
            if subj_b is None:
                return None
        else:
            subj_b = self.subject(second)
        value_a = rng.choice(self.values(first, subj_a, subj_b))
        value_b = rng.choice(self.values(second, subj_a, subj_b))
        older = self.say(first, "state", subj_a, value_a, when=self.when()[2], year=self.year())
        newer = None
        if second.shape == "single" and rng.random() < 0.25:
            others = [v for v in second.values if v.key != value_b.key]
            old_b = rng.choice(others)
            if self.change_ok(second, old_b, value_b):
                newer = self.say(
                    second, "change", subj_b, value_b, old=old_b, avoid=_shared_reference
                )
        if newer is None:
            newer = self.say(second, "state", subj_b, value_b, when=self.when()[2])
        if older is None or newer is None:
            return None
        return self.pair(older, newer, "unrelated", first, other_family=second)


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
