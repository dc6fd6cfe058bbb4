"""The claim judge end to end on the labelled pair sets (``kappa-eval``'s claims section).

Each (older, newer) pair goes into a fresh memory judged by the claim judge: the older
statement valid from 2020, the newer one from 2021. The verdict is what the memory did: the
newer statement closed the older one (``ends``), joined its claim (``restates``), or neither.
Against the labels that gives precision, recall and F1 of ``ends``, restatements recognised,
and, for the pairs labelled as changes, where the structure gate stopped them: no common
subject, not both likely to state an attribute, likely not the same attribute. Scorer figures
(``kappa_eval``) say what the pair model could do; these say what a user of
``prose_judge="kappa"`` gets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shared_core.embedders.base import CallableEmbedder, Embedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.claims import ClaimJudge
from shared_core.judging.subjects import statement_subject
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from temporal_rag_training.kappa_eval import Scores, scores_of
from temporal_rag_training.labelled import RESTATING_KINDS, LabelledPair

ENDS, RESTATES, NEITHER = "ends", "restates", "neither"
OLDER_FROM = datetime(2020, 1, 1, tzinfo=UTC)
NEWER_FROM = datetime(2021, 1, 1, tzinfo=UTC)
GATE = ("same subject", "both likely states", "likely one attribute")


@dataclass(frozen=True, slots=True)
class ClaimsReport:
    """Verdicts per pair kind, ``ends`` scored against the labels, restatements, and how many
    change pairs passed each step of the structure gate."""

    verdicts: dict[str, Counter[str]]
    ends: Scores
    restating: int
    recognised: int
    false_restates: int
    changes: int
    gate: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdicts": {kind: dict(counts) for kind, counts in self.verdicts.items()},
            "ends": {"precision": self.ends.precision, "recall": self.ends.recall,
                     "f1": self.ends.f1},
            "restates": {"recognised": self.recognised, "restating_pairs": self.restating,
                         "false_restates": self.false_restates},
            "gate": {"change_pairs": self.changes, **self.gate},
        }  # fmt: skip


def claims_report(
    pairs: Sequence[LabelledPair], judge: ClaimJudge, embedder: Embedder
) -> ClaimsReport:
    """Run every pair through a fresh memory judged by ``judge`` (see the module doc)."""
    cached = _cached(embedder, [t for p in pairs for t in (p.older, p.newer)])
    verdicts = [_verdict(pair, judge, cached) for pair in pairs]
    by_kind: dict[str, Counter[str]] = {}
    for pair, verdict in zip(pairs, verdicts, strict=True):
        by_kind.setdefault(pair.kind, Counter())[verdict] += 1
    restating = [v for p, v in zip(pairs, verdicts, strict=True) if p.kind in RESTATING_KINDS]
    others = [v for p, v in zip(pairs, verdicts, strict=True) if p.kind not in RESTATING_KINDS]
    changes = [p for p in pairs if p.label == 1]
    return ClaimsReport(
        verdicts=by_kind,
        ends=scores_of((p.label for p in pairs), (v == ENDS for v in verdicts)),
        restating=len(restating),
        recognised=restating.count(RESTATES),
        false_restates=others.count(RESTATES),
        changes=len(changes),
        gate=_gate(changes, judge, cached),
    )


def _cached(embedder: Embedder, texts: list[str]) -> Embedder:
    unique = list(dict.fromkeys(texts))
    vectors = dict(zip(unique, embedder.embed_documents(unique), strict=True))

    def embed(batch: list[str]) -> list[list[float]]:
        return [list(vectors[t]) for t in batch]

    return CallableEmbedder(
        embed, name=embedder.name, dimension=embedder.dimension, embed_query=embedder.embed_query
    )


def _verdict(pair: LabelledPair, judge: ClaimJudge, embedder: Embedder) -> str:
    memory = TemporalMemory(
        ledger=InMemoryLedger(),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=embedder, prose_judge=judge),
    )
    with memory:
        older = memory.add(pair.older, valid_from=OLDER_FROM)
        newer = memory.add(pair.newer, valid_from=NEWER_FROM)
    if any(fact.id in older.fact_ids for fact in newer.closed):
        return ENDS
    # a restatement reinforces the claim's version: the write comes back as that version
    said, written = older.writes[0].fact, newer.writes[0].fact
    joined = (
        said is not None
        and written is not None
        and said.key is not None
        and (written.key, written.object) == (said.key, said.object)
    )
    return RESTATES if joined else NEITHER


def _gate(changes: list[LabelledPair], judge: ClaimJudge, embedder: Embedder) -> dict[str, int]:
    """How many change pairs share a subject, have both statements likely to state an
    attribute, and likely the same one (each step counts the pairs that passed every step
    before it, at the judge's thresholds)."""
    texts = list(dict.fromkeys(t for p in changes for t in (p.older, p.newer)))
    reader = judge.frame_embedder or embedder
    profiles = dict(zip(texts, judge.frames.profiles(reader.embed_documents(texts)), strict=True))
    passed = Counter[str]()
    for pair in changes:
        subject = statement_subject(pair.older)
        if subject is None or subject != statement_subject(pair.newer):
            continue
        passed[GATE[0]] += 1
        old, new = profiles[pair.older], profiles[pair.newer]
        if min(old.state, new.state) < judge.state_threshold:
            continue
        passed[GATE[1]] += 1
        passed[GATE[2]] += old.agreement(new) >= judge.agreement_threshold
    return {step: passed[step] for step in GATE}


def claims_markdown(title: str, report: ClaimsReport) -> str:
    """The report as a markdown section."""
    lines = [
        f"### {title}",
        "",
        f"ends: precision {report.ends.precision:.3f}, recall {report.ends.recall:.3f}, "
        f"F1 {report.ends.f1:.3f}; restates recognised {report.recognised}/{report.restating}, "
        f"false restates {report.false_restates}.",
        "",
        f"Structure gate, of {report.changes} change pairs: "
        + ", ".join(f"{step} {report.gate[step]}" for step in GATE)
        + ".",
        "",
        "| kind | ends | restates | neither |",
        "| --- | --- | --- | --- |",
    ]
    for kind, counts in report.verdicts.items():
        lines.append(f"| {kind} | {counts[ENDS]} | {counts[RESTATES]} | {counts[NEITHER]} |")
    return "\n".join(lines) + "\n"
