"""The chat track through the no-LLM write-time judge: :func:`measure_chat_claims`.

Each speaker's messages are written in time order, :data:`WRITE_BATCH` per ``add_many``, with
the speaker as ``metadata["user_id"]`` (the memory's speaker field) and the message's valid
time, into a fresh in-memory :class:`TemporalMemory` whose ``prose_judge`` is the shipped claim
judge (``"kappa"``) or the one given. It reports, for the CURRENT questions of single-valued
attributes, clean@5 (gold value retrieved, no stale value), asked in the first person with a
``user_id`` filter (the form a chat app asks in) and as the third-person text with no filter
(the bench's form); what became of each single-valued statement (prose with no subject, prose
below the frame gate, a claim that is new, restates or ends); and the closings that must never
happen: across speakers, of a multi-valued or static statement or small talk, and across
attributes. The bench's ``make bench`` wiring is separate; this is the function it can call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from shared_core.clock import ManualClock
from shared_core.embedders.base import Embedder
from shared_core.facts import Cardinality, Decision, key_subject
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.base import Judge
from shared_core.judging.subjects import statement_subject
from shared_core.ledger.in_memory import InMemoryLedger
from shared_core.memory.config import MemoryConfig
from shared_core.memory.memory import TemporalMemory
from temporal_rag_bench.chat import SIZES, ChatSize, generate_chat
from temporal_rag_bench.metrics import score_question
from temporal_rag_bench.model import (
    SPEAKER_FIELD,
    Chunk,
    ChunkKind,
    Dataset,
    QuestionKind,
    Retrieved,
)

WRITE_BATCH = 8
CHUNK = "chunk_id"
K = 5


@dataclass(slots=True)
class ChatClaimsReport:
    """What :func:`measure_chat_claims` measured (counts and rates; see the module doc)."""

    questions: int = 0
    clean_first_person: float = 0.0
    clean_third_person: float = 0.0
    clean_every_current: float = 0.0
    clean_per_n: dict[str, float] = field(default_factory=dict)
    stages: dict[str, int] = field(default_factory=dict)
    stages_per_act: dict[str, dict[str, int]] = field(default_factory=dict)
    closings: int = 0
    cross_speaker_closings: int = 0
    multi_valued_closed: int = 0
    other_closed: int = 0
    cross_attribute_closings: int = 0
    wrong_subjects: list[tuple[str, str | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def measure_chat_claims(
    *,
    seed: int = 0,
    size: ChatSize | str = "quick",
    split: str = "test",
    judge: Judge | Literal["kappa"] | None = "kappa",
    embedder: Embedder | None = None,
) -> ChatClaimsReport:
    """Write the chat track (``seed``, ``size``, phrasing ``split``) through a memory judging
    prose with ``judge`` (``"kappa"``: the shipped claim judge; None: plain prose) and measure
    it (:class:`ChatClaimsReport`)."""
    size = SIZES[size] if isinstance(size, str) else size
    return measure_claims(
        generate_chat(seed=seed, size=size, split=split), judge=judge, embedder=embedder
    )


def measure_claims(
    dataset: Dataset,
    *,
    judge: Judge | Literal["kappa"] | None = "kappa",
    embedder: Embedder | None = None,
) -> ChatClaimsReport:
    """:func:`measure_chat_claims` for any dataset (the synthetic prose track too): chunks
    with a ``speaker`` are written as theirs; questions without a first-person form are asked
    only as their text."""
    clock = ManualClock(dataset.now)
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=embedder, clock=clock, prose_judge=judge),
    )
    report = ChatClaimsReport()
    by_id = {chunk.id: chunk for chunk in dataset.chunks}
    many = frozenset(f for f, c in dataset.cardinalities.items() if c is Cardinality.MANY)
    try:
        for batch in _batches(dataset.chunks):
            metadatas: list[dict[str, Any]] = [
                {CHUNK: c.id, "valid_from": c.timestamp}
                | ({SPEAKER_FIELD: c.speaker} if c.speaker is not None else {})
                for c in batch
            ]
            added = memory.add_many([c.text for c in batch], metadatas=metadatas)
            for chunk, result in zip(batch, added, strict=True):
                _count(report, chunk, result, by_id, many)
        _ask(report, memory, dataset)
    finally:
        memory.close()
    return report


def _batches(chunks: Sequence[Chunk]) -> list[list[Chunk]]:
    by_speaker: dict[str | None, list[Chunk]] = {}
    for chunk in sorted(chunks, key=lambda c: c.recorded_order):
        by_speaker.setdefault(chunk.speaker, []).append(chunk)
    return [
        said[i : i + WRITE_BATCH]
        for said in by_speaker.values()
        for i in range(0, len(said), WRITE_BATCH)
    ]


def _single(chunk: Chunk, many: frozenset[str]) -> bool:
    return chunk.kind is ChunkKind.STATE and chunk.family not in many


def _count(
    report: ChatClaimsReport,
    chunk: Chunk,
    added: Any,
    by_id: dict[str, Chunk],
    many: frozenset[str],
) -> None:
    fact = added.writes[0].fact
    if _single(chunk, many):
        if added.writes[0].decision is Decision.REINFORCED:
            stage = "claim restates"
        elif fact is None or fact.key is None:
            subject = statement_subject(chunk.text, writer=chunk.speaker is not None)
            stage = "no subject" if subject is None else "prose (gate)"
        else:
            stage = f"claim {fact.metadata.get('claim_verdict')}"
        act = str(chunk.metadata.get("act"))
        report.stages[stage] = report.stages.get(stage, 0) + 1
        report.stages_per_act.setdefault(act, {})
        report.stages_per_act[act][stage] = report.stages_per_act[act].get(stage, 0) + 1
        wanted = chunk.speaker if chunk.speaker is not None else chunk.entity
        if fact is not None and fact.subject is not None and fact.subject != _keyed(wanted):
            report.wrong_subjects.append((chunk.text, fact.subject))
    for closed in added.closed:
        old = by_id.get(str(closed.metadata.get(CHUNK)))
        if old is None or old.id == chunk.id:
            continue
        report.closings += 1
        if old.speaker != chunk.speaker:
            report.cross_speaker_closings += 1
        elif not _single(old, many):
            if old.kind is ChunkKind.STATE:
                report.multi_valued_closed += 1
            else:
                report.other_closed += 1
        elif old.family != chunk.family:
            report.cross_attribute_closings += 1


def _ask(report: ChatClaimsReport, memory: TemporalMemory, dataset: Dataset) -> None:
    by_id = {chunk.id: chunk for chunk in dataset.chunks}
    first: list[bool] = []
    third: list[bool] = []
    every: list[bool] = []
    per_cell: dict[str, list[bool]] = {}
    for question in dataset.questions:
        if question.kind is not QuestionKind.CURRENT:
            continue
        asked = [
            memory.search(question.asked, k=K, where=question.where),
            memory.search(question.text, k=K),
        ]
        scores = [
            score_question(
                question,
                Retrieved(tuple(by_id[str(h.fact.metadata[CHUNK])] for h in hits)),
                k=K,
            ).clean
            for hits in asked
        ]
        every.append(scores[1])
        per_cell.setdefault(question.cell, []).append(scores[0])
        if dataset.cardinalities.get(question.family or "") is not Cardinality.MANY:
            first.append(scores[0])
            third.append(scores[1])
    report.questions = len(first)
    report.clean_first_person = _rate(first)
    report.clean_third_person = _rate(third)
    report.clean_every_current = _rate(every)
    report.clean_per_n = {cell: _rate(v) for cell, v in sorted(per_cell.items())}


def _keyed(name: str | None) -> str | None:
    return None if name is None else key_subject(name)


def _rate(values: Sequence[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def _main() -> None:
    import json
    import sys

    judge: Any = None if "--plain" in sys.argv else "kappa"
    gates = [a.split("=")[1].split(",") for a in sys.argv if a.startswith("--gates=")]
    if gates and judge is not None:
        from dataclasses import replace

        from shared_core.judging.claims import claim_judge

        state, agreement = (float(x) for x in gates[0])
        judge = replace(claim_judge(), state_threshold=state, agreement_threshold=agreement)
    split = "dev" if "--dev" in sys.argv else "test"
    seeds = [int(a.split("=")[1]) for a in sys.argv if a.startswith("--seed=")] or [0]
    for seed in seeds:
        if "--synthetic" in sys.argv:
            from temporal_rag_bench.generator import generate
            from temporal_rag_bench.model import Track

            entities = int(next((a[11:] for a in sys.argv if a.startswith("--entities=")), 60))
            dataset = generate(track=Track.PROSE, seed=seed, entities=entities)
            report = measure_claims(dataset, judge=judge)
        else:
            report = measure_chat_claims(seed=seed, judge=judge, split=split)
        out = report.to_dict()
        out["wrong_subjects"] = Counter(s for _, s in report.wrong_subjects).most_common(8)
        print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    _main()
