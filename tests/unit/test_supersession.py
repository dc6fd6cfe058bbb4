"""The pure write-time rule: versions from statements, plans that never mutate their inputs."""

from __future__ import annotations

import copy
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.clock import OPEN
from shared_core.errors import InvalidOperationError, NothingToRetractError
from shared_core.facts import Decision, Reason, ReasonKind
from shared_core.supersession import (
    Statement,
    StreamState,
    derive_versions,
    plan_statement,
    plan_withdrawal,
)


def said(
    seq: int, value: str | None, start: int, end: int | None = None, text: str = "t"
) -> Statement:
    return Statement(seq, f"f{seq}", value, start, end, text)


def state_of(*statements: Statement) -> StreamState:
    return StreamState(statements, derive_versions(statements))


def timeline(state: StreamState) -> list[tuple[str, str, int, int]]:
    return [(v.fact_id, v.value, v.valid_from, v.valid_to) for v in state.versions]


def test_a_new_value_closes_the_old_one_at_its_valid_from() -> None:
    state = state_of(said(1, "berlin", 10))
    plan = plan_statement(state, said(2, "lisbon", 20))
    assert plan.decision is Decision.SUPERSEDED
    assert plan.after is not None
    assert timeline(plan.after) == [("f1", "berlin", 10, 20), ("f2", "lisbon", 20, OPEN)]
    (closed,) = plan.closed()
    assert closed.end is not None
    assert closed.end.kind is ReasonKind.SUPERSEDED
    assert closed.end.by == "f2"


def test_a_late_old_fact_runs_only_until_the_next_known_change() -> None:
    plan = plan_statement(state_of(said(1, "berlin", 10)), said(2, "madrid", 5))
    assert plan.decision is Decision.BACKFILLED
    assert plan.after is not None
    assert timeline(plan.after) == [("f2", "madrid", 5, 10), ("f1", "berlin", 10, OPEN)]
    assert plan.retire_versions == ()  # the current version was not touched


def test_a_late_fact_with_the_same_object_extends_the_version_and_keeps_its_name() -> None:
    plan = plan_statement(state_of(said(1, "berlin", 10)), said(2, "berlin", 5))
    assert plan.decision is Decision.BACKFILLED
    assert plan.after is not None
    assert timeline(plan.after) == [("f1", "berlin", 5, OPEN)]


def test_same_valid_from_and_another_value_retires_the_earlier_statement() -> None:
    plan = plan_statement(state_of(said(1, "lisbom", 10)), said(2, "lisbon", 10))
    assert plan.decision is Decision.CORRECTED
    ((retired, reason),) = plan.retire_statements
    assert retired.seq == 1
    assert reason.kind is ReasonKind.CORRECTED
    assert reason.by == "f2"
    ((old_version, why),) = plan.retire_versions
    assert old_version.fact_id == "f1"
    assert why.kind is ReasonKind.CORRECTED


def test_an_identical_statement_is_a_duplicate_and_plans_nothing() -> None:
    state = state_of(said(1, "berlin", 10))
    plan = plan_statement(state, said(2, "berlin", 10))
    assert plan.decision is Decision.DUPLICATE
    assert not plan.changes_anything


def test_another_wording_of_the_current_value_reinforces() -> None:
    plan = plan_statement(state_of(said(1, "berlin", 10)), said(2, "berlin", 10, text="other"))
    assert plan.decision is Decision.REINFORCED
    assert plan.add_versions == ()
    assert plan.retire_versions == ()


def test_a_retraction_ends_the_value_and_nothing_to_retract_is_an_error() -> None:
    plan = plan_statement(state_of(said(1, "veg", 10)), said(2, None, 30))
    assert plan.decision is Decision.RETRACTED
    assert plan.after is not None
    (version,) = plan.after.versions
    assert version.valid_to == 30
    assert version.end is not None
    assert version.end.kind is ReasonKind.RETRACTED
    with pytest.raises(NothingToRetractError):
        plan_statement(state_of(said(1, "veg", 10)), said(2, None, 5))


def test_an_explicit_valid_to_ends_only_its_own_statement() -> None:
    state = state_of(said(1, "berlin", 10, 15), said(2, "lisbon", 20))
    assert timeline(state) == [("f1", "berlin", 10, 15), ("f2", "lisbon", 20, OPEN)]
    assert state.versions[0].end is not None
    assert state.versions[0].end.kind is ReasonKind.EXPIRED
    clipped = state_of(said(1, "berlin", 10, 25), said(2, "lisbon", 20))
    assert timeline(clipped) == [("f1", "berlin", 10, 20), ("f2", "lisbon", 20, OPEN)]


def test_a_flip_flop_keeps_three_versions() -> None:
    state = state_of(said(1, "cola", 10), said(2, "coffee", 20), said(3, "cola", 30))
    assert [v.value for v in state.versions] == ["cola", "coffee", "cola"]


def test_withdrawing_the_middle_value_merges_its_neighbours() -> None:
    state = state_of(said(1, "cola", 10), said(2, "coffee", 20), said(3, "cola", 30))
    plan = plan_withdrawal(
        state, {2: state.versions[0].end or pytest.fail("no end")}, Decision.WITHDRAWN
    )
    assert plan.after is not None
    assert timeline(plan.after) == [("f1", "cola", 10, OPEN)]
    kinds = {v.fact_id: reason.kind for v, reason in plan.retire_versions}
    assert kinds["f3"] is ReasonKind.MERGED
    assert kinds["f1"] is ReasonKind.REVISED


def test_plans_do_not_mutate_their_inputs() -> None:
    state = state_of(said(1, "berlin", 10), said(2, "lisbon", 20))
    frozen = copy.deepcopy(state)
    plan_statement(state, said(3, "porto", 15))
    plan_withdrawal(state, {1: state.versions[0].end or pytest.fail("no end")}, Decision.WITHDRAWN)
    assert state == frozen


statements = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", None]),
        st.integers(0, 20),
        st.one_of(st.none(), st.integers(1, 5)),
    ),
    max_size=12,
).map(
    lambda rows: [
        said(seq, value, start, None if length is None else start + length)
        for seq, (value, start, length) in enumerate(rows, start=1)
    ]
)


@given(statements)
def test_versions_are_ordered_disjoint_maximal_and_named_by_a_supporter(
    given_statements: list[Statement],
) -> None:
    versions = derive_versions(given_statements)
    for earlier, later in itertools.pairwise(versions):
        assert earlier.valid_to <= later.valid_from
        assert not (earlier.valid_to == later.valid_from and earlier.value == later.value)
    for version in versions:
        assert version.valid_from < version.valid_to
        supporters = [
            s
            for s in given_statements
            if s.value == version.value and version.valid_from <= s.valid_from < version.valid_to
        ]
        assert version.fact_id == min(supporters, key=lambda s: s.seq).fact_id
        assert (version.end is None) == (version.valid_to == OPEN)


@given(statements)
def test_versions_do_not_depend_on_input_order(given_statements: list[Statement]) -> None:
    assert derive_versions(given_statements) == derive_versions(list(reversed(given_statements)))


@given(statements, st.sampled_from(["a", "b", None]), st.integers(1, 5))
def test_planning_a_newer_statement_on_the_tail_equals_a_full_derivation(
    given_statements: list[Statement], value: str | None, gap: int
) -> None:
    state = state_of(*given_statements)
    newest = max((s.valid_from for s in given_statements), default=0)
    incoming = said(len(given_statements) + 1, value, newest + gap)
    expected = derive_versions([*given_statements, incoming])
    try:
        full = plan_statement(state, incoming)
    except NothingToRetractError:
        return
    assert full.after is not None
    assert [v.identity() for v in full.after.versions] == [v.identity() for v in expected]
    tail = plan_statement(state.tail(), incoming)
    assert tail.after is not None
    start = tail.after.versions[0].valid_from if tail.after.versions else None
    assert [v.identity() for v in tail.after.versions] == [
        v.identity() for v in expected if start is not None and v.valid_from >= start
    ]
    assert tail.decision is full.decision


@given(
    statements,
    st.sampled_from(["a", "b", None]),
    st.integers(0, 26),
    st.one_of(st.none(), st.integers(1, 5)),
)
def test_planning_a_late_statement_on_the_suffix_before_it_equals_the_full_plan(
    given_statements: list[Statement], value: str | None, start: int, length: int | None
) -> None:
    # broke (slow, not wrong): a statement older than the newest stored one read and
    # re-derived its whole stream, so writers sharing keys slowed down as streams grew
    state = state_of(*given_statements)
    incoming = said(
        len(given_statements) + 1, value, start, None if length is None else start + length
    )
    try:
        full = plan_statement(state, incoming)
    except NothingToRetractError:
        with pytest.raises(NothingToRetractError):
            plan_statement(state.before(start), incoming)
        return
    suffix = state.before(start)
    assert suffix.covers(start)
    part = plan_statement(suffix, incoming)
    assert part.decision is full.decision
    assert (part.add_statement, part.retire_statements) == (
        full.add_statement,
        full.retire_statements,
    )
    assert set(part.retire_versions) == set(full.retire_versions)
    assert set(part.add_versions) == set(full.add_versions)
    assert full.after is not None
    assert part.after is not None
    cut = suffix.start if suffix.start is not None else -1
    assert [v.identity() for v in part.after.versions] == [
        v.identity() for v in full.after.versions if v.valid_from >= cut
    ]
    if not suffix.complete:
        assert all(v.valid_from >= cut for v in suffix.versions)
        assert len(suffix.versions) < len(state.versions)


def test_a_partial_state_refuses_what_it_cannot_plan() -> None:
    state = state_of(said(1, "a", 10), said(2, "b", 20)).tail()
    assert not state.complete
    with pytest.raises(InvalidOperationError):
        plan_statement(state, said(3, "c", 15))
    with pytest.raises(InvalidOperationError):
        plan_withdrawal(state, {2: Reason(ReasonKind.WITHDRAWN, None, "x")}, Decision.WITHDRAWN)
