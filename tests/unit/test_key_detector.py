"""kappa by key: the same as the brute-force pairwise rule, linear, MANY and namespaces apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from shared_core.clock import ManualClock
from shared_core.detectors import KeyConflictDetector
from shared_core.facts import Cardinality, Fact, FactKey, normalize_object
from shared_core.ledger import InMemoryLedger
from shared_core.phi_t import Candidate, temporal_dominance

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def keyed(
    id_: str, subject: str, relation: str, obj: object, day: int | None, namespace: str = "default"
) -> Candidate:
    return Candidate(
        id=id_,
        text=f"{subject} {relation} {obj}",
        timestamp=None if day is None else T0 + timedelta(days=day),
        namespace=namespace,
        key=FactKey(namespace, subject, relation),
        object=obj,  # type: ignore[arg-type]
    )


candidate_sets = st.lists(
    st.tuples(
        st.sampled_from(["maria", "jo"]),
        st.sampled_from(["lives_in", "speaks"]),
        st.sampled_from(["Berlin", "berlin", "Lisbon", 1, 1.0]),
        st.one_of(st.none(), st.integers(0, 4)),
        st.sampled_from(["default", "other"]),
    ),
    max_size=14,
).map(lambda rows: [keyed(f"c{i}", *row) for i, row in enumerate(rows)])


@given(candidate_sets)
def test_the_key_rule_matches_the_pairwise_definition(candidates: list[Candidate]) -> None:
    detector = KeyConflictDetector({"speaks": Cardinality.MANY})
    removed = {s.candidate.id for s in temporal_dominance(candidates, detector).shadows}
    expected = {
        old.id
        for old in candidates
        for new in candidates
        if new.is_newer_than(old)
        and old.key == new.key
        and old.key is not None
        and old.key.relation != "speaks"
        and normalize_object(old.object) != normalize_object(new.object)  # type: ignore[arg-type]
    }
    assert removed == expected


def test_many_relations_never_conflict() -> None:
    pool = [
        keyed("a", "maria", "speaks", "German", 1),
        keyed("b", "maria", "speaks", "Portuguese", 2),
    ]
    assert KeyConflictDetector({"Speaks": "many"}).find_conflicts(pool) == []
    assert len(KeyConflictDetector().find_conflicts(pool)) == 1  # undeclared means ONE


def test_declarations_can_come_from_a_ledger() -> None:
    ledger = InMemoryLedger(clock=ManualClock(T0))
    ledger.declare("speaks", Cardinality.MANY)
    pool = [
        keyed("a", "maria", "speaks", "German", 1),
        keyed("b", "maria", "speaks", "Portuguese", 2),
    ]
    assert KeyConflictDetector(ledger.cardinality).find_conflicts(pool) == []


def test_different_namespaces_never_conflict() -> None:
    pool = [
        keyed("a", "maria", "lives_in", "Berlin", 1, namespace="alice"),
        keyed("b", "maria", "lives_in", "Lisbon", 2, namespace="bob"),
    ]
    assert KeyConflictDetector().find_conflicts(pool) == []


def test_a_flip_flop_keeps_only_the_current_value() -> None:
    pool = [
        keyed("cola-1", "maria", "drink", "cola", 1),
        keyed("coffee", "maria", "drink", "coffee", 2),
        keyed("cola-2", "maria", "drink", "cola", 3),
    ]
    result = temporal_dominance(pool, KeyConflictDetector())
    assert [c.id for c in result.kept] == ["cola-2"]
    assert {(s.candidate.id, s.dominated_by) for s in result.shadows} == {
        ("cola-1", "coffee"),
        ("coffee", "cola-2"),
    }


def test_facts_from_the_ledger_become_comparable_candidates() -> None:
    old = Fact(
        text="Maria lives in Berlin",
        subject="Maria",
        relation="lives in",
        object="Berlin",
        valid_from=T0,
    )
    new = Fact(
        text="Maria moved to Lisbon",
        subject=" maria ",
        relation="Lives-In",
        object="Lisbon",
        valid_from=T0 + timedelta(days=30),
    )
    result = temporal_dominance(
        [Candidate.from_fact(old, score=0.9), Candidate.from_fact(new, score=0.7)],
        KeyConflictDetector(),
    )
    assert [c.object for c in result.kept] == ["Lisbon"]
    (shadow,) = result.shadows
    assert (shadow.detector, shadow.score, shadow.dominated_by) == ("key", 1.0, new.id)
