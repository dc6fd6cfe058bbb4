"""The synthetic temporal-mutation benchmark: seeded, deterministic, generated at run time.

People and projects carry attributes (:mod:`generator_families`). A *chain* is one attribute of
one entity changing 1 to 4 times; its stale values are stated N times in varied wording and its
current value M times (the N:M accumulation ratio). Besides the ratio chains: flip-flops
(A -> B -> A), late-arriving facts (an old statement ingested after the newer ones), as-of
questions about the past, static facts, MANY relations whose values accumulate, and distractors.

Both tracks hold the same texts, timestamps and questions for a seed; the keyed track adds
subject/relation/object. Texts are marker-free: every version of a chain draws from one pool of
phrasings and framings, so old and new differ only in the value. Pure: standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType

from shared_core.errors import InvalidInputError
from temporal_rag_bench import generator_families as tables
from temporal_rag_bench.generator_build import (
    END,
    MAX_CHANGES,
    NOW,
    SLOT,
    SLOTS,
    START,
    Builder,
    Draft,
    Entity,
    Phraser,
    as_of_text,
    moment,
    sentence,
    split_counts,
)
from temporal_rag_bench.generator_families import Family, Role, Subject
from temporal_rag_bench.model import Chunk, ChunkKind, Dataset, QuestionKind, Track

DEFAULT_RATIOS: tuple[int, ...] = (1, 3, 10, 30, 100)


@dataclass(frozen=True, slots=True)
class _Plan:
    """How many of each thing to generate."""

    ratios: tuple[int, ...]
    per_ratio: int
    flip_flops: int
    late: int
    as_of: int
    distractors: int
    statics: int  # static facts per entity


def _pairs(rng: random.Random, left: Sequence[str], right: Sequence[str], count: int) -> list[str]:
    """``count`` distinct "left right" names, spreading each part as evenly as possible (the
    first ``len(left)`` names share no part)."""
    left, right = rng.sample(left, len(left)), rng.sample(right, len(right))
    names = []
    for i in range(count):
        a, r = i % len(left), i // len(left)
        names.append(f"{left[a]} {right[(a + r) % len(right)]}")
    return names


def _entities(rng: random.Random, count: int) -> list[Entity]:
    """Two thirds people (first and last name), one third projects (codename and kind)."""
    projects = count // 3
    people = count - projects
    most = 3 * len(tables.CODENAMES) * len(tables.PROJECT_KINDS) + 2  # projects run out first
    if count > most or people > len(tables.FIRST_NAMES) * len(tables.LAST_NAMES):
        raise InvalidInputError(
            "entities", f"{count} is more than the name tables allow", f"use at most {most}"
        )
    found = [
        Entity(name, name, Subject.PERSON)
        for name in _pairs(rng, tables.FIRST_NAMES, tables.LAST_NAMES, people)
    ]
    found += [
        Entity(name, f"the {name}", Subject.PROJECT)
        for name in _pairs(rng, tables.CODENAMES, tables.PROJECT_KINDS, projects)
    ]
    rng.shuffle(found)
    return found


def _slots(
    rng: random.Random, entities: Sequence[Entity], needed: int
) -> list[tuple[Entity, Family]]:
    """Distinct (entity, changing family) pairs, one per chain."""
    slots = [
        (entity, family)
        for entity in entities
        for family in tables.families(Role.CHANGING, entity.subject)
    ]
    if needed > len(slots):
        raise InvalidInputError(
            "entities",
            f"{len(entities)} entities hold {len(slots)} attribute chains, {needed} are needed",
            "raise entities or lower the chain counts",
        )
    rng.shuffle(slots)
    return slots[:needed]


def _ratio_chains(b: Builder, slots: list[tuple[Entity, Family]], plan: _Plan) -> None:
    """N stale statements (over 1..min(4, N) changes) against M current ones."""
    for n in plan.ratios:
        for _ in range(plan.per_ratio):
            entity, family = slots.pop()
            changes = b.rng.randint(1, min(MAX_CHANGES, n))
            m = 2 if b.rng.random() < 0.25 else 1
            chain = b.chain(entity, family, changes, flip=False)
            phraser = Phraser(b.rng, family, entity.mention)
            for version, count in enumerate(split_counts(n, changes)):
                b.state(chain, phraser, version, count)
            b.state(chain, phraser, changes, m)
            b.current_question(chain, (n, m), f"current:N={n}")


def _flip_flop_chains(b: Builder, slots: list[tuple[Entity, Family]], count: int) -> None:
    """A -> B -> A and the like: 2..4 changes, a value returns."""
    for _ in range(count):
        entity, family = slots.pop()
        chain = b.chain(entity, family, b.rng.randint(2, MAX_CHANGES), flip=True)
        phraser = Phraser(b.rng, family, entity.mention)
        stale = 0
        for version in range(len(chain.values) - 1):
            repeats = b.rng.randint(1, 2)
            b.state(chain, phraser, version, repeats)
            stale += repeats
        b.state(chain, phraser, len(chain.values) - 1, 1)
        b.current_question(chain, (stale, 1), "flip_flop")


def _late_chains(b: Builder, slots: list[tuple[Entity, Family]], count: int) -> None:
    """1..2 changes, then 1..2 statements of a stale version arrive after everything."""
    for _ in range(count):
        entity, family = slots.pop()
        chain = b.chain(entity, family, b.rng.randint(1, 2), flip=False)
        phraser = Phraser(b.rng, family, entity.mention)
        stale = 0
        for version in range(len(chain.values) - 1):
            repeats = b.rng.randint(1, 2)
            b.state(chain, phraser, version, repeats)
            stale += repeats
        b.state(chain, phraser, len(chain.values) - 1, 1)
        for _ in range(b.rng.randint(1, 2)):
            b.late(chain, phraser, b.rng.randrange(len(chain.values) - 1))
            stale += 1
        b.current_question(chain, (stale, 1), "late")


def _as_of_questions(b: Builder, count: int) -> None:
    """What held at a moment inside an earlier version's interval."""
    for chain in b.rng.sample(b.chains, min(count, len(b.chains))):
        version = b.rng.randrange(len(chain.values) - 1)
        day = timedelta(days=1)
        when = moment(b.rng, chain.starts[version] + day, chain.end(version) - day)
        value = chain.values[version]
        question = chain.family.question.format(name=chain.entity.mention)
        b.question(
            as_of_text(question, when),
            QuestionKind.AS_OF,
            (value,),
            stale=chain.others(value),
            entity=chain.entity.key,
            family=chain.family.relation,
            valid_at=when,
            changes=len(chain.values) - 1,
            flip_flop=chain.flip_flop,
            cell="as_of",
        )


def _statics(b: Builder, entities: Sequence[Entity], per_entity: int) -> None:
    """Facts that never change, each stated 1..3 times, each with its question."""
    for entity in entities:
        options = tables.families(Role.STATIC, entity.subject)
        for family in b.rng.sample(options, min(per_entity, len(options))):
            value = b.rng.choice(family.values)
            phraser = Phraser(b.rng, family, entity.mention)
            for _ in range(b.rng.randint(1, 3)):
                when = moment(b.rng, START, END)
                meta = {"static": True}
                b.drafts.append(
                    Draft(
                        phraser.say(value), when, ChunkKind.STATIC, entity, family, value,
                        metadata=meta,
                    )
                )  # fmt: skip
            b.question(
                sentence(family.question.format(name=entity.mention)),
                QuestionKind.STATIC,
                (value,),
                entity=entity.key,
                family=family.relation,
                cell="static",
            )


def _many(b: Builder, entities: Sequence[Entity]) -> None:
    """One MANY relation per entity: 2..4 values accumulate, each stated 1..2 times; the
    question's gold is every value."""
    for entity in entities:
        family = b.rng.choice(tables.families(Role.MANY, entity.subject))
        values = b.rng.sample(family.values, b.rng.randint(2, 4))
        starts = sorted(START + SLOT * s for s in b.rng.sample(range(SLOTS), len(values)))
        phraser = Phraser(b.rng, family, entity.mention)
        for value, start in zip(values, starts, strict=True):
            for i in range(b.rng.randint(1, 2)):
                when = start if i == 0 else moment(b.rng, start, END)
                b.drafts.append(
                    Draft(phraser.say(value), when, ChunkKind.STATE, entity, family, value)
                )
        b.question(
            sentence(family.question.format(name=entity.mention)),
            QuestionKind.CURRENT,
            values,
            entity=entity.key,
            family=family.relation,
            changes=len(values) - 1,
            cell="many",
        )


def _distractors(b: Builder, entities: Sequence[Entity], count: int) -> None:
    people = [e.mention for e in entities if e.subject is Subject.PERSON] or ["Someone"]
    projects = [e.mention for e in entities if e.subject is Subject.PROJECT] or ["the wiki"]
    for _ in range(count):
        template = b.rng.choice(tables.DISTRACTOR_TEMPLATES)
        text = template.format(
            person=b.rng.choice(people),
            person2=b.rng.choice(people),
            project=b.rng.choice(projects),
            topic=b.rng.choice(tables.TOPICS),
            event=b.rng.choice(tables.EVENTS),
            room=b.rng.choice(tables.ROOMS),
        )
        b.drafts.append(Draft(sentence(text), moment(b.rng, START, END), ChunkKind.DISTRACTOR))


def _chunk(draft: Draft, index: int, track: Track) -> Chunk:
    keyed = track is Track.KEYED and draft.family is not None and draft.entity is not None
    return Chunk(
        id=f"syn-{index:06d}",
        text=draft.text,
        timestamp=draft.timestamp,
        kind=draft.kind,
        entity=draft.entity.key if draft.entity else None,
        family=draft.family.relation if draft.family else None,
        value=draft.value,
        subject=draft.entity.key if keyed and draft.entity else None,
        relation=draft.family.relation if keyed and draft.family else None,
        object=draft.value if keyed else None,
        recorded_order=index,
        metadata=MappingProxyType(dict(draft.metadata)),
    )


def _chunks(drafts: Sequence[Draft], track: Track) -> tuple[Chunk, ...]:
    """Ingestion order: by timestamp, then the late arrivals (also by timestamp) after all."""
    order = sorted(range(len(drafts)), key=lambda i: (drafts[i].late, drafts[i].timestamp, i))
    return tuple(_chunk(drafts[i], n, track) for n, i in enumerate(order))


def _check(entities: int, ratios: Sequence[int], counts: dict[str, int | None]) -> None:
    if entities < 1:
        raise InvalidInputError("entities", f"{entities} is not positive", "pass 1 or more")
    if not ratios or any(n < 1 for n in ratios) or len(set(ratios)) != len(ratios):
        raise InvalidInputError(
            "ratios", f"{tuple(ratios)} is not a set of positive counts", "pass e.g. (1, 3, 10)"
        )
    for name, value in counts.items():
        if value is not None and value < 0:
            raise InvalidInputError(name, f"{value} is negative", "pass 0 or more, or None")


def _build(rng: random.Random, entities: int, plan: _Plan) -> Builder:
    people = _entities(rng, entities)
    needed = plan.per_ratio * len(plan.ratios) + plan.flip_flops + plan.late
    slots = _slots(rng, people, needed)
    builder = Builder(rng)
    _ratio_chains(builder, slots, plan)
    _flip_flop_chains(builder, slots, plan.flip_flops)
    _late_chains(builder, slots, plan.late)
    _as_of_questions(builder, plan.as_of)
    _statics(builder, people, plan.statics)
    _many(builder, people)
    _distractors(builder, people, plan.distractors)
    return builder


def generate(
    *,
    track: Track,
    seed: int,
    entities: int,
    ratios: Sequence[int] = DEFAULT_RATIOS,
    per_ratio: int | None = None,
    flip_flops: int | None = None,
    late: int | None = None,
    as_of: int | None = None,
    distractors: int | None = None,
    statics: int = 2,
) -> Dataset:
    """The synthetic dataset for a seed: identical for identical arguments.

    Defaults scale with ``entities`` (a third of them projects, the rest people):
    ``per_ratio`` chains per N:M ratio ``entities // 5``, ``flip_flops`` and ``late`` chains
    ``entities // 2`` each, ``as_of`` questions ``entities``, ``distractors`` ``8 * entities``,
    ``statics`` facts per entity 2, one MANY relation per entity.
    """
    counts = {"per_ratio": per_ratio, "flip_flops": flip_flops, "late": late, "as_of": as_of}
    _check(entities, ratios, {**counts, "distractors": distractors, "statics": statics})
    plan = _Plan(
        ratios=tuple(ratios),
        per_ratio=max(1, entities // 5) if per_ratio is None else per_ratio,
        flip_flops=max(1, entities // 2) if flip_flops is None else flip_flops,
        late=max(1, entities // 2) if late is None else late,
        as_of=entities if as_of is None else as_of,
        distractors=8 * entities if distractors is None else distractors,
        statics=statics,
    )
    builder = _build(random.Random(seed), entities, plan)
    return Dataset(
        name=f"synthetic-{track.value}",
        track=track,
        chunks=_chunks(builder.drafts, track),
        questions=tuple(builder.questions),
        now=NOW,
        cardinalities=MappingProxyType({f.relation: f.cardinality for f in tables.FAMILIES}),
        description=(
            f"synthetic temporal mutations, seed {seed}, {entities} entities, "
            f"N:M ratios {', '.join(map(str, plan.ratios))}"
        ),
    )


@dataclass(frozen=True, slots=True)
class Profile:
    """A named size of the synthetic benchmark."""

    name: str
    seed: int
    entities: int
    ratios: tuple[int, ...] = DEFAULT_RATIOS

    def generate(self, track: Track) -> Dataset:
        return generate(track=track, seed=self.seed, entities=self.entities, ratios=self.ratios)

    def datasets(self) -> tuple[Dataset, Dataset]:
        """The keyed and the prose track (same texts, timestamps and questions)."""
        return self.generate(Track.KEYED), self.generate(Track.PROSE)


def quick_profile(seed: int = 0) -> Profile:
    """About 3,000 chunks and 360 questions per track (minutes on 2 cores with MiniLM)."""
    return Profile("quick", seed, 60)


def full_profile(seed: int = 0) -> Profile:
    """Ten times the quick profile."""
    return Profile("full", seed, 600)


PROFILES = {"quick": quick_profile, "full": full_profile}


def profile(name: str, seed: int = 0) -> Profile:
    """The profile called ``name`` ("quick" or "full")."""
    if name not in PROFILES:
        raise InvalidInputError(
            "profile", f"unknown profile {name!r}", f"use one of {sorted(PROFILES)}"
        )
    return PROFILES[name](seed)
