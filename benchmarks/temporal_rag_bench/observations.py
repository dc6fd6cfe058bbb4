"""The LoCoMo-observations track: what write-time prose judging does to real memories.

LoCoMo carries, per session, short statements about its two speakers ("Caroline attended an
LGBTQ support group", with the evidence turn ids they come from): the kind of statement an
agent memory stores. Each conversation is one namespace of one :class:`TemporalMemory` and each
session one ``add_many`` with ``valid_from`` = the session's date, written twice: with no prose
judge and with the judge under test. The track reports

- how many statements the judge closed (a real conversation rarely changes a fact: every
  closing is a claim that something stopped being true), with a seeded sample of closed pairs
  (closed statement, closing statement, score) to read by hand;
- evidence recall@k of LoCoMo's questions (categories 1-4) over the current memory, with the
  judge off and on: the share of a question's evidence turns that a retrieved statement cites;
- ingest rate (statements/s, embedding excluded: vectors are computed once for both runs).

LoCoMo is for evaluation and threshold choice only, never for training.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.facts import Fact
from shared_core.judging.claims import ClaimJudge
from shared_core.judging.pairwise import ProseJudge
from shared_core.memory import Added, MemoryConfig, TemporalMemory
from temporal_rag_bench.datasets import LOCOMO, evidence_ids, require_file, session_dates
from temporal_rag_bench.shared_collection import Progress, embed_queries, no_progress

K = 10
SAMPLE = 50
CATEGORIES = frozenset({1, 2, 3, 4})
EMBED_BATCH = 256
_SESSION = re.compile(r"session_(\d+)_observation")


@dataclass(frozen=True, slots=True)
class Observation:
    """One statement of a session, with the evidence turn ids it cites."""

    text: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Session:
    """A session's date and its observations (both speakers, in file order)."""

    date: datetime
    observations: tuple[Observation, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo sample: its sessions in order and its answerable questions."""

    id: str
    sessions: tuple[Session, ...]
    questions: tuple[tuple[str, tuple[str, ...]], ...]  # (question, evidence turn ids)


@dataclass(frozen=True, slots=True)
class Closing:
    """A statement the judge closed, the statement that closed it and the judge's score."""

    conversation: str
    closed: str
    by: str
    score: float | None


@dataclass(frozen=True, slots=True)
class Ingest:
    """One pass over every conversation: closings, recall and time."""

    statements: int
    closings: tuple[Closing, ...]
    recall: float
    seconds: float
    per_question: tuple[float, ...] = field(repr=False)


def load_observations(data_dir: Path | str, *, limit: int | None = None) -> list[Conversation]:
    """Every LoCoMo conversation's observations by session (``limit`` caps conversations)."""
    path = require_file(data_dir, LOCOMO)
    samples = json.loads(path.read_text(encoding="utf-8"))[:limit]
    return [_conversation(sample) for sample in samples]


def _conversation(sample: dict[str, Any]) -> Conversation:
    entity = str(sample["sample_id"])
    dates = session_dates(sample["conversation"])
    sessions = []
    for key, by_speaker in sorted(
        sample.get("observation", {}).items(), key=lambda item: _session_number(item[0])
    ):
        number = _session_number(key)
        if number not in dates or not isinstance(by_speaker, dict):
            continue
        observations = tuple(
            Observation(str(text), evidence_ids(entity, [cited]))
            for entries in by_speaker.values()
            for text, cited in entries
        )
        sessions.append(Session(dates[number], observations))
    questions = tuple(
        (str(item["question"]), evidence)
        for item in sample["qa"]
        if item.get("category") in CATEGORIES
        and (evidence := evidence_ids(entity, item.get("evidence") or ()))
    )
    return Conversation(entity, tuple(sessions), questions)


def _session_number(key: str) -> int:
    match = _SESSION.fullmatch(key)
    return int(match.group(1)) if match else -1


def cached_embedder(
    embedder: Embedder, conversations: Sequence[Conversation], progress: Progress = no_progress
) -> Embedder:
    """``embedder`` with every statement and question embedded once, up front."""
    texts = list(
        dict.fromkeys(o.text for c in conversations for s in c.sessions for o in s.observations)
    )
    questions = list(dict.fromkeys(q for c in conversations for q, _ in c.questions))
    advance = progress("observations: embedding", len(texts) + len(questions))
    documents: dict[str, list[float]] = {}
    for start in range(0, len(texts), EMBED_BATCH):
        batch = texts[start : start + EMBED_BATCH]
        documents.update(zip(batch, map(list, embedder.embed_documents(batch)), strict=True))
        advance(len(batch))
    queries = dict(zip(questions, embed_queries(embedder, questions), strict=True))
    advance(len(questions))

    def embed(batch: list[str]) -> list[list[float]]:
        return [documents[t] if t in documents else list(embedder.embed_query(t)) for t in batch]

    def embed_query(text: str) -> list[float]:
        return queries[text] if text in queries else list(embedder.embed_query(text))

    return CallableEmbedder(
        embed, name=embedder.name, dimension=embedder.dimension, embed_query=embed_query
    )


def ingest(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    *,
    judge: ClaimJudge | ProseJudge | None,
    workdir: Path,
    k: int = K,
    progress: Progress = no_progress,
) -> Ingest:
    """Write every conversation (one namespace each) session by session; score the questions."""
    statements = sum(len(s.observations) for c in conversations for s in c.sessions)
    advance = progress(f"observations: judge {'on' if judge else 'off'}", statements)
    closings: list[Closing] = []
    recalls: list[float] = []
    seconds = 0.0
    with TemporalMemory.open(
        workdir, config=MemoryConfig(embedder=embedder, prose_judge=judge)
    ) as memory:
        for conversation in conversations:
            for session in conversation.sessions:
                metadatas = [{"evidence": " ".join(o.evidence)} for o in session.observations]
                started = time.perf_counter()
                added = memory.add_many(
                    [o.text for o in session.observations],
                    metadatas=metadatas,
                    namespace=conversation.id,
                    valid_from=session.date,
                )
                seconds += time.perf_counter() - started
                for item in added:
                    closings += [
                        Closing(conversation.id, fact.text, item.text, _score(item, fact))
                        for fact in item.closed
                    ]
                advance(len(session.observations))
            recalls += [
                _recall(memory, conversation.id, question, evidence, k)
                for question, evidence in conversation.questions
            ]
    recall = sum(recalls) / len(recalls) if recalls else 0.0
    return Ingest(statements, tuple(closings), recall, seconds, tuple(recalls))


def _score(added: Added, closed: Fact) -> float | None:
    """The judge's score for a closing: on the closing claim statement, or on the closed
    statement's reason (a pairwise ProseJudge)."""
    for write in added.writes:
        if write.fact is not None and "claim_score" in write.fact.metadata:
            return float(write.fact.metadata["claim_score"])
    score = closed.end_reason.score if closed.end_reason is not None else None
    return None if score is None else float(score)


def _recall(
    memory: TemporalMemory, namespace: str, question: str, evidence: Sequence[str], k: int
) -> float:
    hits = memory.search(question, k=k, namespace=namespace)
    cited = {turn for hit in hits for turn in str(hit.fact.metadata.get("evidence", "")).split()}
    return sum(1 for turn in evidence if turn in cited) / len(evidence)


def run_observations(
    data_dir: Path | str,
    embedder: Embedder,
    *,
    judge: ClaimJudge | ProseJudge,
    limit: int | None = None,
    seed: int = 0,
    k: int = K,
    sample: int = SAMPLE,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """The track's results (a JSON-ready dict): judge off, judge on, and closed-pair samples."""
    conversations = load_observations(data_dir, limit=limit)
    cached = cached_embedder(embedder, conversations, progress)
    with tempfile.TemporaryDirectory(prefix="observations-") as folder:
        off = ingest(
            conversations, cached, judge=None, workdir=Path(folder) / "off", k=k, progress=progress
        )
        on = ingest(
            conversations,
            cached,
            judge=judge,
            workdir=Path(folder) / "on",
            k=k,
            progress=progress,
        )
    drawn = random.Random(seed).sample(list(on.closings), min(sample, len(on.closings)))
    return {
        "name": "locomo-observations",
        "judge": judge.name,
        "conversations": len(conversations),
        "sessions": sum(len(c.sessions) for c in conversations),
        "statements": on.statements,
        "questions": len(on.per_question),
        "k": k,
        "closed": len(on.closings),
        "closed_share": len(on.closings) / on.statements if on.statements else 0.0,
        "recall_off": off.recall,
        "recall_on": on.recall,
        "ingest_seconds_off": off.seconds,
        "ingest_seconds_on": on.seconds,
        "statements_per_second_off": off.statements / off.seconds if off.seconds else None,
        "statements_per_second_on": on.statements / on.seconds if on.seconds else None,
        "samples": [
            {"conversation": c.conversation, "closed": c.closed, "by": c.by, "score": c.score}
            for c in drawn
        ],
    }
