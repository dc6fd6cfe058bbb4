"""SituatedQA and LoCoMo read from the evaluation data folder (skipped where it is absent; see
tests/evaluation_data.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_core.errors import InvalidInputError
from temporal_rag_bench.datasets import load_locomo, load_situatedqa, overlap
from temporal_rag_bench.metrics import score_question
from temporal_rag_bench.model import (
    ChunkKind,
    Dataset,
    QuestionKind,
    Retrieved,
    Track,
    normalize_answer,
    states,
)
from tests.evaluation_data import data_folder, require

LIMIT = 40


@pytest.fixture(scope="module")
def situatedqa() -> Dataset:
    require("situatedqa/raw.temp.dev.jsonl")
    return load_situatedqa(require("situatedqa/qa.temp.dev.jsonl"), limit=LIMIT)


@pytest.fixture(scope="module")
def locomo() -> Dataset:
    return load_locomo(require("locomo/locomo10.json"), limit=1)


def check_common(dataset: Dataset) -> None:
    assert dataset.chunks
    assert dataset.questions
    assert len({c.id for c in dataset.chunks}) == len(dataset.chunks)
    assert len({q.id for q in dataset.questions}) == len(dataset.questions)
    assert [c.recorded_order for c in dataset.chunks] == list(range(len(dataset.chunks)))
    assert dataset.now.tzinfo is not None
    for chunk in dataset.chunks:
        assert chunk.timestamp.tzinfo is not None
        assert chunk.timestamp < dataset.now
    for question in dataset.questions:
        assert question.gold
        assert question.cell
        if question.valid_at is not None:
            assert question.valid_at.tzinfo is not None


def test_situatedqa_shapes(situatedqa: Dataset) -> None:
    check_common(situatedqa)
    assert situatedqa.track is Track.PROSE
    kinds = {q.kind for q in situatedqa.questions}
    assert kinds == {QuestionKind.CURRENT, QuestionKind.AS_OF, QuestionKind.STATIC}
    current = [q for q in situatedqa.questions if q.kind is QuestionKind.CURRENT]
    assert 0 < len(current) <= LIMIT
    assert not any(c.keyed for c in situatedqa.chunks)


def test_situatedqa_gold_and_stale_never_overlap(situatedqa: Dataset) -> None:
    for question in situatedqa.questions:
        assert not overlap(question.gold, question.stale), question
        golds = {normalize_answer(a) for a in question.gold}
        assert golds.isdisjoint(normalize_answer(a) for a in question.stale)


def test_situatedqa_timelines_run_old_to_new(situatedqa: Dataset) -> None:
    by_id = situatedqa.by_id()
    for question in situatedqa.questions:
        if question.kind is not QuestionKind.CURRENT:
            continue
        stem = question.id.removesuffix("-current")
        old, new = by_id[f"{stem}-prev"], by_id[f"{stem}-cur"]
        assert old.timestamp < new.timestamp
        assert old.recorded_order < new.recorded_order
        assert states(new, question.gold[0])
        assert states(old, question.stale[0])
        assert question.stale[0].rstrip(".") in old.text
        clean = score_question(question, Retrieved((new,)))
        assert clean.clean
        assert score_question(question, Retrieved((old, new))).leak


def test_situatedqa_as_of_answers_follow_the_timeline(situatedqa: Dataset) -> None:
    by_id = situatedqa.by_id()
    as_of = [q for q in situatedqa.questions if q.kind is QuestionKind.AS_OF]
    assert as_of
    for question in as_of:
        assert question.valid_at is not None
        stem = question.id.rsplit("-asof-", 1)[0]
        old, new = by_id[f"{stem}-prev"], by_id[f"{stem}-cur"]
        holding = new if question.valid_at >= new.timestamp else old
        assert question.valid_at >= old.timestamp
        assert states(holding, question.gold[0])


def test_situatedqa_keyed_variant(situatedqa: Dataset) -> None:
    keyed = load_situatedqa(data_folder(), limit=10, keyed=True, static=False)
    check_common(keyed)
    assert keyed.track is Track.KEYED
    assert all(c.keyed and c.relation == "answer" for c in keyed.chunks)
    assert all(c.subject == c.entity and c.object == c.value for c in keyed.chunks)
    assert not [q for q in keyed.questions if q.kind is QuestionKind.STATIC]
    prose = load_situatedqa(data_folder(), limit=10, static=False)
    assert [c.text for c in prose.chunks] == [c.text for c in keyed.chunks]


def test_locomo_shapes(locomo: Dataset) -> None:
    check_common(locomo)
    assert locomo.score_by_evidence
    assert all(c.kind is ChunkKind.STATIC for c in locomo.chunks)
    ids = {c.id for c in locomo.chunks}
    for question in locomo.questions:
        assert question.kind is QuestionKind.STATIC
        assert question.evidence
        assert set(question.evidence) <= ids
        assert not question.id.endswith(":c5")
    first = locomo.by_id()[locomo.questions[0].evidence[0]]
    assert score_question(locomo.questions[0], Retrieved((first,)), by_evidence=True).hit


def test_locomo_turns_keep_session_order(locomo: Dataset) -> None:
    turns = [c for c in locomo.chunks if c.id.endswith(":D1:1") or c.id.endswith(":D1:2")]
    assert len(turns) == 2
    assert turns[0].timestamp < turns[1].timestamp
    assert ": " in turns[0].text


def test_missing_files_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"raw\.temp\.dev\.jsonl"):
        load_situatedqa(tmp_path)
    with pytest.raises(InvalidInputError, match=r"locomo10\.json"):
        load_locomo(tmp_path / "nowhere")


def test_overlap_is_by_normalised_whole_words() -> None:
    assert overlap(["The Beatles"], ["beatles"])
    assert overlap(["Salt Lake City"], ["Salt Lake City, Utah"])
    assert not overlap(["1990"], ["2018"])
    assert not overlap(["Lima"], ["Limassol"])
