"""The benchmark's metrics on hand-made cases."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

import pytest

from shared_core.facts import Cardinality
from temporal_rag_bench.metrics import (
    ALL,
    QuestionScore,
    aggregate,
    aggregate_cells,
    bootstrap,
    by_cell,
    detector_scores,
    entity_bags,
    is_conflict,
    percentile,
    score_all,
    score_question,
    static_retention,
    summarize,
    true_conflicts,
)
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    Question,
    QuestionKind,
    Retrieved,
    Track,
)

T0 = datetime(2022, 1, 1, tzinfo=UTC)


def chunk(
    ident: str,
    value: str | None,
    *,
    day: int = 0,
    entity: str | None = "Ada Lee",
    family: str | None = "residence",
    kind: ChunkKind = ChunkKind.STATE,
    text: str | None = None,
) -> Chunk:
    return Chunk(
        id=ident,
        text=text if text is not None else f"Ada Lee lives in {value}.",
        timestamp=T0 + timedelta(days=day),
        kind=kind,
        entity=entity,
        family=family,
        value=value,
    )


OSLO_OLD = chunk("c1", "Oslo", day=0)
LIMA = chunk("c2", "Lima", day=10)
OSLO_BOB = chunk("c3", "Oslo", day=5, entity="Bob Ng", text="Bob Ng lives in Oslo.")
NOISE = chunk("c4", None, day=3, entity=None, family=None, kind=ChunkKind.DISTRACTOR, text="Lunch.")
CURRENT = Question(
    id="q1",
    text="Where does Ada Lee live?",
    kind=QuestionKind.CURRENT,
    gold=("Lima",),
    stale=("Oslo",),
    entity="Ada Lee",
    family="residence",
    cell="current:N=1",
)


def score(*chunks: Chunk, question: Question = CURRENT, **kw: object) -> QuestionScore:
    return score_question(question, Retrieved(tuple(chunks), shadows=2, seconds=0.5), **kw)  # type: ignore[arg-type]


# --- per question ----------------------------------------------------------------------------


def test_a_hit_without_a_leak_is_clean() -> None:
    result = score(LIMA, NOISE)
    assert (result.hit, result.leak, result.clean) == (True, False, True)
    assert (result.shadows, result.seconds) == (2, 0.5)


def test_a_leak_without_a_hit() -> None:
    result = score(OSLO_OLD, NOISE)
    assert (result.hit, result.leak, result.clean) == (False, True, False)


def test_both_a_hit_and_a_leak_is_not_clean() -> None:
    result = score(OSLO_OLD, LIMA)
    assert (result.hit, result.leak, result.clean) == (True, True, False)


def test_neither() -> None:
    result = score(NOISE)
    assert (result.hit, result.leak, result.clean, result.complete) == (False, False, False, False)


def test_k_cuts_the_ranking() -> None:
    assert score(LIMA, OSLO_OLD, k=1).clean
    assert not score(LIMA, OSLO_OLD).clean


def test_another_entity_s_value_is_neither_hit_nor_leak() -> None:
    result = score(OSLO_BOB)
    assert (result.hit, result.leak) == (False, False)


def test_unvalued_chunks_are_matched_by_whole_words() -> None:
    prose = chunk("p1", None, entity=None, family=None, text="The capital is Lima, Peru.")
    partial = chunk("p2", None, entity=None, family=None, text="Limassol is sunny.")
    assert score(prose).hit
    assert not score(partial).hit


def test_complete_needs_every_gold_answer() -> None:
    many = Question(
        id="q2",
        text="Which languages?",
        kind=QuestionKind.CURRENT,
        gold=("Dutch", "Greek"),
        entity="Ada Lee",
        family="speaks",
        cell="many",
    )
    dutch = chunk("m1", "Dutch", family="speaks")
    greek = chunk("m2", "Greek", family="speaks")
    assert score(dutch, question=many).hit
    assert not score(dutch, question=many).complete
    assert score(dutch, greek, question=many).complete


def test_evidence_scoring_counts_chunk_ids() -> None:
    question = Question(
        id="q3",
        text="When did Ada go?",
        kind=QuestionKind.STATIC,
        gold=("7 May 2023",),
        evidence=("c1", "c2"),
        cell="static",
    )
    by_id = score(OSLO_OLD, question=question, by_evidence=True)
    assert by_id.hit
    assert not by_id.complete
    assert not by_id.leak
    assert score(OSLO_OLD, LIMA, question=question, by_evidence=True).complete
    assert not score(NOISE, question=question, by_evidence=True).hit


def test_score_all_uses_the_dataset_s_scoring() -> None:
    question = Question(
        id="q3", text="?", kind=QuestionKind.STATIC, gold=("zzz",), evidence=("c4",), cell="static"
    )
    dataset = Dataset(
        name="d",
        track=Track.PROSE,
        chunks=(NOISE,),
        questions=(question, CURRENT),
        now=T0,
        score_by_evidence=True,
    )
    scores = score_all(dataset, {"q3": Retrieved((NOISE,))})
    assert [(s.question_id, s.hit) for s in scores] == [("q3", True)]


# --- intervals and aggregates ----------------------------------------------------------------


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([5.0], 0.95) == 5.0
    assert percentile([], 0.5) == 0.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 1.0) == 4.0


def test_bootstrap_contains_the_estimate_and_narrows_with_n() -> None:
    small = bootstrap([True] * 7 + [False] * 3, seed=1)
    large = bootstrap([True] * 700 + [False] * 300, seed=1)
    for interval in (small, large):
        assert interval.low <= 0.7 <= interval.high
        assert interval.estimate == pytest.approx(0.7)
    assert (large.high - large.low) < (small.high - small.low) / 5
    assert 0.66 < large.low < 0.7 < large.high < 0.74  # about 1.96 * sqrt(.21 / 1000) = .028


def test_bootstrap_is_seeded_and_handles_edges() -> None:
    values = [True, False, True, True, False, True]
    assert bootstrap(values, seed=5) == bootstrap(values, seed=5)
    assert bootstrap([True] * 4) == bootstrap([True] * 4, seed=9)
    everything = bootstrap([True] * 4)
    assert (everything.estimate, everything.low, everything.high) == (1.0, 1.0, 1.0)
    nothing = bootstrap([False] * 4)
    assert (nothing.low, nothing.high) == (0.0, 0.0)
    assert bootstrap([]).n == 0


def test_bootstrap_of_real_values() -> None:
    interval = bootstrap([1.0, 2.0, 3.0, 4.0, 5.0] * 40, seed=2)
    assert interval.low < 3.0 < interval.high
    assert interval.estimate == pytest.approx(3.0)


def result(ident: str, cell: str, *, hit: bool, leak: bool = False, **kw: object) -> QuestionScore:
    kind = kw.pop("kind", QuestionKind.CURRENT)
    return QuestionScore(ident, cell, kind, hit, leak, hit, **kw)  # type: ignore[arg-type]


def test_aggregate_per_cell_and_all() -> None:
    scores = [
        result("a", "current:N=1", hit=True, shadows=1, seconds=0.1),
        result("b", "current:N=1", hit=True, leak=True, shadows=3, seconds=0.3),
        result("c", "static", hit=False, kind=QuestionKind.STATIC, seconds=0.2),
    ]
    cells = aggregate_cells("ours", scores, resamples=200)
    assert [c.cell for c in cells] == ["current:N=1", "static", ALL]
    first = cells[0]
    assert (first.n, first.hit.estimate, first.leak.estimate, first.clean.estimate) == (
        2,
        1,
        0.5,
        0.5,
    )
    assert first.shadows_per_query == 2.0
    assert first.latency_p50 == pytest.approx(0.2)
    assert cells[-1].n == 3
    assert cells[-1].latency_p95 == pytest.approx(0.29)
    assert aggregate("ours", "x", scores, resamples=200) == aggregate(
        "ours", "x", scores, resamples=200
    )
    assert list(by_cell(scores)) == ["current:N=1", "static"]
    json.dumps([c.to_dict() for c in cells])


def test_summarize_splits_by_question_kind() -> None:
    scores = [
        result("a", "current:N=1", hit=True),
        result("b", "current:N=3", hit=True, leak=True),
        result("c", "as_of", hit=True, kind=QuestionKind.AS_OF),
    ]
    summary = summarize("plain", scores, resamples=100)
    assert summary.current_hit is not None
    assert summary.stale_leak is not None
    assert summary.clean is not None
    assert summary.as_of_accuracy is not None
    assert (summary.current_hit.estimate, summary.stale_leak.estimate) == (1.0, 0.5)
    assert summary.clean.estimate == 0.5
    assert summary.as_of_accuracy.estimate == 1.0
    assert summary.static_hit is None
    json.dumps(summary.to_dict())
    json.dumps(scores[0].to_dict())


def test_static_retention_against_plain_top_k() -> None:
    static = QuestionKind.STATIC
    plain = [result(str(i), "static", hit=i < 8, kind=static) for i in range(10)]
    ours = [result(str(i), "static", hit=i < 6, kind=static) for i in range(10)]
    ours.append(result("x", "static", hit=True, kind=static))  # unpaired: ignored
    ours.append(result("y", "current:N=1", hit=False))  # not static: ignored
    retention = static_retention("ours", ours, "plain", plain)
    assert (retention.n, retention.rate, retention.baseline_rate) == (10, 0.6, 0.8)
    assert retention.ratio == pytest.approx(0.75)
    assert retention.difference_points == pytest.approx(-20.0)
    zero = static_retention("a", ours, "b", [result("0", "static", hit=False, kind=static)])
    assert zero.ratio is None
    json.dumps(retention.to_dict())


# --- the conflict detector's ground truth ----------------------------------------------------


def tiny_dataset() -> Dataset:
    chunks = (
        chunk("a", "Oslo", day=0),
        chunk("b", "Oslo", day=1),  # a restatement: no conflict with a
        chunk("c", "Lima", day=2),  # conflicts with a and b
        chunk("d", "Oslo", day=3),  # flip-flop back: conflicts with c only
        chunk("e", "Dutch", day=1, family="speaks"),
        chunk("f", "Greek", day=2, family="speaks"),  # MANY: no conflict
        chunk("g", "Quito", day=2, entity="Bob Ng"),  # another entity
        chunk("h", "Lima", day=2),  # same time as c, same value: no conflict
        NOISE,
    )
    return Dataset(
        name="tiny",
        track=Track.KEYED,
        chunks=chunks,
        questions=(),
        now=T0 + timedelta(days=30),
        cardinalities=MappingProxyType({"speaks": Cardinality.MANY}),
    )


def test_true_conflicts_follow_the_rule() -> None:
    truth = true_conflicts(tiny_dataset())
    assert truth == {("a", "c"), ("b", "c"), ("a", "h"), ("b", "h"), ("c", "d"), ("h", "d")}
    dataset = tiny_dataset()
    by_id = dataset.by_id()
    assert not is_conflict(by_id["c"], by_id["a"])  # wrong direction
    assert not is_conflict(by_id["a"], by_id["c"], Cardinality.MANY)


def test_detector_precision_and_recall() -> None:
    dataset = tiny_dataset()
    reported = [("a", "c"), ("c", "d"), ("e", "f"), ("a", "b")]  # 2 true, 2 false
    scores = detector_scores(dataset, reported)
    assert (scores.reported, scores.true_positives, scores.expected) == (4, 2, 6)
    assert scores.precision == pytest.approx(0.5)
    assert scores.recall == pytest.approx(2 / 6)
    json.dumps(scores.to_dict())


def test_detector_orientation_and_examined_pairs() -> None:
    dataset = tiny_dataset()
    flipped = [("c", "a"), ("d", "c")]
    assert detector_scores(dataset, flipped).precision == 1.0
    assert detector_scores(dataset, flipped, ordered=True).precision == 0.0
    shown = [("a", "c"), ("c", "d"), ("a", "b")]
    scores = detector_scores(dataset, [("a", "c")], examined=shown)
    assert (scores.expected, scores.recall) == (2, 0.5)
    empty = detector_scores(dataset, [])
    assert (empty.precision, empty.recall) == (None, 0.0)


def test_entity_bags_group_by_entity_in_ingestion_order() -> None:
    bags = entity_bags(tiny_dataset())
    assert set(bags) == {"Ada Lee", "Bob Ng"}
    assert [c.id for c in bags["Ada Lee"]] == ["a", "b", "c", "d", "e", "f", "h"]
    assert [c.id for c in bags["Bob Ng"]] == ["g"]
