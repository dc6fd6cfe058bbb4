"""Phi_T: the operator's invariants on random candidate sets and random conflict relations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.detectors import KeyConflictDetector
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact
from shared_core.phi_t import (
    AnyConflict,
    Candidate,
    Conflict,
    NeverConflicts,
    ordered_pairs,
    temporal_dominance,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


class RelationDetector:
    """Fires for the given (id, id) pairs, in whatever order they are given (even wrong ones)."""

    name = "relation"

    def __init__(self, pairs: set[tuple[str, str]]) -> None:
        self.pairs = pairs

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        index = {c.id: i for i, c in enumerate(candidates)}
        return [
            Conflict(index[a], index[b], self.name, 0.9)
            for a, b in sorted(self.pairs)
            if a in index and b in index
        ]


def dated(id_: str, day: int | None, text: str = "", namespace: str = "default") -> Candidate:
    when = None if day is None else T0 + timedelta(days=day)
    return Candidate(id=id_, text=text or id_, timestamp=when, namespace=namespace)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Candidate], set[tuple[str, str]]]:
    size = draw(st.integers(0, 12))
    candidates = [
        dated(
            f"c{i}",
            draw(st.one_of(st.none(), st.integers(0, 5))),
            namespace=draw(st.sampled_from(["default", "default", "other"])),
        )
        for i in range(size)
    ]
    ids = [c.id for c in candidates]
    pairs = draw(st.sets(st.tuples(st.sampled_from(ids), st.sampled_from(ids)))) if ids else set()
    return candidates, pairs


def honoured(pairs: set[tuple[str, str]], pool: Sequence[Candidate]) -> set[tuple[str, str]]:
    """The reported (older, newer) pairs the operator must act on: the newer is strictly newer."""
    by_id = {c.id: c for c in pool}
    return {(a, b) for a, b in pairs if by_id[b].is_newer_than(by_id[a])}


@given(scenarios())
def test_no_kept_candidate_is_contradicted_by_a_newer_one(
    scenario: tuple[list[Candidate], set[tuple[str, str]]],
) -> None:
    candidates, pairs = scenario
    result = temporal_dominance(candidates, RelationDetector(pairs))
    kept = {c.id for c in result.kept}
    for older, newer in honoured(pairs, candidates):
        assert not (older in kept and newer in kept)
        assert older not in kept


@given(scenarios())
def test_the_newest_of_every_conflict_group_is_kept(
    scenario: tuple[list[Candidate], set[tuple[str, str]]],
) -> None:
    candidates, pairs = scenario
    edges = honoured(pairs, candidates)
    group = {c.id: {c.id} for c in candidates}
    for a, b in edges:  # connected components, naively
        merged = group[a] | group[b]
        for member in merged:
            group[member] = merged
    by_id = {c.id: c for c in candidates}
    kept = {c.id for c in temporal_dominance(candidates, RelationDetector(pairs)).kept}
    for members in group.values():
        times = [by_id[m].timestamp for m in members if by_id[m].timestamp is not None]
        newest = [m for m in members if times and by_id[m].timestamp == max(times)]  # type: ignore[type-var]
        assert set(newest) <= kept


@given(scenarios())
def test_applying_twice_equals_applying_once(
    scenario: tuple[list[Candidate], set[tuple[str, str]]],
) -> None:
    candidates, pairs = scenario
    detector = RelationDetector(pairs)
    once = temporal_dominance(candidates, detector)
    twice = temporal_dominance(once.kept, detector)
    assert twice.kept == once.kept
    assert twice.shadows == ()


@given(scenarios())
def test_kept_is_the_input_order_and_shadows_complete_it(
    scenario: tuple[list[Candidate], set[tuple[str, str]]],
) -> None:
    candidates, pairs = scenario
    frozen = list(candidates)
    result = temporal_dominance(candidates, RelationDetector(pairs))
    assert candidates == frozen  # not mutated
    shadowed = {s.candidate.id for s in result.shadows}
    assert [c for c in candidates if c.id not in shadowed] == list(result.kept)
    by_id = {c.id: c for c in candidates}
    for shadow in result.shadows:
        dominator = by_id[shadow.dominated_by]
        assert dominator.is_newer_than(shadow.candidate)
        assert shadow.candidate.timestamp is not None  # undated candidates are never removed
        assert shadow.detector == "relation"


@given(scenarios())
def test_a_detector_that_never_fires_changes_nothing(
    scenario: tuple[list[Candidate], set[tuple[str, str]]],
) -> None:
    candidates, _ = scenario
    result = temporal_dominance(candidates, NeverConflicts())
    assert list(result.kept) == candidates
    assert result.shadows == ()


def test_a_chain_keeps_only_its_newest_link() -> None:
    a, b, c = dated("a", 1), dated("b", 2), dated("c", 3)
    result = temporal_dominance([c, a, b], RelationDetector({("a", "b"), ("b", "c")}))
    assert [k.id for k in result.kept] == ["c"]
    assert {(s.candidate.id, s.dominated_by) for s in result.shadows} == {("a", "b"), ("b", "c")}


def test_equal_times_and_undated_candidates_never_dominate() -> None:
    same_a, same_b, undated, newer = dated("a", 1), dated("b", 1), dated("u", None), dated("n", 2)
    pairs = {("a", "b"), ("b", "a"), ("u", "n"), ("n", "u")}
    result = temporal_dominance([same_a, same_b, undated, newer], RelationDetector(pairs))
    assert [k.id for k in result.kept] == ["a", "b", "u", "n"]


def test_namespaces_are_never_compared() -> None:
    old, new = dated("old", 1, namespace="alice"), dated("new", 2, namespace="bob")
    result = temporal_dominance([old, new], RelationDetector({("old", "new")}))
    assert result.shadows == ()
    assert ordered_pairs([old, new]) == []


def test_the_newest_dominator_is_reported() -> None:
    old, mid, new = dated("old", 1), dated("mid", 2), dated("new", 3)
    result = temporal_dominance([old, mid, new], RelationDetector({("old", "mid"), ("old", "new")}))
    (shadow,) = result.shadows
    assert shadow.dominated_by == "new"


def test_ordered_pairs_are_older_then_newer_and_can_be_narrowed() -> None:
    pool = [dated("b", 2), dated("a", 1), dated("c", 2)]
    assert ordered_pairs(pool) == [(1, 0), (1, 2)]
    assert ordered_pairs(pool, keep=lambda older, newer: newer.id == "c") == [(1, 2)]


def test_bad_candidate_sets_are_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"candidates\[1\]\.id"):
        temporal_dominance([dated("a", 1), dated("a", 2)], NeverConflicts())
    with pytest.raises(InvalidInputError, match="candidates"):
        temporal_dominance(["text"], NeverConflicts())  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="timestamp"):
        Candidate(id="x", text="x", timestamp=datetime(2024, 1, 1))  # noqa: DTZ001
    with pytest.raises(InvalidInputError, match="detectors"):
        AnyConflict()


def test_candidates_come_from_facts_with_their_key_and_valid_time() -> None:
    fact = Fact(
        text="Maria lives in Lisbon",
        subject="Maria",
        relation="lives in",
        object="Lisbon",
        valid_from=T0,
        metadata={"source": "chat"},
    )
    candidate = Candidate.from_fact(fact, score=0.8)
    assert (candidate.id, candidate.timestamp, candidate.object) == (fact.id, T0, "Lisbon")
    assert candidate.key == fact.key
    assert candidate.score == 0.8
    assert candidate.metadata["source"] == "chat"


def test_any_conflict_unions_its_detectors_and_labels_each_verdict() -> None:
    older = Candidate.from_fact(
        Fact(
            text="lives in Berlin",
            subject="Maria",
            relation="lives in",
            object="Berlin",
            valid_from=T0,
        )
    )
    newer = Candidate.from_fact(
        Fact(
            text="lives in Lisbon",
            subject="Maria",
            relation="lives in",
            object="Lisbon",
            valid_from=T0 + timedelta(days=1),
        )
    )
    prose_old, prose_new = dated("p1", 0, "standup at 10"), dated("p2", 5, "standup at 11")
    detector = AnyConflict(KeyConflictDetector(), RelationDetector({("p1", "p2")}))
    result = temporal_dominance([older, newer, prose_old, prose_new], detector)
    assert detector.name == "any(key,relation)"
    assert {(s.candidate.id, s.detector) for s in result.shadows} == {
        (older.id, "key"),
        ("p1", "relation"),
    }
