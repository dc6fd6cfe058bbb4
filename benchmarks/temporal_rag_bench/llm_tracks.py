"""The tracks of ``make bench-llm``: prose to extract keys from, each with its gold keys.

Every track is a PROSE :class:`Dataset` (what a user stores) whose STATE and STATIC chunks also
know the key a perfect extractor would give them (:func:`gold_key`): the "keyed by hand" method
writes those keys, the perfect fake LLM answers with them.

- ``synthetic``: a sample of the synthetic prose track (a few entities, N = 1, 3, 10 stale
  statements before the current value, a static fact each, a little unrelated text).
- ``situatedqa``: SituatedQA dev written as prose: each changing fact's previous answer stated
  N times in different wordings, then the current answer once, dated along its timeline; and
  facts that never changed.
- ``chat``: the chat track (first person, several speakers in one store), small.

Pure: standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType

from shared_core.facts import Cardinality, ObjectValue
from temporal_rag_bench.chat import ChatSize, generate_chat
from temporal_rag_bench.datasets import (
    ANSWER,
    SITUATEDQA_RAW,
    _answers,
    _jsonl,
    _question_text,
    _Timeline,
    _timeline,
    require_file,
)
from temporal_rag_bench.generator import generate
from temporal_rag_bench.model import Chunk, ChunkKind, Dataset, Question, QuestionKind, Track

GoldKey = tuple[str, str, ObjectValue]
"""(subject, relation, object) of a statement, as a perfect extractor gives it."""

STALE_WORDINGS = (
    "{question}? {answer}.",
    "As far as I know, the answer to '{question}' is {answer}.",
    "{answer} is the answer to the question '{question}'.",
    "Someone asked: {question}? It is {answer}.",
    "Note for later: {question}, {answer}.",
)
"""How SituatedQA's previous answer is restated (cycled); the current one uses the first."""
_STATIC = datetime(2018, 1, 1, tzinfo=UTC)  # Natural Questions' era, for undated facts


@dataclass(frozen=True, slots=True)
class TrackSize:
    """How much of each track: SituatedQA changing facts per N (stale statements) and static
    facts; the synthetic sample's N (none: no synthetic track) and unrelated texts; the chat size
    (None: no chat)."""

    situatedqa: Mapping[int, int]
    situatedqa_static: int
    synthetic_ratios: tuple[int, ...]
    synthetic_distractors: int
    chat: ChatSize | None


def gold_key(chunk: Chunk) -> GoldKey | None:
    """The key a perfect extractor gives ``chunk``: its entity (the speaker on the chat track),
    its attribute family and its value; None for unrelated text."""
    if chunk.kind is ChunkKind.DISTRACTOR or chunk.value is None:
        return None
    subject = chunk.speaker or chunk.entity
    if subject is None or chunk.family is None:
        return None
    return (subject, chunk.family, chunk.value)


def synthetic_sample(*, seed: int, ratios: tuple[int, ...], distractors: int) -> Dataset:
    """A sample of the synthetic prose track: as many entities as ``ratios`` has N, one chain
    per N, one static fact per entity, its MANY relations, a few unrelated texts; no
    flip-flops or late facts (the full bench measures those)."""
    sample = generate(
        track=Track.PROSE,
        seed=seed,
        entities=len(ratios),
        ratios=ratios,
        per_ratio=1,
        flip_flops=0,
        late=0,
        as_of=len(ratios),
        distractors=distractors,
        statics=1,
    )
    return replace(
        sample,
        name="synthetic-prose",
        description=f"synthetic prose track, seed {seed}, one chain per N in {ratios}",
    )


def situatedqa_prose(
    data_dir: Path | str, *, per_n: Mapping[int, int], statics: int, seed: int = 0
) -> Dataset:
    """SituatedQA dev as prose: for ``per_n[N]`` changing facts, the previous answer stated N
    times (spread between its start and the change), then the current answer once; and
    ``statics`` facts that never changed. Items are taken in file order."""
    raw = require_file(data_dir, SITUATEDQA_RAW)
    wanted = [n for n, count in sorted(per_n.items()) for _ in range(count)]
    chunks: list[Chunk] = []
    questions: list[Question] = []
    static_count = 0
    rng = random.Random(seed)
    for record in _jsonl(raw):
        if record.get("timelines"):
            if not wanted:
                continue
            timeline = _timeline(record)
            if timeline is None:
                continue
            n = wanted.pop(0)
            questions.append(_changing(timeline, n, chunks, rng))
        elif static_count < statics:
            answers = _answers(record.get("cur_answers")) or _answers(record.get("nq_answers"))
            if not answers:
                continue
            static_count += 1
            ident = str(record["id"])
            question = _question_text(record["question"]).rstrip("?")
            chunks.append(
                _chunk(
                    f"sqa-{ident}-static",
                    ident,
                    ChunkKind.STATIC,
                    _STATIC,
                    STALE_WORDINGS[0].format(question=question, answer=answers[0]),
                    answers[0],
                )
            )
            questions.append(
                Question(
                    id=f"sqa-{ident}-static",
                    text=question + "?",
                    kind=QuestionKind.STATIC,
                    gold=answers,
                    entity=f"situatedqa:{ident}",
                    family=ANSWER,
                    cell="static",
                )
            )
        if not wanted and static_count >= statics:
            break
    ordered = sorted(chunks, key=lambda c: c.timestamp)
    chunks_out = tuple(replace(c, recorded_order=i) for i, c in enumerate(ordered))
    latest = max((c.timestamp for c in chunks_out), default=_STATIC)
    return Dataset(
        name="situatedqa-prose",
        track=Track.PROSE,
        chunks=chunks_out,
        questions=tuple(questions),
        now=latest + timedelta(days=1),
        cardinalities=MappingProxyType({ANSWER: Cardinality.ONE}),
        description=(
            "SituatedQA dev as prose: "
            + ", ".join(f"{count} facts at N={n}" for n, count in sorted(per_n.items()))
            + f", {static_count} static facts"
        ),
    )


def _changing(
    timeline: _Timeline,
    n: int,
    chunks: list[Chunk],
    rng: random.Random,
) -> Question:
    prev, cur, prev_start, cur_start = (
        timeline.prev,
        timeline.cur,
        timeline.prev_start,
        timeline.cur_start,
    )
    ident = timeline.ident
    question = _question_text(timeline.question).rstrip("?")
    step = (cur_start - prev_start) / n
    first = rng.randrange(len(STALE_WORDINGS))
    for i in range(n):
        wording = STALE_WORDINGS[(first + i) % len(STALE_WORDINGS)]
        chunks.append(
            _chunk(
                f"sqa-{ident}-prev-{i}",
                ident,
                ChunkKind.STATE,
                prev_start + step * i,
                wording.format(question=question, answer=prev[0]),
                prev[0],
            )
        )
    chunks.append(
        _chunk(
            f"sqa-{ident}-cur",
            ident,
            ChunkKind.STATE,
            cur_start,
            STALE_WORDINGS[0].format(question=question, answer=cur[0]),
            cur[0],
        )
    )
    return Question(
        id=f"sqa-{ident}-current",
        text=question + "?",
        kind=QuestionKind.CURRENT,
        gold=cur,
        stale=prev,
        entity=f"situatedqa:{ident}",
        family=ANSWER,
        ratio=(n, 1),
        changes=1,
        cell=f"current:N={n}",
    )


def _chunk(ident: str, item: str, kind: ChunkKind, when: datetime, text: str, value: str) -> Chunk:
    return Chunk(
        id=ident,
        text=text,
        timestamp=when,
        kind=kind,
        entity=f"situatedqa:{item}",
        family=ANSWER,
        value=value,
    )


def load_tracks(
    size: TrackSize, *, data_dir: Path | str | None, seed: int = 0
) -> tuple[list[Dataset], list[str]]:
    """The tracks of a size, and a note for each one that cannot be built (data missing)."""
    from shared_core.errors import TemporalRagError

    tracks: list[Dataset] = []
    if size.synthetic_ratios:
        tracks.append(
            synthetic_sample(
                seed=seed, ratios=size.synthetic_ratios, distractors=size.synthetic_distractors
            )
        )
    notes: list[str] = []
    if data_dir is None:
        notes.append("situatedqa-prose not run: no data folder (--data-dir)")
    else:
        try:
            tracks.append(
                situatedqa_prose(
                    data_dir, per_n=size.situatedqa, statics=size.situatedqa_static, seed=seed
                )
            )
        except TemporalRagError as exc:
            notes.append(f"situatedqa-prose not run: {exc}")
    if size.chat is not None:
        tracks.append(generate_chat(seed=seed, size=size.chat))
    return tracks, notes


__all__ = [
    "STALE_WORDINGS",
    "GoldKey",
    "TrackSize",
    "gold_key",
    "load_tracks",
    "situatedqa_prose",
    "synthetic_sample",
]
