"""Who or what the training statements are about, and drawing them at random.

People are the speaker ("I"), named people (given and family names from many cultures, with
he/she/they pronouns) and relations ("my sister", "our landlord"). Systems are services, orgs,
teams, projects, products, feature flags, meetings and the like, each pool with its own names.
The pronouns, names, relations and systems are data, ``families/subjects.json``, loaded on
first use.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace

from temporal_rag_training.datafiles import Node, build, read

SUBJECTS_FILE = "subjects.json"
ANY_PRONOUN = "*"  # a relation that may be he, she or they
_ANY_PRONOUNS = ("he", "she", "they")


@dataclass(frozen=True, slots=True)
class Pronoun:
    """The forms of one pronoun and the verbs agreeing with it."""

    nom: str
    poss: str
    obj: str
    refl: str
    plural: bool  # takes the base verb form ("they live")
    be: str
    was: str
    be_c: str  # "she's"
    have_c: str  # "she's" (as in "she's lived")


@dataclass(frozen=True, slots=True)
class Subject:
    """One way of naming a subject; ``key`` is the same for every way of naming it."""

    key: str
    nom: str  # "Priya Sharma", "my sister", "I", "the billing service"
    pron: str  # a key of pronouns() for later mentions ({s}, {p}, ...)
    kind: str  # first, we, name, relation, pronoun, thing
    nocap: bool = False  # never capitalised at the start of a sentence ("checkout-api")
    given: str = ""  # a person's given name (no statement gives them themselves as a value)
    short: str = ""  # a shorter way to name them later ("Priya")
    group: str = ""  # relations: other_person pairs only join relations of different groups
    distinct: bool = False  # relations that can never be the same person as another group's

    @property
    def pronoun(self) -> Pronoun:
        """The pronoun of later mentions."""
        return _subjects().pronouns[self.pron]

    @property
    def plural(self) -> bool:
        """Whether the subject takes the base verb form ("I live", "we live")."""
        return self.kind in ("first", "we", "pronoun") and self.pronoun.plural

    def as_pronoun(self) -> Subject:
        """The same subject named by its pronoun."""
        return replace(self, nom=self.pronoun.nom, kind="pronoun", nocap=False, short="")

    def as_short(self) -> Subject:
        """The same subject by its shorter name, if it has one."""
        return replace(self, nom=self.short, short="") if self.short else self


@dataclass(frozen=True, slots=True)
class Subjects:
    """The contents of ``subjects.json``.

    ``people``: (given, family, pronoun) for every given name of a culture with each of its
    family names, then the neutral names ("they"). ``relations``: (name, pronoun or
    :data:`ANY_PRONOUN`, group, distinct); distinct relations are never the same person as a
    relation of another distinct group. ``systems``: names by pool; a leading "!" marks a name
    never capitalised, a leading "?" one that may name the same thing as another name of its
    pool. ``aliases``: another name of the same subject.
    """

    pronouns: Mapping[str, Pronoun]
    people: tuple[tuple[str, str, str], ...]
    relations: tuple[tuple[str, str, str, bool], ...]
    systems: Mapping[str, tuple[str, ...]]
    aliases: Mapping[str, str]


@functools.cache
def _subjects() -> Subjects:
    root = read(SUBJECTS_FILE)
    root.entries(["pronouns", "cultures", "neutral", "relations", "systems", "aliases"])
    pronouns = {key: build(Pronoun, node) for key, node in root.require("pronouns").members()}
    for key in ("i", "it", "we", *_ANY_PRONOUNS):
        if key not in pronouns:
            root.require("pronouns").fail(f"has no {key!r}")
    relations = tuple(_relation(node, pronouns) for node in root.require("relations").children())
    systems = {pool: _system_names(node) for pool, node in root.require("systems").members()}
    if "person" in systems:
        root.require("systems").fail('has a pool "person", the pool of people')
    aliases = {name: node.text() for name, node in root.require("aliases").members()}
    return Subjects(pronouns, _people(root), relations, systems, aliases)


def _people(root: Node) -> tuple[tuple[str, str, str], ...]:
    out: list[tuple[str, str, str]] = []
    for culture in root.require("cultures").children():
        culture.entries(["female", "male", "family"])
        families = culture.require("family").texts()
        for pronoun, key in (("she", "female"), ("he", "male")):
            for given in culture.require(key).texts():
                out.extend((given, family, pronoun) for family in families)
    neutral = root.require("neutral")
    neutral.entries(["given", "family"])
    for given in neutral.require("given").texts():
        out.extend((given, family, "they") for family in neutral.require("family").texts())
    return tuple(out)


def _system_names(node: Node) -> tuple[str, ...]:
    names = node.texts()
    if not names or not all(name.lstrip("!?") for name in names):
        node.fail("should be a list of names, each maybe marked with a leading ! or ?")
    return names


def _relation(node: Node, pronouns: Mapping[str, Pronoun]) -> tuple[str, str, str, bool]:
    node.entries(["name", "pronoun", "group", "distinct"])
    pronoun_node = node.get("pronoun")
    pronoun = pronoun_node.text() if pronoun_node is not None else ANY_PRONOUN
    if pronoun_node is not None and pronoun not in pronouns:
        pronoun_node.fail(f"should be one of {sorted(pronouns)}, or left out for any")
    distinct = node.get("distinct")
    return (
        node.require("name").text(),
        pronoun,
        node.require("group").text(),
        distinct.flag() if distinct is not None else False,
    )


def people() -> tuple[tuple[str, str, str], ...]:
    """Every named person as (given name, family name, pronoun)."""
    return _subjects().people


def subject_pools() -> tuple[str, ...]:
    """The subject pools: ``"person"`` and the pools of systems."""
    return ("person", *_subjects().systems)


def first_person() -> Subject:
    """The speaker, "I"."""
    return Subject(key="i", nom="I", pron="i", kind="first")


def named_person(rng: random.Random) -> Subject:
    """A person by full or given name."""
    given, family, pron = rng.choice(_subjects().people)
    if pron != "they" and rng.random() < 0.06:
        pron = "they"
    full = f"{given} {family}"
    nom = full if rng.random() < 0.6 else given
    return Subject(
        key=f"name:{given}",
        nom=nom,
        pron=pron,
        kind="name",
        given=given,
        short=given if nom == full else "",
    )


def relation(rng: random.Random, *, no_partner: bool = False) -> Subject:
    """A relation of the speaker ("my sister"), maybe not their partner."""
    relations = _subjects().relations
    while True:
        name, pron, group, distinct = rng.choice(relations)
        if not (no_partner and group == "partner"):
            break
    if pron == ANY_PRONOUN:
        pron = rng.choice(_ANY_PRONOUNS)
    return Subject(
        key=f"rel:{group}:{name}",
        nom=name,
        pron=pron,
        kind="relation",
        group=group,
        distinct=distinct,
    )


def person(rng: random.Random, *, no_partner: bool = False) -> Subject:
    """The speaker, a named person or a relation."""
    roll = rng.random()
    if roll < 0.36:
        return first_person()
    if roll < 0.74:
        return named_person(rng)
    return relation(rng, no_partner=no_partner)


def distinct_people(a: Subject, b: Subject) -> bool:
    """Whether a careful reader would take ``a`` and ``b`` for two different people."""
    if a.key == b.key:
        return False
    if "first" in (a.kind, b.kind):
        return True
    if a.kind == b.kind == "name":
        return a.given != b.given
    if a.kind == b.kind == "relation":
        return a.distinct and b.distinct and a.group != b.group
    return False


def thing(pool: str, rng: random.Random) -> Subject:
    """A system of ``pool`` ("the billing service")."""
    data = _subjects()
    raw = rng.choice(data.systems[pool])
    name = raw.lstrip("!?")
    key = f"{pool}:{data.aliases.get(name, name)}"
    return Subject(
        key=key, nom=name, pron="it", kind="thing", nocap=raw[0] == "!", distinct=raw[0] != "?"
    )


def subject(pool: str, rng: random.Random, *, no_partner: bool = False) -> Subject:
    """A random subject from ``pool``."""
    if pool == "person":
        return person(rng, no_partner=no_partner)
    return thing(pool, rng)


def other_subject(
    pool: str, first: Subject, rng: random.Random, *, no_partner: bool = False
) -> Subject | None:
    """A subject of ``pool`` that is clearly not ``first``, or None after a few tries."""
    for _ in range(12):
        candidate = subject(pool, rng, no_partner=no_partner)
        if pool == "person":
            if distinct_people(first, candidate):
                return candidate
        elif candidate.key != first.key and candidate.distinct and first.distinct:
            return candidate
    return None
