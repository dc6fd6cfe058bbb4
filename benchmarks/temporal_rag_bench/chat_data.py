"""The chat track's tables, read from the JSON files in ``data/chat/`` (packaged with the
benchmark distribution): attribute families with their values, question templates and
phrasings, small talk, speaker names, UTC offsets and chat framings.

Every phrasing belongs to one split (``train``, ``dev`` or ``test``) and has an id
``<relation>.<act>.<split>.<index>``; a training pipeline trains on one split and the benchmark
evaluates on another (the dataset uses ``test``). Acts: ``state`` (a plain statement of a value,
used for first statements, plain-restatement changes and restatements), ``change`` (a change
phrased as one, e.g. "Just moved to {value}!"), ``replace`` (the old value named as gone:
"{old} left, {value} is my manager now."), ``add`` (a multi-valued addition: "I'm also allergic
to {value}."). Pure: standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from shared_core.errors import InvalidInputError

SPLITS = ("train", "dev", "test")
SINGLE, MULTI, STATIC = "single", "multi", "static"
FILES = ("single.json", "multi.json", "static.json", "small_talk.json", "people.json")


@dataclass(frozen=True, slots=True)
class Phrasing:
    id: str  # "<relation>.<act>.<split>.<index>"
    text: str  # uses {value} (and {old} for "replace"; small talk: {place}, {person}, ...)
    split: str


@dataclass(frozen=True, slots=True)
class ChatFamily:
    """One attribute: single-valued (changes), multi-valued (accumulates) or static."""

    relation: str
    kind: str  # SINGLE, MULTI or STATIC
    questions: Mapping[str, str]  # current[_first_person], as_of[_first_person] (single only)
    values: tuple[str, ...]
    phrasings: Mapping[str, tuple[Phrasing, ...]]  # act -> every split's phrasings

    def pool(self, act: str, split: str) -> tuple[Phrasing, ...]:
        return tuple(p for p in self.phrasings[act] if p.split == split)


@dataclass(frozen=True, slots=True)
class ChatTables:
    singles: tuple[ChatFamily, ...]
    multis: tuple[ChatFamily, ...]
    statics: tuple[ChatFamily, ...]
    small_talk: tuple[Phrasing, ...]
    places: tuple[str, ...]  # small talk's places, besides the residence values
    people: tuple[str, ...]  # small talk's people, besides the other speakers
    speakers: tuple[str, ...]  # speaker first names (never a value, never in a phrasing)
    utc_offsets: tuple[str, ...]  # "+05:30"
    prefixes: tuple[str, ...]  # chat framings shared by every split ("Btw, ", " lol")
    suffixes: tuple[str, ...]

    @property
    def families(self) -> tuple[ChatFamily, ...]:
        return self.singles + self.multis + self.statics

    def family(self, relation: str) -> ChatFamily:
        for family in self.families:
            if family.relation == relation:
                return family
        raise KeyError(relation)

    def phrasings(self) -> tuple[Phrasing, ...]:
        """Every phrasing of every split: the families' and small talk's."""
        found = [p for f in self.families for pool in f.phrasings.values() for p in pool]
        return (*found, *self.small_talk)


def _read(name: str) -> Any:
    return json.loads(
        resources.files("temporal_rag_bench").joinpath("data", "chat", name).read_text("utf-8")
    )


def _split_pool(relation: str, act: str, by_split: Mapping[str, list[str]]) -> tuple[Phrasing, ...]:
    if set(by_split) != set(SPLITS):
        raise InvalidInputError(
            "data/chat", f"{relation}.{act} has splits {sorted(by_split)}", f"use {SPLITS}"
        )
    return tuple(
        Phrasing(f"{relation}.{act}.{split}.{i:02d}", text, split)
        for split in SPLITS
        for i, text in enumerate(by_split[split])
    )


def _family(raw: Mapping[str, Any]) -> ChatFamily:
    relation = str(raw["relation"])
    return ChatFamily(
        relation=relation,
        kind=str(raw["kind"]),
        questions=dict(raw["questions"]),
        values=tuple(raw["values"]),
        phrasings={
            act: _split_pool(relation, act, pools) for act, pools in raw["phrasings"].items()
        },
    )


@cache
def load_tables() -> ChatTables:
    """The packaged tables (read once)."""
    singles, multis, statics, talk, people = (_read(name) for name in FILES)
    return ChatTables(
        singles=tuple(_family(f) for f in singles["families"]),
        multis=tuple(_family(f) for f in multis["families"]),
        statics=tuple(_family(f) for f in statics["families"]),
        small_talk=_split_pool(talk["relation"], "talk", talk["phrasings"]),
        places=tuple(talk["places"]),
        people=tuple(talk["people"]),
        speakers=tuple(people["speakers"]),
        utc_offsets=tuple(people["utc_offsets"]),
        prefixes=tuple(people["framings"]["prefixes"]),
        suffixes=tuple(people["framings"]["suffixes"]),
    )
