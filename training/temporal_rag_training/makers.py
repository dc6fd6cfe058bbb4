"""Pairs made from the log, state, version, instance and implied-state tables
(:mod:`temporal_rag_training.tables`) for the pair builder: each maker returns (older, newer,
family name) as rendered statements before noise, or None."""

from __future__ import annotations

import random

from temporal_rag_training.rendering import Said, render
from temporal_rag_training.subjects import Subject, first_person, subject, subject_pools
from temporal_rag_training.tables import Implied, implied_states, instances, log_tables

Made = tuple[Said, Said, str] | None

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ABBR = tuple(month[:3] for month in _MONTHS)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_COUNTED = {  # numbered periods: (first low, first high), later steps, format
    "week": ((1, 48), (1, 1, 2), "week {}"),
    "sprint": ((3, 80), (1, 1, 2, 3, 7, 14), "Sprint {}"),
    "build": ((120, 2400), (1, 1, 2, 3, 7, 14), "build {}"),
    "ticket": ((100, 9800), (1, 1, 2, 3, 7, 14), "#{}"),
}


def _periods(kind: str, rng: random.Random) -> tuple[str, str]:
    """Two different period markers of ``kind``, the earlier first."""
    if kind == "month":
        i = rng.randrange(11)
        j = min(11, i + rng.choice((1, 1, 2, 3, 6)))
        return _MONTHS[i], _MONTHS[j]
    if kind == "quarter":
        i = rng.randrange(1, 4)
        year = rng.choice(("", "", " 2023", " 2024", " FY24"))
        return f"Q{i}{year}", f"Q{rng.randrange(i + 1, 5)}{year}"
    if kind in _COUNTED:
        (low, high), steps, fmt = _COUNTED[kind]
        first = rng.randint(low, high)
        return fmt.format(first), fmt.format(first + rng.choice(steps))
    if kind == "date":
        month = rng.randrange(12)
        day = rng.randint(1, 26)
        later = day + rng.randint(1, 3)
        return f"{_ABBR[month]} {day}", f"{_ABBR[month]} {later}"
    if kind == "weekday":
        i = rng.randrange(len(_WEEKDAYS) - 1)
        return _WEEKDAYS[i], _WEEKDAYS[rng.randrange(i + 1, len(_WEEKDAYS))]
    if kind == "term":
        return rng.choice(log_tables().terms)
    if kind == "year":
        start_year = rng.randint(2016, 2024)
        return str(start_year), str(start_year + 1)
    return _versions(rng)


def _versions(rng: random.Random) -> tuple[str, str]:
    major, minor, patch = rng.randint(0, 9), rng.randint(0, 30), rng.randint(0, 12)
    if rng.random() < 0.7:
        return f"{major}.{minor}.{patch}", f"{major}.{minor}.{patch + rng.choice((1, 1, 2))}"
    return f"{major}.{minor}.{patch}", f"{major}.{minor + 1}.0"


def _number(key: str, rng: random.Random) -> tuple[float, str]:
    """A draw of the log value ``key``: (its size, its text)."""
    spec = log_tables().values.get(key)
    if spec is None:  # a date
        month = rng.choice(_MONTHS)
        return 0.0, f"on {month} {rng.randint(1, 28)}"
    if isinstance(spec[0], str):
        return 0.0, str(rng.choice(spec))
    low, high, step, fmt = spec
    n = rng.randrange(int(low), int(high) + 1, int(step))
    if key == "kg":  # tenths of a kilogram
        return n / 10, f"{n / 10:.1f}"
    return float(n), str(fmt).format(n)


def _instance(name: str) -> Subject:
    if name == "I":
        return first_person()
    return Subject(key=name, nom=name, pron="it", kind="thing")


class Makers:
    """The makers, drawing from ``rng``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.me = first_person()

    def _text(self, template: str, subj: Subject | None = None, **slots: str) -> Said:
        return Said(*render(template, subj or self.me, slots))

    def log_pair(self) -> Made:
        """Two entries of one log for different periods: separate records (label 0)."""
        rng = self.rng
        log = rng.choice(log_tables().logs)
        first, second = _periods(log.period, rng)
        older_t = rng.choice(log.entries)
        newer_t = older_t if rng.random() < 0.65 else rng.choice(log.entries)
        a = _number(log.value, rng)[1]
        b = a if rng.random() < 0.15 else _number(log.value, rng)[1]
        older = self._text(older_t, when=first, n=a)
        newer = self._text(newer_t, when=second, n=b)
        return older, newer, log.name

    def state_change(self) -> Made:
        """A "current X" state, then a new current value (label 1)."""
        rng = self.rng
        if rng.random() < 0.35:
            old, new = _versions(rng)
            states, changes = rng.choice(log_tables().versions)
            older_t = rng.choice(states)
            newer_t = older_t if rng.random() < 0.4 else rng.choice(changes)
            return (
                self._text(older_t, n=old),
                self._text(newer_t, n=new, old=old),
                "current_version",
            )
        state = rng.choice(log_tables().states)
        (x, a), (y, b) = _number(state.value, rng), _number(state.value, rng)
        if a == b:
            return None
        older_t = rng.choice(state.state)
        fits = [t for t in state.change if not t.startswith(("+", "-"))]
        fits += [t for t in state.change if t.startswith("+" if y > x else "-")]
        newer_t = older_t if rng.random() < 0.3 else rng.choice(fits)
        newer = self._text(newer_t.lstrip("+-"), n=b, old=a)
        return self._text(older_t, n=a), newer, state.name

    def instance_pair(self) -> Made:
        """The same attribute of two similar instances (label 0), same or other value."""
        rng = self.rng
        inst = rng.choice(instances())
        pair = rng.choice(inst.pairs)
        a, b = pair if rng.random() < 0.5 else pair[::-1]
        v1 = rng.choice(inst.values)
        v2 = v1 if rng.random() < 0.4 else rng.choice(inst.values)
        older_t = rng.choice(inst.state)
        roll = rng.random()
        newer_t = older_t if roll < 0.5 else rng.choice(inst.state + inst.change)
        older = self._text(older_t, _instance(a), v=v1)
        newer = self._text(newer_t, _instance(b), v=v2)
        return older, newer, inst.name

    def instance_change(self) -> Made:
        """The same instance's attribute changes (label 1)."""
        rng = self.rng
        inst = rng.choice(instances())
        name = rng.choice(rng.choice(inst.pairs))
        v1, v2 = rng.sample(inst.values, 2)
        subj = _instance(name)
        older = self._text(rng.choice(inst.state), subj, v=v1)
        newer = self._text(rng.choice(inst.change), subj, v=v2)
        return older, newer, inst.name

    def _implied_subject(self, family: Implied) -> Subject:
        if family.subjects == "person":
            return subject("person", self.rng, no_partner=True)
        pools = family.subjects.split("|")
        if pools[0] in subject_pools():
            return subject(self.rng.choice(pools), self.rng)
        name = self.rng.choice(pools)
        return Subject(key=name, nom=name, pron="it", kind="thing")

    def _implied(self, role: str) -> Made:
        rng = self.rng
        family = rng.choice(implied_states())
        newer_ts: tuple[str, ...] = getattr(family, role)
        if not newer_ts:
            return None
        subj = self._implied_subject(family)
        older = self._text(rng.choice(family.state), subj)
        newer = self._text(rng.choice(newer_ts), subj)
        return older, newer, family.name

    def implied(self) -> Made:
        """A state, then evidence that it is over (label 1)."""
        return self._implied("evidence")

    def implied_retract(self) -> Made:
        """A state, then a statement that ends it (label 1)."""
        return self._implied("retract")

    def implied_plan(self) -> Made:
        """A state, then a plan or a step that does not end it (label 0)."""
        return self._implied("plans")
