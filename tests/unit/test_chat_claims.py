"""The chat track through a memory's write-time judge (temporal_rag_bench.chat_claims)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shared_core.embedders.base import HashingEmbedder
from shared_core.judging import Judgement, WriteBatch, scoped_subject
from temporal_rag_bench.chat import SIZES, generate_chat
from temporal_rag_bench.chat_claims import measure_chat_claims, measure_claims
from temporal_rag_bench.model import ChunkKind, Dataset


def test_plain_prose_closes_nothing_and_every_single_valued_statement_is_counted() -> None:
    report = measure_chat_claims(size="tiny", judge=None, embedder=HashingEmbedder(64))
    dataset = generate_chat(size=SIZES["tiny"])
    singles = [c for c in dataset.chunks if c.kind is ChunkKind.STATE and "chain" in c.metadata]
    assert report.closings == 0
    assert report.questions == sum(q.cell.startswith("current:single") for q in dataset.questions)
    assert sum(report.stages.values()) == len(singles)
    assert set(report.stages) <= {"no subject", "prose (gate)"}


@dataclass
class GoldJudge:
    """Keys every statement of the track with its gold attribute and value, under its
    speaker: what a perfect extractor would write."""

    dataset: Dataset

    def judge(self, batch: WriteBatch) -> Judgement:
        gold = {
            (c.text, c.speaker): (c.family, c.value)
            for c in self.dataset.chunks
            if c.value is not None and c.kind is not ChunkKind.DISTRACTOR
        }
        out = []
        for fact, speaker in zip(batch.statements, batch.speakers, strict=True):
            key = gold.get((fact.text, speaker))
            if key is None:
                out.append((fact,))
                continue
            subject = scoped_subject("I", speaker)
            out.append((replace(fact, subject=subject, relation=key[0], object=key[1]),))
        return Judgement(
            statements=tuple(out), cardinalities=tuple(self.dataset.cardinalities.items())
        )


def test_gold_keys_are_clean_and_close_nothing_across_speakers_or_values() -> None:
    dataset = generate_chat(size=SIZES["tiny"])
    judge = GoldJudge(dataset)
    report = measure_claims(dataset, judge=judge, embedder=HashingEmbedder(64))
    assert report.closings > 0
    assert report.cross_speaker_closings == 0
    assert report.multi_valued_closed == 0
    assert report.cross_attribute_closings == 0
    plain = measure_claims(dataset, judge=None, embedder=HashingEmbedder(64))
    assert report.clean_first_person > plain.clean_first_person  # the stale values are gone
