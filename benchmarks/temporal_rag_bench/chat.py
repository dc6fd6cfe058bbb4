"""The chat track: several users' first-person chat messages in one store, seeded and
deterministic, generated from the tables in ``data/chat/`` (:mod:`chat_data`; no LoCoMo text).

Each speaker (a user id such as ``user-03``, in ``Chunk.speaker`` and ``metadata["user_id"]``)
writes, in time order and as "I" (never their own name):

- **single-valued attributes** (residence, employer, manager, role, phone, email, partner,
  project) changed N times (N from ``changes``, e.g. 1, 3, 10 stale versions before the current
  one). Each change is phrased as a plain statement of the new value (act ``plain``: "I live in
  Lisbon."), as a change (``change``: "Just moved to Lisbon!") or with the old value named as
  gone (``replace``: "Tom left, Priya is my manager now."); any version may be **restated**
  later (``restate``, not a change);
- **multi-valued attributes** (allergies, languages, pets, hobbies): a first value (``initial``)
  then additions (``add``: "I'm also allergic to shellfish.") that retire nothing;
- **static facts** (birthplace, first language, birth year; ``static``);
- **small talk** (``talk``, kind DISTRACTOR) naming places, companies, other people and other
  speakers ("My sister just moved to Oslo.") to fool naive subject rules. Small talk carries
  the speaker as entity and the family ``small_talk``, so it never scores as a hit or a leak.

Values are shared across speakers on purpose: for each single-valued family the second speaker
holding it ends on the first one's current value and the third starts from it (two users living
in Berlin; cross-speaker supersession shows as damage). Dates: every chunk's ``timestamp`` is in
its speaker's UTC offset and ``metadata["valid_from"]`` is the same instant as an ISO string with
that offset (what adapters receive); chunks are in time order.

Questions, per (speaker, attribute): CURRENT (gold the last value, stale every earlier one;
multi-valued: gold every value, no stale), AS_OF (one per single-valued chain, ``valid_at``
inside an earlier version), STATIC. Every question is asked as a chat app asks it: in the
speaker's own memory (``Question.speaker``; methods filter by ``user_id``) and in their words
(``Question.first_person``, "Where do I live now?", which ``Question.asked`` returns);
``Question.text`` is the same question in the third person ("Where does Ana live now?"), for
the answer model, which reads the retrieved messages with their speaker's name. Cells:
``current:single:N=<n>``, ``current:multi:N=<earlier values>``, ``as_of:single:N=<n>``,
``static``. Phrasings come from one split (``test`` by default: the
benchmark's; ``train``/``dev`` for a training pipeline). Pure: standard library only.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

from shared_core.errors import InvalidInputError
from shared_core.facts import Cardinality
from temporal_rag_bench.chat_data import (
    MULTI,
    SPLITS,
    ChatFamily,
    ChatTables,
    Phrasing,
    load_tables,
)
from temporal_rag_bench.model import (
    SPEAKER_FIELD,
    Chunk,
    ChunkKind,
    Dataset,
    Question,
    QuestionKind,
    Track,
    normalize_answer,
)

START = datetime(2021, 1, 1, tzinfo=UTC)
SLOT = timedelta(days=30)  # a chain's versions start in distinct 30-day slots
SLOTS = 40
END = START + SLOT * (SLOTS + 1)
NOW = END + timedelta(days=10)
SMALL_TALK = "small_talk"
CHANGE_ACTS = ("plain", "change", "replace")  # the acts that change a single value
ACTS = ("initial", *CHANGE_ACTS, "restate", "add", "static", "talk")


@dataclass(frozen=True, slots=True)
class ChatSize:
    """How much to generate: speakers; the N (stale versions) of the single-valued chains,
    cycled over every (speaker, family); families per speaker of each kind; small talk
    messages per speaker."""

    speakers: int = 8
    changes: tuple[int, ...] = (1, 3, 10)
    singles: int = 4
    multis: int = 2
    statics: int = 2
    distractors: int = 8


SIZES = {
    "tiny": ChatSize(speakers=3, changes=(1, 3), singles=2, multis=1, statics=1, distractors=3),
    "quick": ChatSize(),
    "full": ChatSize(speakers=12, singles=8, multis=4, statics=3, distractors=20),
}


@dataclass(frozen=True, slots=True)
class _Speaker:
    user_id: str
    name: str
    zone: timezone


@dataclass(slots=True)
class _Message:
    text: str
    when: datetime
    kind: ChunkKind
    speaker: _Speaker
    act: str
    phrasing: str
    family: str = SMALL_TALK
    value: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _zone(offset: str) -> timezone:
    sign = -1 if offset.startswith("-") else 1
    hours, minutes = offset[1:].split(":")
    return timezone(sign * timedelta(hours=int(hours), minutes=int(minutes)))


def _moment(rng: random.Random, start: datetime, end: datetime) -> datetime:
    """A whole second strictly inside (start, end)."""
    span = int((end - start).total_seconds())
    return start + timedelta(seconds=rng.randrange(1, max(span, 2)))


def _date_text(when: datetime) -> str:
    return f"{when:%B} {when.day}, {when.year}"


def _lower_first(body: str) -> str:
    """Lower-case a capitalised first word after a framing ("Got" -> "got"), never "I",
    acronyms or inner capitals ("HR", "WhatsApp")."""
    word = body.split(" ", 1)[0]
    lower = len(word) > 1 and word[0].isupper() and word[1:].islower()
    if lower and word[1:].replace("'", "").isalpha() and not word.startswith("I'"):
        return body[0].lower() + body[1:]
    return body


class _Writer:
    """Draws phrasings (cycling a shuffled pool per speaker, family and act) and framings."""

    def __init__(self, rng: random.Random, tables: ChatTables, split: str) -> None:
        self.rng, self.tables, self.split = rng, tables, split
        self._cycles: dict[tuple[str, str, str], list[Phrasing]] = {}

    def pick(self, who: _Speaker, family: str, pool: Sequence[Phrasing], act: str) -> Phrasing:
        key = (who.user_id, family, act)
        cycle = self._cycles.get(key)
        if not cycle:
            cycle = self._cycles[key] = self.rng.sample(list(pool), len(pool))
        return cycle.pop()

    def frame(self, body: str, fixed_start: bool) -> str:
        prefix = self.rng.choice(self.tables.prefixes)
        suffix = self.rng.choice(self.tables.suffixes)
        if prefix and not fixed_start:
            body = _lower_first(body)
        text = prefix + body + suffix
        return text[0].upper() + text[1:]

    def say(
        self, who: _Speaker, family: ChatFamily, act: str, value: str, old: str | None = None
    ) -> tuple[str, str]:
        """(text, phrasing id) for ``act`` on ``value`` ("plain"/"restate"/"initial" and
        "static" use the family's ``state`` phrasings)."""
        pool_act = {"change": "change", "replace": "replace", "add": "add"}.get(act, "state")
        chosen = self.pick(who, family.relation, family.pool(pool_act, self.split), pool_act)
        body = chosen.text.format(value=value, old=old)
        return self.frame(body, chosen.text.startswith("{")), chosen.id


class _Builder:
    def __init__(self, rng: random.Random, tables: ChatTables, split: str, size: ChatSize) -> None:
        self.rng, self.tables, self.size = rng, tables, size
        self.writer = _Writer(rng, tables, split)
        self.messages: list[_Message] = []
        self.questions: list[Question] = []
        self.holders: Counter[str] = Counter()  # single family -> speakers holding it so far
        self.shared: dict[str, str] = {}  # single family -> the first holder's current value
        self.chains = 0

    def question(self, who: _Speaker, family: ChatFamily, kind: QuestionKind, **kw: Any) -> None:
        key = kw.pop("key")
        when = kw.get("valid_at")
        date = {"date": _date_text(when)} if when else {}
        self.questions.append(
            Question(
                id=f"chat-q{len(self.questions):04d}",
                text=family.questions[key].format(name=who.name, **date),
                first_person=family.questions[f"{key}_first_person"].format(**date),
                kind=kind,
                entity=who.user_id,
                family=family.relation,
                speaker=who.user_id,
                **kw,
            )
        )

    def state(
        self, who: _Speaker, family: ChatFamily, act: str, value: str, when: datetime, **kw: Any
    ) -> None:
        text, phrasing = self.writer.say(who, family, act, value, kw.pop("old", None))
        kind = ChunkKind.STATIC if act == "static" else ChunkKind.STATE
        self.messages.append(
            _Message(text, when, kind, who, act, phrasing, family.relation, value, kw)
        )

    def _values(self, family: ChatFamily, n: int) -> list[str]:
        """n + 1 distinct values; the family's 2nd holder ends on the 1st's current value, its
        3rd starts from it."""
        holder = self.holders[family.relation]
        self.holders[family.relation] += 1
        shared = self.shared.get(family.relation)
        if shared is None or holder > 2:
            values = self.rng.sample(family.values, n + 1)
            self.shared.setdefault(family.relation, values[-1])
            return values
        rest = self.rng.sample([v for v in family.values if v != shared], n)
        return [*rest, shared] if holder == 1 else [shared, *rest]

    def single(self, who: _Speaker, family: ChatFamily, n: int) -> None:
        values = self._values(family, n)
        slots = sorted(self.rng.sample(range(SLOTS), n + 1))
        starts = [
            START + SLOT * s + timedelta(seconds=self.rng.randrange(10 * 86400)) for s in slots
        ]
        ends = [*starts[1:], END]
        chain = f"chat-chain{self.chains:04d}"
        self.chains += 1
        counts = []
        for version, value in enumerate(values):
            act = "initial" if version == 0 else self.rng.choice(CHANGE_ACTS)
            meta = {"chain": chain, "version": version}
            old = values[version - 1] if version else None
            self.state(who, family, act, value, starts[version], old=old, **meta)
            repeats = self.rng.choice((0, 0, 1, 1, 2))
            for _ in range(repeats):
                when = _moment(self.rng, starts[version], ends[version])
                self.state(who, family, "restate", value, when, **meta)
            counts.append(1 + repeats)
        self.question(
            who, family, QuestionKind.CURRENT, key="current",
            gold=(values[-1],), stale=tuple(values[:-1]), ratio=(sum(counts[:-1]), counts[-1]),
            changes=n, cell=f"current:single:N={n}",
        )  # fmt: skip
        version = self.rng.randrange(n)
        day = timedelta(days=1)
        when = _moment(self.rng, starts[version] + day, ends[version] - day)
        self.question(
            who, family, QuestionKind.AS_OF, key="as_of",
            gold=(values[version],), stale=tuple(v for v in values if v != values[version]),
            valid_at=when, changes=n, cell=f"as_of:single:N={n}",
        )  # fmt: skip

    def multi(self, who: _Speaker, family: ChatFamily, avoid: set[str]) -> None:
        options = [v for v in family.values if normalize_answer(v) not in avoid]
        values = self.rng.sample(options, self.rng.randint(2, 4))
        starts = sorted(
            START + SLOT * s + timedelta(seconds=self.rng.randrange(10 * 86400))
            for s in self.rng.sample(range(SLOTS), len(values))
        )
        for index, (value, start) in enumerate(zip(values, starts, strict=True)):
            self.state(who, family, "add" if index else "initial", value, start, version=index)
            if self.rng.random() < 0.3:
                self.state(who, family, "restate", value, _moment(self.rng, start, END))
        self.question(
            who, family, QuestionKind.CURRENT, key="current", gold=tuple(values),
            changes=len(values) - 1, cell=f"current:multi:N={len(values) - 1}",
        )  # fmt: skip

    def static(self, who: _Speaker, family: ChatFamily) -> str:
        value = self.rng.choice(family.values)
        for _ in range(self.rng.randint(1, 2)):
            self.state(who, family, "static", value, _moment(self.rng, START, END))
        self.question(who, family, QuestionKind.STATIC, key="current", gold=(value,), cell="static")
        return value

    def small_talk(self, who: _Speaker, speakers: Sequence[_Speaker]) -> None:
        tables = self.tables
        places = tables.places + tables.family("residence").values
        others = [s.name for s in speakers if s is not who] or list(tables.people)
        pool = tuple(p for p in tables.small_talk if p.split == self.writer.split)
        for _ in range(self.size.distractors):
            chosen = self.writer.pick(who, SMALL_TALK, pool, "talk")
            body = chosen.text.format(
                place=self.rng.choice(places),
                person=self.rng.choice(tables.people),
                speaker=self.rng.choice(others),
                company=self.rng.choice(tables.family("employer").values),
            )
            text = self.writer.frame(body, chosen.text.startswith("{"))
            when = _moment(self.rng, START, END)
            self.messages.append(_Message(text, when, ChunkKind.DISTRACTOR, who, "talk", chosen.id))


def _speakers(rng: random.Random, tables: ChatTables, count: int) -> list[_Speaker]:
    names = rng.sample(tables.speakers, count)
    return [
        _Speaker(f"user-{i + 1:02d}", name, _zone(rng.choice(tables.utc_offsets)))
        for i, name in enumerate(names)
    ]


def _chunk(message: _Message, index: int, keyed: bool) -> Chunk:
    who = message.speaker
    when = message.when.astimezone(who.zone)
    meta = {
        SPEAKER_FIELD: who.user_id,
        "speaker_name": who.name,
        "valid_from": when.isoformat(),
        "act": message.act,
        "phrasing": message.phrasing,
        **message.extra,
    }
    facts = keyed and message.value is not None
    return Chunk(
        id=f"chat-{index:05d}",
        text=message.text,
        timestamp=when,
        kind=message.kind,
        entity=who.user_id,
        family=message.family,
        value=message.value,
        subject=who.user_id if facts else None,
        relation=message.family if facts else None,
        object=message.value if facts else None,
        recorded_order=index,
        metadata=MappingProxyType(meta),
        speaker=who.user_id,
    )


def _check(tables: ChatTables, size: ChatSize, split: str) -> None:
    if split not in SPLITS:
        raise InvalidInputError("split", f"{split!r} is not a split", f"use one of {SPLITS}")
    limits = {
        "speakers": len(tables.speakers),
        "singles": len(tables.singles),
        "multis": len(tables.multis),
        "statics": len(tables.statics),
    }
    for name, most in limits.items():
        value = getattr(size, name)
        if value < (1 if name == "speakers" else 0):
            raise InvalidInputError(name, f"{value} is too small", "pass a positive count")
        if value > most:
            raise InvalidInputError(
                name, f"{value} is more than the tables hold", f"at most {most}"
            )
    most = min([SLOTS - 1, *(len(f.values) - 2 for f in tables.singles)])
    if not size.changes or any(n < 1 or n > most for n in size.changes):
        raise InvalidInputError(
            "changes", f"{size.changes} is not a set of counts in 1..{most}", "pass e.g. (1, 3, 10)"
        )
    if size.distractors < 0:
        raise InvalidInputError("distractors", f"{size.distractors} is negative", "pass 0 or more")


def generate_chat(
    *, seed: int = 0, size: ChatSize | None = None, split: str = "test", keyed: bool = False
) -> Dataset:
    """The chat track for a seed (identical for identical arguments); ``split``: the
    phrasings' split; ``keyed``: STATE/STATIC chunks carry subject (user id), relation and
    object, as a structured extractor would give them."""
    tables, size = load_tables(), size or ChatSize()
    _check(tables, size, split)
    rng = random.Random(seed)
    builder = _Builder(rng, tables, split, size)
    speakers = _speakers(rng, tables, size.speakers)
    for i, who in enumerate(speakers):
        statics = [builder.static(who, f) for f in rng.sample(tables.statics, size.statics)]
        avoid = {normalize_answer(v) for v in statics}
        for j, family in enumerate(rng.sample(tables.singles, size.singles)):
            builder.single(who, family, size.changes[(i * size.singles + j) % len(size.changes)])
        for family in rng.sample(tables.multis, size.multis):
            builder.multi(who, family, avoid)
        builder.small_talk(who, speakers)
    order = sorted(range(len(builder.messages)), key=lambda k: (builder.messages[k].when, k))
    chunks = tuple(_chunk(builder.messages[k], n, keyed) for n, k in enumerate(order))
    cardinalities = {
        f.relation: Cardinality.MANY if f.kind == MULTI else Cardinality.ONE
        for f in tables.families
    }
    return Dataset(
        name="chat-keyed" if keyed else "chat",
        track=Track.KEYED if keyed else Track.PROSE,
        chunks=chunks,
        questions=tuple(builder.questions),
        now=NOW,
        cardinalities=MappingProxyType(cardinalities),
        description=(
            f"chat track, seed {seed}, {size.speakers} speakers, N {size.changes}, "
            f"{split} phrasings"
        ),
    )


def chat_statistics(dataset: Dataset) -> dict[str, Any]:
    """Counts: chunks per kind and per act, changes (plain + change + replace),
    restatements, multi-valued additions, distractors, questions per kind and per cell,
    speakers, and the (family, value) pairs that more than one speaker ever held."""
    acts = Counter(str(c.metadata.get("act")) for c in dataset.chunks)
    holders: dict[tuple[str, str], set[str]] = {}
    for chunk in dataset.chunks:
        if chunk.value is not None and chunk.family is not None and chunk.speaker is not None:
            key = (chunk.family, normalize_answer(chunk.value))
            holders.setdefault(key, set()).add(chunk.speaker)
    return {
        "speakers": len({c.speaker for c in dataset.chunks}),
        "chunks": len(dataset.chunks),
        "chunks_per_kind": dict(Counter(c.kind.value for c in dataset.chunks)),
        "chunks_per_act": {act: acts[act] for act in ACTS if acts[act]},
        "changes": sum(acts[a] for a in CHANGE_ACTS),
        "restatements": acts["restate"],
        "additions": acts["add"],
        "distractors": acts["talk"],
        "questions": len(dataset.questions),
        "questions_per_kind": dict(Counter(q.kind.value for q in dataset.questions)),
        "questions_per_cell": dict(
            sorted(Counter(q.cell for q in dataset.questions).items(), key=_cell_order)
        ),
        "shared_values": sum(len(s) > 1 for s in holders.values()),
    }


def _cell_order(item: tuple[str, int]) -> tuple[str, int]:
    cell = item[0]
    match = re.search(r"N=(\d+)$", cell)
    return (cell[: match.start()] if match else cell, int(match.group(1)) if match else -1)
