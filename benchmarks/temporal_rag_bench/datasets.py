"""External datasets read from a data folder holding ``situatedqa/`` and ``locomo/`` as their
repositories publish them (see docs/benchmark.md for the files and where they come from).

- SituatedQA (dev): each time-dependent question's timeline (previous answer -> current answer,
  with start dates) becomes two chunks "Question? Answer." dated at each start; its current
  question has the latest answer as gold and the previous one as stale; its "as of <date>"
  queries become AS_OF questions where the date maps onto the timeline and the dataset's answer
  agrees. Items whose old and new answers overlap after normalisation are skipped. Questions
  that never changed become STATIC chunks and questions.
- LoCoMo: each dialogue turn is a chunk dated at its session; QA items with evidence turn ids
  are STATIC questions scored by evidence id (adversarial items without answers are skipped).

Nothing is copied: files are read where they are. Pure: standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

from shared_core.errors import InvalidInputError
from shared_core.facts import Cardinality
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    Question,
    QuestionKind,
    Track,
    normalize_answer,
)

SITUATEDQA_RAW = Path("situatedqa/raw.temp.dev.jsonl")
SITUATEDQA_QA = Path("situatedqa/qa.temp.dev.jsonl")
LOCOMO = Path("locomo/locomo10.json")
ANSWER = "answer"  # the keyed SituatedQA relation
_STATIC_DATE = datetime(2018, 1, 1, tzinfo=UTC)  # Natural Questions' era, for undated facts


def require_file(data_dir: Path | str, relative: Path) -> Path:
    """``data_dir / relative``, or InvalidInputError naming the folder to pass."""
    path = Path(data_dir) / relative
    if not path.is_file():
        raise InvalidInputError(
            "data_dir",
            f"{path} does not exist",
            f"pass the folder that holds {relative} (see docs/benchmark.md)",
        )
    return path


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def overlap(old: Iterable[str], new: Iterable[str]) -> bool:
    """Whether any old and new answer are equal or one holds the other as whole words, after
    normalisation (scoring could not tell them apart)."""
    olds = [f" {normalize_answer(a)} " for a in old]
    news = [f" {normalize_answer(a)} " for a in new]
    return any(a.strip() == "" or b.strip() == "" or a in b or b in a for a in olds for b in news)


@dataclass(frozen=True, slots=True)
class _Timeline:
    ident: str
    question: str
    prev: tuple[str, ...]
    cur: tuple[str, ...]
    prev_start: datetime
    cur_start: datetime

    def answers_at(self, when: datetime) -> tuple[str, ...] | None:
        if when >= self.cur_start:
            return self.cur
        return self.prev if when >= self.prev_start else None


def _start(value: dict[str, Any] | None) -> datetime | None:
    if not value or not value.get("year"):
        return None
    month, day = value.get("month") or 1, value.get("date") or 1
    try:
        return datetime(int(value["year"]), int(month), int(day), tzinfo=UTC)
    except ValueError:
        return None


def _answers(values: Sequence[Any] | None) -> tuple[str, ...]:
    cleaned = (str(v).strip() for v in values or ())
    return tuple(dict.fromkeys(v for v in cleaned if normalize_answer(v)))


def _timeline(record: dict[str, Any]) -> _Timeline | None:
    """The first usable timeline: both answers, both starts, old strictly before new, and no
    overlap between old and new answers."""
    for line in record.get("timelines") or ():
        prev, cur = _answers(line.get("prev_answers")), _answers(line.get("cur_answers"))
        prev_start, cur_start = _start(line.get("prev_start")), _start(line.get("cur_start"))
        if not prev or not cur or prev_start is None or cur_start is None:
            continue
        if prev_start >= cur_start or overlap(prev, cur):
            continue
        return _Timeline(str(record["id"]), record["question"], prev, cur, prev_start, cur_start)
    return None


def _as_of_date(text: str) -> datetime | None:
    """Mid-year (July 1) for "2015"; the day itself for "February 07, 2021"."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            return datetime(int(text), 7, 1, tzinfo=UTC)
        return datetime.strptime(text, "%B %d, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def _sentence(question: str, answers: Sequence[str]) -> str:
    """A prose statement, e.g. "Who won? X." from "who won" and ["X"]."""
    question = question.strip().rstrip("?").strip()
    answer = ", ".join(answers).rstrip(".")
    return f"{question[:1].upper()}{question[1:]}? {answer}."


def _question_text(question: str) -> str:
    question = question.strip().rstrip("?").strip()
    return f"{question[:1].upper()}{question[1:]}?"


class _Chunks:
    """Collects SituatedQA chunks; ingestion order is by timestamp (then creation)."""

    def __init__(self, keyed: bool) -> None:
        self.keyed = keyed
        self.items: list[Chunk] = []

    def add(
        self, ident: str, entity: str, kind: ChunkKind, when: datetime, text: str, value: str
    ) -> None:
        self.items.append(
            Chunk(
                id=ident,
                text=text,
                timestamp=when,
                kind=kind,
                entity=entity,
                family=ANSWER,
                value=value,
                subject=entity if self.keyed else None,
                relation=ANSWER if self.keyed else None,
                object=value if self.keyed else None,
            )
        )

    def ordered(self) -> tuple[Chunk, ...]:
        order = sorted(self.items, key=lambda c: c.timestamp)  # stable: ties keep creation order
        return tuple(replace(chunk, recorded_order=i) for i, chunk in enumerate(order))


def _timeline_items(line: _Timeline, chunks: _Chunks) -> Question:
    """The two dated chunks of a timeline and its current question."""
    entity = f"situatedqa:{line.ident}"
    for side, answers, start in (
        ("prev", line.prev, line.prev_start),
        ("cur", line.cur, line.cur_start),
    ):
        text = _sentence(line.question, answers)
        chunks.add(f"sqa-{line.ident}-{side}", entity, ChunkKind.STATE, start, text, answers[0])
    return Question(
        id=f"sqa-{line.ident}-current",
        text=_question_text(line.question),
        kind=QuestionKind.CURRENT,
        gold=line.cur,
        stale=line.prev,
        entity=entity,
        family=ANSWER,
        ratio=(1, 1),
        changes=1,
        cell="current:N=1",
    )


def _as_of_questions(path: Path, lines: dict[str, _Timeline]) -> list[Question]:
    """The "as of <date>" queries whose date falls in a timeline version and whose answer
    agrees with that version (and not with the other)."""
    found: dict[tuple[str, datetime], Question] = {}
    for row in _jsonl(path):
        line = lines.get(str(row.get("id")))
        when = _as_of_date(str(row.get("date", "")))
        if line is None or when is None or (line.ident, when) in found:
            continue
        gold = line.answers_at(when)
        if gold is None:
            continue
        stale = line.prev if gold is line.cur else line.cur
        said = _answers(row.get("answer"))
        if not overlap(said, gold) or overlap(said, stale):
            continue
        found[(line.ident, when)] = Question(
            id=f"sqa-{line.ident}-asof-{when:%Y%m%d}",
            text=_question_text(row.get("edited_question") or line.question),
            kind=QuestionKind.AS_OF,
            gold=gold,
            stale=stale,
            entity=f"situatedqa:{line.ident}",
            family=ANSWER,
            valid_at=when,
            ratio=(1, 1),
            changes=1,
            cell="as_of",
        )
    return list(found.values())


def _static_item(record: dict[str, Any], chunks: _Chunks) -> Question | None:
    answers = _answers(record.get("cur_answers")) or _answers(record.get("nq_answers"))
    if not answers:
        return None
    ident, entity = str(record["id"]), f"situatedqa:{record['id']}"
    text = _sentence(record["question"], answers)
    chunks.add(f"sqa-{ident}-static", entity, ChunkKind.STATIC, _STATIC_DATE, text, answers[0])
    return Question(
        id=f"sqa-{ident}-static",
        text=_question_text(record["question"]),
        kind=QuestionKind.STATIC,
        gold=answers,
        entity=entity,
        family=ANSWER,
        cell="static",
    )


def load_situatedqa(
    data_dir: Path | str, *, limit: int | None = None, keyed: bool = False, static: bool = True
) -> Dataset:
    """SituatedQA dev as a dataset (PROSE; ``keyed=True``: subject = the item, relation
    "answer", so supersession can be measured). ``limit`` caps the time-dependent items kept
    (in file order) and, separately, the static ones; ``static=False`` leaves static out."""
    raw = require_file(data_dir, SITUATEDQA_RAW)
    qa = require_file(data_dir, SITUATEDQA_QA)
    chunks, questions = _Chunks(keyed), []
    lines: dict[str, _Timeline] = {}
    statics = 0
    for record in _jsonl(raw):
        if record.get("timelines"):
            line = _timeline(record)
            if line is not None and (limit is None or len(lines) < limit):
                lines[line.ident] = line
                questions.append(_timeline_items(line, chunks))
        elif static and (limit is None or statics < limit):
            question = _static_item(record, chunks)
            statics += question is not None
            questions += [question] if question else []
    questions += _as_of_questions(qa, lines)
    ordered = chunks.ordered()
    moments = [c.timestamp for c in ordered] + [q.valid_at for q in questions if q.valid_at]
    return Dataset(
        name="situatedqa-keyed" if keyed else "situatedqa",
        track=Track.KEYED if keyed else Track.PROSE,
        chunks=ordered,
        questions=tuple(questions),
        now=max(moments, default=_STATIC_DATE) + timedelta(days=1),
        cardinalities=MappingProxyType({ANSWER: Cardinality.ONE}),
        description=f"SituatedQA temporal dev: {len(lines)} timelines, {statics} static items",
    )


_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


def session_dates(conversation: dict[str, Any]) -> dict[int, datetime]:
    """Session number -> its date ("1:56 pm on 8 May, 2023", read as UTC)."""
    dates = {}
    for key, stamp in conversation.items():
        if match := re.fullmatch(r"session_(\d+)_date_time", key):
            when = datetime.strptime(str(stamp), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            dates[int(match.group(1))] = when
    return dates


def _sessions(conversation: dict[str, Any]) -> Iterator[tuple[datetime, list[dict[str, Any]]]]:
    """(session date, turns) in session order."""
    dates = session_dates(conversation)
    numbers = sorted(
        int(match.group(1))
        for key in conversation
        if (match := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
    )
    for number in numbers:
        yield dates[number], conversation[f"session_{number}"]


def _turns(sample: dict[str, Any]) -> list[Chunk]:
    """Each turn a STATIC chunk, id "<sample>:<dia_id>", dated at its session plus its index in
    seconds (keeps turn order)."""
    entity, found = str(sample["sample_id"]), []
    for when, turns in _sessions(sample["conversation"]):
        for index, turn in enumerate(turns):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            found.append(
                Chunk(
                    id=f"{entity}:{turn['dia_id']}",
                    text=text,
                    timestamp=when + timedelta(seconds=index),
                    kind=ChunkKind.STATIC,
                    entity=entity,
                    metadata=MappingProxyType({"speaker": turn["speaker"]}),
                )
            )
    return found


def evidence_ids(
    sample: str, values: Sequence[Any], known: set[str] | None = None
) -> tuple[str, ...]:
    """Evidence turn ids "<sample>:D<session>:<turn>", repaired ("D30:05" -> "D30:5",
    "D8:6; D9:17" -> both) and, given ``known``, kept only where the turn exists."""
    ids = (f"{sample}:D{a}:{b}" for v in values for a, b in _EVIDENCE.findall(str(v)))
    return tuple(i for i in dict.fromkeys(ids) if known is None or i in known)


def _locomo_questions(sample: dict[str, Any], known: set[str]) -> list[Question]:
    """QA items with an answer and evidence (category 5, adversarial, has no answer)."""
    entity, found = str(sample["sample_id"]), []
    for index, item in enumerate(sample["qa"]):
        evidence = evidence_ids(entity, item.get("evidence") or (), known)
        if "answer" not in item or item.get("category") == 5 or not evidence:
            continue
        found.append(
            Question(
                id=f"{entity}:q{index:03d}:c{item.get('category')}",
                text=str(item["question"]),
                kind=QuestionKind.STATIC,
                gold=(str(item["answer"]),),
                entity=entity,
                evidence=evidence,
                cell="static",
            )
        )
    return found


def load_locomo(data_dir: Path | str, *, limit: int | None = None) -> Dataset:
    """LoCoMo as a PROSE dataset scored by evidence turn id; ``limit`` caps the conversations.
    Question ids end in ":c<category>" (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)."""
    path = require_file(data_dir, LOCOMO)
    samples = json.loads(path.read_text(encoding="utf-8"))[:limit]
    chunks: list[Chunk] = []
    questions: list[Question] = []
    for sample in samples:
        turns = _turns(sample)
        chunks += turns
        questions += _locomo_questions(sample, {c.id for c in turns})
    chunks.sort(key=lambda c: c.timestamp)
    ordered = tuple(replace(c, recorded_order=i) for i, c in enumerate(chunks))
    return Dataset(
        name="locomo",
        track=Track.PROSE,
        chunks=ordered,
        questions=tuple(questions),
        now=max((c.timestamp for c in ordered), default=_STATIC_DATE) + timedelta(days=1),
        score_by_evidence=True,
        description=f"LoCoMo: {len(samples)} conversations, static retention by evidence turn",
    )
