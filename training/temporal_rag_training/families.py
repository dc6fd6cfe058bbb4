"""The attribute families the training pairs are made from: the data model and its loader.

A :class:`Family` is one attribute (a person's home city, a service's database, the languages
someone speaks, the runs someone logged) with a pool of :class:`Value` objects and sentence
templates. The families are data: one JSON object per family in the area files of
``families/`` (listed in :data:`FAMILY_FILES`, read in that order), with value pools several
families share in ``families/pools.json``. :func:`families` loads them on first use.

In a family object the keys are the field names of :class:`Family`; a field left out has its
default. ``values`` is a list of values or the name of a shared pool (``"cities"``,
``"languages"``, or ``"names"``: people's full names, made from ``subjects.json``). A value is a
string (its one form) or an object with the fields of :class:`Value`. ``never_among`` lists
value keys none of which may change into another (it adds every such pair to ``never``).

Template slots (filled by :mod:`temporal_rag_training.rendering`):

``{S}`` the subject ("I", "Priya Sharma", "my sister", "the billing service"), ``{P}`` its
possessive ("my", "Priya Sharma's"), ``{O}`` its object form ("me", "Priya Sharma"); ``{s}``,
``{p}``, ``{o}``, ``{r}`` the pronoun forms ("she", "her", "her", "herself") for later mentions;
``{be}``, ``{was}``, ``{have}``, ``{do}`` agreeing verbs; ``{Sbe}``/``{Shave}`` subject plus verb,
contracted for pronouns ("I'm", "she's", "Priya is"); ``[live|lives]`` picks the plural/first
person form or the third person singular form, agreeing with the nearest subject slot before it.
``{v}``/``{vb}`` the value and its bare form ("a Honda Civic"/"Honda Civic"), ``{old}``/``{oldb}``
the value it replaced, ``{when}``/``{oldwhen}`` an event's time ("on Tuesday"), ``{year}`` a year.

A change template starting with ``+`` is only used when the new value ranks above the old one
(ordered families: "got a raise"), one starting with ``-`` only when it ranks below.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from temporal_rag_training.datafiles import Node, build, read
from temporal_rag_training.subjects import people, subject_pools

SHAPES = ("single", "multi", "event", "static")
FAMILY_FILES = (
    "people.json",
    "possessions.json",
    "life.json",
    "health.json",
    "personal.json",
    "studies_devices_availability.json",
    "services.json",
    "code.json",
    "organisations.json",
    "products.json",
    "projects.json",
    "multi_valued.json",
    "events.json",
)
POOLS_FILE = "pools.json"
NAMES_POOL = "names"  # the pool of people's full names, made from subjects.json
SUBJECT_FILTERS = ("", "no_partner")


@dataclass(frozen=True, slots=True)
class Value:
    """One value of a family: interchangeable display forms and its own templates."""

    forms: tuple[str, ...]
    broader: tuple[str, ...] = ()  # entailed but less specific ("Colorado" for "Denver")
    bare: str = ""  # without article, for "my {vb}" ("Honda Civic")
    state: tuple[str, ...] = ()  # value-specific plain statements (full sentences)
    change: tuple[str, ...] = ()  # value-specific "it became this" statements
    implied: tuple[str, ...] = ()  # sentences implying this value without naming the attribute
    retract: tuple[str, ...] = ()  # sentences ending this value without a replacement
    own: bool = False  # use only the value's own templates, not the family's {v} templates

    @property
    def key(self) -> str:
        """The value's identity: its first form."""
        return self.forms[0]

    @property
    def bare_form(self) -> str:
        """The form without an article."""
        return self.bare or self.forms[0]


@dataclass(frozen=True, slots=True)
class Family:
    """One attribute family and its templates (see the module docstring for the slots)."""

    name: str
    subject: str  # the subject pool: person, service, org, team, project, ...
    shape: str  # one of SHAPES
    values: tuple[Value, ...]
    state: tuple[str, ...] = ()
    change: tuple[str, ...] = ()  # explicit change to {v} (maybe naming {old}); events: correction
    implied: tuple[str, ...] = ()
    retract: tuple[str, ...] = ()  # events: cancellation
    past: tuple[str, ...] = ()  # "used to ..." ({v}): retraction for the same value
    hedge: tuple[str, ...] = ()  # label-0 near misses about another value: plans, visits
    add: tuple[str, ...] = ()  # multi-valued: one more value
    detail: tuple[str, ...] = ()  # a plain statement with consistent added detail
    move: tuple[str, ...] = ()  # events: moved from {oldwhen} to {when}
    when: str = ""  # events: the time pool
    conflicts: tuple[str, ...] = ()  # families never paired with this one as "compatible"
    clusters: tuple[str, ...] = ()  # a change in one may change the others: never compatible
    domain: str = ""  # shared value vocabulary ("city") for word-sharing compatible pairs
    stateful: bool = False  # a few exclusive states rather than a pool of >= 8 values
    ordered: bool = False  # values are listed from lowest to highest
    monotone: bool = False  # changes only go up (number of children)
    adjacent: bool = False  # changes only go to the next value
    plain_contradicts: bool = True  # two plain statements with different values contradict
    never: tuple[tuple[str, str], ...] = ()  # (old key, new key) changes left out as ambiguous
    subject_filter: str = ""  # "no_partner": not about the speaker's partner
    unique: bool = False  # a value belongs to one subject only (a phone number, a CEO)


@functools.cache
def families() -> tuple[Family, ...]:
    """Every family of the data files, in the order of :data:`FAMILY_FILES`."""
    pools = value_pools()
    found: list[tuple[Family, Node]] = []
    for file in FAMILY_FILES:
        root = read(file)
        root.entries(["families"])
        for node in root.require("families").children():
            node = node.labelled()
            found.append((_family(node, pools), node))
    _check_names(found)
    return tuple(family for family, _node in found)


@functools.cache
def value_pools() -> Mapping[str, tuple[Value, ...]]:
    """The shared value pools by name: those of ``pools.json`` and :data:`NAMES_POOL`."""
    root = read(POOLS_FILE)
    if NAMES_POOL in root.entries():
        root.require(NAMES_POOL).fail("is made from subjects.json; name the pool otherwise")
    pools = {name: _values(node) for name, node in root.members()}
    pools[NAMES_POOL] = _name_values()
    return pools


def _name_values() -> tuple[Value, ...]:
    """Full names with distinct given names, for managers, partners, on-call engineers."""
    seen: set[str] = set()
    out: list[Value] = []
    for index, (given, family, _pronoun) in enumerate(people()):
        if given in seen or index % 2:
            continue
        seen.add(given)
        out.append(Value(forms=(f"{given} {family}",), broader=(given,)))
    return tuple(out)


def _family(node: Node, pools: Mapping[str, tuple[Value, ...]]) -> Family:
    values_node = node.require("values")
    if isinstance(values_node.value, str):
        if values_node.value not in pools:
            values_node.fail(f"names no value pool; known: {sorted(pools)}")
        values = pools[values_node.value]
    else:
        values = _values(values_node)
    if len(values) < 2:
        values_node.fail("should hold at least two values")
    family = build(Family, node, ["never_among"], values=values, never=_never(node))
    if family.shape not in SHAPES:
        node.require("shape").fail(f"should be one of {list(SHAPES)}")
    if family.subject not in subject_pools():
        node.require("subject").fail(f"should be a subject pool of {list(subject_pools())}")
    if family.subject_filter not in SUBJECT_FILTERS:
        node.require("subject_filter").fail(f"should be one of {list(SUBJECT_FILTERS)}")
    keys = {value.key for value in values}
    if len(keys) < len(values):
        values_node.fail("has two values with the same first form")
    for old, new in family.never:
        if old not in keys or new not in keys:
            node.fail(f"never names ({old!r}, {new!r}), not two of its values")
    return family


def _never(node: Node) -> tuple[tuple[str, str], ...]:
    """The ``never`` pairs, then every pair of the ``never_among`` keys."""
    pairs: list[tuple[str, str]] = []
    listed = node.get("never")
    for item in listed.children() if listed is not None else ():
        pair = item.texts()
        if len(pair) != 2:
            item.fail("should be [old key, new key]")
        pairs.append((pair[0], pair[1]))
    among = node.get("never_among")
    keys = among.texts() if among is not None else ()
    pairs.extend((old, new) for old in keys for new in keys)
    return tuple(pairs)


def _values(node: Node) -> tuple[Value, ...]:
    out: list[Value] = []
    for item in node.children():
        if isinstance(item.value, str):
            out.append(Value(forms=(item.value,)))
            continue
        value = build(Value, item)
        if not value.forms:
            item.require("forms").fail("should hold at least one form")
        out.append(value)
    return tuple(out)


def _check_names(found: list[tuple[Family, Node]]) -> None:
    """Family names are unique, and the conflicts name families."""
    seen: set[str] = set()
    for family, node in found:
        if family.name in seen:
            node.require("name").fail("is the name of an earlier family too")
        seen.add(family.name)
    for family, node in found:
        unknown = sorted(set(family.conflicts) - seen)
        if unknown:
            node.require("conflicts").fail(f"names unknown families {unknown}")
