"""The conformance suite every vector index passes: subclass and implement ``make_index``."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared_core.clock import OPEN
from shared_core.errors import (
    EmbedderMismatchError,
    InvalidInputError,
    InvalidOperationError,
    VectorIndexError,
)
from shared_core.filters import Filter, all_of, any_of, matches, where
from shared_core.index import IndexMatch, VectorIndex
from shared_core.ledger.results import ChangeCursor, VersionRecord

DIM = 8
NOW = 1_000  # every record below is recorded at or before NOW
EMBEDDER = "test-embedder"


def rec(
    row_id: int,
    fact_id: str | None = None,
    *,
    namespace: str = "default",
    valid_from: int = 0,
    valid_to: int = OPEN,
    recorded_at: int = 0,
    retired_at: int = OPEN,
) -> VersionRecord:
    fact_id = fact_id if fact_id is not None else f"fact-{row_id}"
    return VersionRecord(
        row_id,
        fact_id,
        namespace,
        f"text of {fact_id}",
        valid_from,
        valid_to,
        recorded_at,
        retired_at,
    )


def axis(i: int, *, scale: float = 1.0) -> list[float]:
    vector = [0.0] * DIM
    vector[i] = scale
    return vector


def mix(a: int, b: int, weight: float) -> list[float]:
    """A unit vector between axes ``a`` and ``b`` (weight 0: all ``a``)."""
    vector = [0.0] * DIM
    vector[a], vector[b] = math.cos(weight * math.pi / 2), math.sin(weight * math.pi / 2)
    return vector


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    nu, nv = math.sqrt(sum(x * x for x in u)), math.sqrt(sum(x * x for x in v))
    if nu == 0 or nv == 0:
        return 0.0
    return sum(x * y for x, y in zip(u, v, strict=True)) / (nu * nv)


def rows(matches: list[IndexMatch]) -> list[int]:
    return [m.row_id for m in matches]


def current(index: VectorIndex, vector: Sequence[float], k: int, **options: object) -> list[int]:
    """Row ids of a current-state search (valid now, as known now) unless told otherwise."""
    query: dict[str, object] = {"namespace": "default", "valid_at": NOW, "known_at": None}
    query.update(options)
    return rows(index.search(vector, k=k, **query))  # type: ignore[arg-type]


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[list[VersionRecord]], dict[str, list[float]]]:
    """Small random record sets applied in a few batches (later batches may retire rows)."""
    count = draw(st.integers(1, 30))
    facts = draw(st.integers(1, count))
    vectors = {
        f"f{i}": draw(
            st.lists(st.integers(-2, 2), min_size=DIM, max_size=DIM)
            .filter(any)
            .map(lambda v: [float(x) for x in v])
        )
        for i in range(facts)
    }
    batches: list[list[VersionRecord]] = [[]]
    for row_id in range(1, count + 1):
        valid_from = draw(st.one_of(st.integers(0, 10), st.integers(0, 10), st.integers(11, 20)))
        recorded_at = draw(st.integers(0, 10))
        length = draw(st.one_of(st.none(), st.none(), st.integers(1, 4)))
        record = rec(
            row_id,
            f"f{draw(st.integers(0, facts - 1))}",
            namespace=draw(st.sampled_from(["default", "default", "other"])),
            valid_from=valid_from,
            valid_to=OPEN if length is None else valid_from + length,
            recorded_at=recorded_at,
        )
        record = replace(record, attributes=draw(attribute_sets))
        batches[-1].append(record)
        if draw(st.integers(0, 3)) == 0:  # retired later, in record time
            retired = replace(record, retired_at=recorded_at + draw(st.integers(1, 6)))
            batches.append([retired])
        if draw(st.integers(0, 4)) == 0:
            batches.append([])
    if draw(st.booleans()):  # an older state again: it replaces the newer one (back to live)
        batches.append(list(draw(st.sampled_from(batches))))
    return batches, vectors


ATTRIBUTE_VALUES = st.one_of(
    st.sampled_from(["red", "blue", "1"]), st.integers(-2, 2), st.sampled_from([0.5, 1.0, True])
)
attribute_sets = st.dictionaries(st.sampled_from(["colour", "n"]), ATTRIBUTE_VALUES, max_size=2)
conditions = st.one_of(
    st.builds(where, st.sampled_from(["colour", "n"]), st.sampled_from(["==", "!="]),
              ATTRIBUTE_VALUES),
    st.builds(where, st.just("n"), st.sampled_from([">", ">=", "<", "<="]),
              st.one_of(st.integers(-2, 2), st.just(0.5))),
    st.builds(where, st.sampled_from(["colour", "n"]), st.sampled_from(["in", "nin"]),
              st.one_of(st.lists(st.sampled_from(["red", "1"]), min_size=1, max_size=2),
                        st.lists(st.integers(-2, 2), min_size=1, max_size=2))),
)  # fmt: skip
filters = st.one_of(
    st.none(),
    conditions,
    st.lists(conditions, min_size=1, max_size=3).map(lambda c: all_of(*c)),
    st.lists(conditions, min_size=1, max_size=3).map(lambda c: any_of(*c)),
)

queries = st.tuples(
    st.lists(st.integers(-2, 2), min_size=DIM, max_size=DIM).filter(any),
    st.integers(1, 6),
    st.sampled_from(["default", "other"]),
    st.one_of(st.none(), st.integers(-1, 26), st.integers(11, 20)),  # often the fast path
    st.one_of(st.none(), st.none(), st.integers(-1, 18)),
    filters,
)


class IndexConformance:
    """Behaviour every :class:`VectorIndex` must have (see shared_core/index/base.py)."""

    examples = 40

    def make_index(self) -> AbstractContextManager[VectorIndex]:
        """A fresh, empty, unbound index (closed and cleaned up on exit)."""
        raise NotImplementedError

    @pytest.fixture
    def fresh(self) -> Iterator[VectorIndex]:
        with self.make_index() as index:
            yield index

    @pytest.fixture
    def index(self, fresh: VectorIndex) -> VectorIndex:
        fresh.bind(embedder=EMBEDDER, dimension=DIM)
        return fresh

    # ------------------------------------------------------------ the oracle
    def test_matches_a_brute_force_visibility_filter(self) -> None:
        @settings(
            max_examples=self.examples,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(history=histories(), asked=st.lists(queries, min_size=1, max_size=6))
        def compare(
            history: tuple[list[list[VersionRecord]], dict[str, list[float]]],
            asked: list[tuple[list[int], int, str, int | None, int | None, Filter | None]],
        ) -> None:
            batches, vectors = history
            latest: dict[int, VersionRecord] = {}
            with self.make_index() as index:
                index.bind(embedder=EMBEDDER, dimension=DIM)
                for number, batch in enumerate(batches):
                    index.apply(batch, vectors, ChangeCursor(number, number))
                    latest.update((r.row_id, r) for r in batch)
                assert index.count() == len(latest)
                assert index.row_ids() == set(latest)
                for raw, k, namespace, valid_at, known_at, condition in asked:
                    query = [float(x) for x in raw]
                    visible = [
                        r
                        for r in latest.values()
                        if r.namespace == namespace
                        and r.visible(valid_at, known_at)
                        and matches(condition, r.attributes)
                    ]
                    caller_check = _row_check({r.row_id for r in visible})
                    lister = RowsListed(
                        {r.row_id for r in visible},
                        {
                            r.row_id
                            for r in latest.values()
                            if r.namespace == namespace and r.visible(valid_at, known_at)
                        },
                    )
                    for rows_only, check in (
                        (False, None),
                        (True, None),
                        (True, caller_check),
                        (True, lister),
                    ):
                        found = index.search(
                            query,
                            k=k,
                            namespace=namespace,
                            valid_at=valid_at,
                            known_at=known_at,
                            where=condition,
                            rows_only=rows_only,
                            visible_rows=check,
                        )
                        check_top_k(found, visible, vectors, query, k)
                        for match in found:  # a fact id, when given, is the row's
                            named = match.fact_id
                            assert named == latest[match.row_id].fact_id or (
                                rows_only and named is None
                            )

        compare()

    # ------------------------------------------------------------ binding and the cursor
    def test_is_a_vector_index(self, fresh: VectorIndex) -> None:
        assert isinstance(fresh, VectorIndex)
        assert fresh.count() == 0
        assert fresh.row_ids() == set()
        assert fresh.search(axis(0), k=3, namespace="default", valid_at=None, known_at=None) == []

    def test_bind_records_the_embedder_and_refuses_another(self, index: VectorIndex) -> None:
        index.bind(embedder=EMBEDDER, dimension=DIM)  # the same again: fine
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 1))
        with pytest.raises(EmbedderMismatchError, match=rf"{EMBEDDER}.*other-model"):
            index.bind(embedder="other-model", dimension=DIM)
        with pytest.raises(EmbedderMismatchError, match=rf"{DIM}.*{DIM + 1}"):
            index.bind(embedder=EMBEDDER, dimension=DIM + 1)
        index.bind(embedder=EMBEDDER, dimension=DIM)  # nothing changed
        assert current(index, axis(0), 5) == [1]

    def test_bind_checks_its_arguments(self, fresh: VectorIndex) -> None:
        with pytest.raises(InvalidInputError, match="embedder"):
            fresh.bind(embedder=" ", dimension=DIM)
        with pytest.raises(InvalidInputError, match="dimension"):
            fresh.bind(embedder=EMBEDDER, dimension=0)
        fresh.bind(embedder=EMBEDDER, dimension=DIM)

    def test_records_need_a_bound_index_but_a_cursor_does_not(self, fresh: VectorIndex) -> None:
        with pytest.raises(InvalidOperationError, match="bind"):
            fresh.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 1))
        fresh.apply([], {}, ChangeCursor(3, 4))
        assert fresh.cursor() == ChangeCursor(3, 4)
        assert fresh.count() == 0

    def test_the_cursor_round_trips(self, index: VectorIndex) -> None:
        assert index.cursor() == ChangeCursor()
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 5))
        assert index.cursor() == ChangeCursor(1, 5)
        index.apply([], {}, ChangeCursor(7, 2**62))
        assert index.cursor() == ChangeCursor(7, 2**62)
        with pytest.raises(InvalidInputError, match="cursor"):
            index.apply([], {}, (1, 2))  # type: ignore[arg-type]

    # ------------------------------------------------------------ applying
    def test_apply_is_idempotent(self, index: VectorIndex) -> None:
        batch = [rec(1), rec(2, valid_to=500), rec(3, retired_at=10), rec(1)]
        vectors = {"fact-1": axis(0), "fact-2": axis(1), "fact-3": axis(2)}
        for _ in range(3):
            index.apply(batch, vectors, ChangeCursor(3, 10))
            assert index.count() == 3
            assert index.row_ids() == {1, 2, 3}
            assert current(index, axis(0), 5) == [1]
            assert sorted(current(index, axis(0), 5, valid_at=None, known_at=5)) == [1, 2, 3]

    def test_a_retired_row_leaves_the_current_state_but_stays_in_history(
        self, index: VectorIndex
    ) -> None:
        index.apply(
            [rec(1, recorded_at=10), rec(2)],
            {"fact-1": axis(0), "fact-2": axis(1)},
            ChangeCursor(2, 10),
        )
        assert current(index, axis(0), 1) == [1]
        index.apply([rec(1, recorded_at=10, retired_at=20)], {}, ChangeCursor(2, 20))
        assert index.count() == 2
        assert current(index, axis(0), 1) == [2]
        assert current(index, axis(0), 1, known_at=15) == [1]  # what was believed then
        assert current(index, axis(0), 1, known_at=25) == [2]
        assert current(index, axis(0), 1, valid_at=None, known_at=15) == [1]
        assert index.vectors(["fact-1"]) == {"fact-1": pytest.approx(axis(0))}

    def test_a_closed_validity_is_history(self, index: VectorIndex) -> None:
        index.apply(
            [rec(1, valid_from=0, valid_to=100), rec(2, valid_from=100)],
            {"fact-1": axis(0), "fact-2": axis(1)},
            ChangeCursor(2, 0),
        )
        assert current(index, axis(0), 1) == [2]
        assert current(index, axis(0), 1, valid_at=50) == [1]
        assert current(index, axis(0), 1, valid_at=100) == [2]
        assert current(index, axis(0), 1, valid_at=None) == [1]

    # ------------------------------------------------------------ visibility
    def test_visibility_at_every_valid_and_record_time(self, index: VectorIndex) -> None:
        records = [
            rec(1, valid_from=0, valid_to=50, recorded_at=10),
            rec(2, valid_from=50, recorded_at=20),
            rec(3, valid_from=0, recorded_at=5, retired_at=30),  # corrected at 30
            rec(4, valid_from=30, valid_to=60, recorded_at=40, retired_at=70),
            rec(5, valid_from=2_000, recorded_at=60),  # future-dated
            rec(6, valid_from=-10, recorded_at=0),
        ]
        vectors = {r.fact_id: mix(0, 1, i / 10) for i, r in enumerate(records)}
        index.apply(records, vectors, ChangeCursor(6, 70))
        times = [None, -20, -10, 0, 5, 10, 29, 30, 45, 50, 59, 60, 69, 70, NOW, 2_000, 3_000]
        for valid_at in times:
            for known_at in times:
                expected = {r.row_id for r in records if r.visible(valid_at, known_at)}
                found = current(index, axis(0), 10, valid_at=valid_at, known_at=known_at)
                assert set(found) == expected, (valid_at, known_at)
                assert len(found) == len(expected)

    @pytest.mark.parametrize("kind", ["retired", "ended", "future", "unrecorded"])
    def test_k_results_are_k_visible_results(self, index: VectorIndex, kind: str) -> None:
        """30 invisible near-duplicates nearer to the query than the 3 visible records."""
        hidden: dict[str, int] = {
            "retired": {"recorded_at": 10, "retired_at": 50},
            "ended": {"recorded_at": 10, "valid_to": 50},
            "future": {"recorded_at": 10, "valid_from": 5_000},
            "unrecorded": {"recorded_at": 900},
        }[kind]
        stale = [rec(i, "stale", **hidden) for i in range(1, 31)]
        visible = [rec(100 + i, f"visible-{i}", recorded_at=10) for i in range(3)]
        vectors = {"stale": mix(0, 1, 0.01)}
        vectors.update({f"visible-{i}": mix(0, 1, 0.3 + 0.1 * i) for i in range(3)})
        index.apply(stale + visible, vectors, ChangeCursor(102, 50))
        options = {"known_at": 500} if kind == "unrecorded" else {}
        assert current(index, axis(0), 3, **options) == [100, 101, 102]
        for valid_at, known_at in ((NOW, None), (60, 60), (NOW, NOW)):
            if kind == "unrecorded":
                known_at = 500
            found = current(index, axis(0), 3, valid_at=valid_at, known_at=known_at)
            assert found == [100, 101, 102], (valid_at, known_at)

    def test_future_dated_rows_appear_when_their_time_comes(self, index: VectorIndex) -> None:
        future = [
            rec(i, f"plan-{i}", valid_from=NOW + 100 * i, recorded_at=10) for i in range(1, 6)
        ]
        today = [rec(10 + i, f"now-{i}", recorded_at=10) for i in range(3)]
        vectors = {f"plan-{i}": mix(0, 1, 0.01 * i) for i in range(1, 6)}
        vectors.update({f"now-{i}": mix(0, 1, 0.5 + 0.1 * i) for i in range(3)})
        index.apply(future + today, vectors, ChangeCursor(12, 10))
        assert current(index, axis(0), 2) == [10, 11]
        assert current(index, axis(0), 2, rows_only=True) == [10, 11]
        assert current(index, axis(0), 3, valid_at=NOW + 250) == [1, 2, 10]
        assert current(index, axis(0), 3, valid_at=NOW + 250, rows_only=True) == [1, 2, 10]
        assert current(index, axis(0), 8, valid_at=NOW + 10_000) == [1, 2, 3, 4, 5, 10, 11, 12]
        assert current(index, axis(0), 2, valid_at=None) == [1, 2]
        index.apply([replace(future[0], retired_at=20)], {}, ChangeCursor(12, 20))
        assert current(index, axis(0), 1, valid_at=NOW + 250) == [2]
        assert current(index, axis(0), 3) == [10, 11, 12]

    def test_namespaces_never_see_each_other(self, index: VectorIndex) -> None:
        index.apply(
            [
                rec(1, "shared"),
                rec(2, "shared", namespace="tenant-b"),
                rec(3, namespace="tenant-b"),
            ],
            {"shared": axis(0), "fact-3": axis(1)},
            ChangeCursor(3, 0),
        )
        assert current(index, axis(0), 5) == [1]
        assert current(index, axis(0), 5, namespace="tenant-b") == [2, 3]
        assert current(index, axis(0), 5, namespace="nobody") == []
        assert current(index, axis(0), 5, namespace="tenant-b", valid_at=None, known_at=0) == [2, 3]

    def test_scores_are_cosine_similarities(self, index: VectorIndex) -> None:
        index.apply(
            [rec(1), rec(2), rec(3)],
            {"fact-1": axis(0, scale=3.0), "fact-2": mix(0, 1, 0.5), "fact-3": axis(1)},
            ChangeCursor(3, 0),
        )
        found = index.search(
            axis(0, scale=0.5), k=3, namespace="default", valid_at=NOW, known_at=None
        )
        assert rows(found) == [1, 2, 3]
        assert [m.fact_id for m in found] == ["fact-1", "fact-2", "fact-3"]
        assert [m.score for m in found] == pytest.approx([1.0, math.sqrt(0.5), 0.0], abs=1e-5)

    # ------------------------------------------------------------ vectors, rows, removal
    def test_vectors_are_kept_per_fact_and_reused(self, index: VectorIndex) -> None:
        index.apply(
            [rec(1, "a"), rec(2, "b")], {"a": axis(0), "b": axis(1, scale=2.0)}, ChangeCursor(2, 0)
        )
        assert index.vectors(["b", "a", "unknown", "a"]) == {
            "a": pytest.approx(axis(0)),
            "b": pytest.approx(axis(1, scale=2.0)),
        }
        assert index.vectors([]) == {}
        index.apply(
            [rec(1, "a", retired_at=5), rec(3, "a", valid_from=5, recorded_at=5)],
            {},
            ChangeCursor(3, 5),
        )
        assert current(index, axis(0), 1) == [3]

    def test_row_ids_remove_and_count(self, index: VectorIndex) -> None:
        records = [
            rec(1),
            rec(2, retired_at=3),
            rec(3, namespace="b"),
            rec(4, "fact-1", valid_to=9),
        ]
        vectors = {r.fact_id: axis(r.row_id) for r in records}
        index.apply(records, vectors, ChangeCursor(4, 3))
        assert (index.count(), index.row_ids()) == (4, {1, 2, 3, 4})
        index.remove([2, 3, 99])
        assert (index.count(), index.row_ids()) == (2, {1, 4})
        assert current(index, axis(3), 5, namespace="b", valid_at=None) == []
        assert set(index.vectors(["fact-1", "fact-2", "fact-3"])) == {"fact-1"}
        index.remove([1, 4])
        assert index.count() == 0
        assert index.vectors(["fact-1"]) == {}
        index.remove([])

    # ------------------------------------------------------------ refused input
    def test_a_bad_dimension_is_refused_and_nothing_changes(self, index: VectorIndex) -> None:
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
        with pytest.raises(InvalidInputError, match=r"fact-3.*dimension") as caught:
            index.apply(
                [rec(2), rec(3)],
                {"fact-2": axis(1), "fact-3": [1.0] * (DIM + 1)},
                ChangeCursor(3, 9),
            )
        assert "fact-3" in caught.value.field
        with pytest.raises(InvalidInputError, match="fact-2"):
            index.apply([rec(2)], {"fact-2": [math.nan] * DIM}, ChangeCursor(3, 9))
        self._unchanged(index)

    def test_a_missing_vector_is_refused_and_nothing_changes(self, index: VectorIndex) -> None:
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
        with pytest.raises(InvalidInputError, match="fact-9") as caught:
            index.apply(
                [rec(2), rec(1, retired_at=5), rec(9)], {"fact-2": axis(1)}, ChangeCursor(9, 9)
            )
        assert "fact-9" in caught.value.field
        self._unchanged(index)

    @staticmethod
    def _unchanged(index: VectorIndex) -> None:
        assert (index.count(), index.row_ids(), index.cursor()) == (1, {1}, ChangeCursor(1, 0))
        assert current(index, axis(1), 5) == [1]

    def test_search_checks_its_arguments(self, index: VectorIndex) -> None:
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
        with pytest.raises(InvalidInputError, match="k"):
            index.search(axis(0), k=0, namespace="default", valid_at=None, known_at=None)
        with pytest.raises(InvalidInputError, match="vector"):
            index.search([1.0, 0.0], k=1, namespace="default", valid_at=None, known_at=None)
        with pytest.raises(InvalidInputError, match="valid_at"):
            index.search(axis(0), k=1, namespace="default", valid_at=OPEN, known_at=None)

    def test_close_is_idempotent_and_final(self, index: VectorIndex) -> None:
        index.close()
        index.close()
        with pytest.raises(VectorIndexError, match="closed"):
            index.count()


def check_top_k(
    found: list[IndexMatch],
    visible: list[VersionRecord],
    vectors: dict[str, list[float]],
    query: list[float],
    k: int,
) -> None:
    """``found`` is an exact top-k of ``visible`` by cosine (ties may come in any order)."""
    truth = {r.row_id: cosine(query, vectors[r.fact_id]) for r in visible}
    assert len(found) == min(k, len(visible))
    assert len({m.row_id for m in found}) == len(found)
    for match in found:
        assert match.row_id in truth, "an invisible row was returned"
        assert match.score == pytest.approx(truth[match.row_id], abs=1e-4)
    scores = [m.score for m in found]
    assert all(a >= b - 1e-4 for a, b in pairwise(scores))
    if found:
        kth_best = sorted(truth.values(), reverse=True)[len(found) - 1]
        assert scores[-1] >= kth_best - 1e-4


def _row_check(visible: set[int]) -> Callable[[Sequence[int]], set[int]]:
    """A caller's check of visibility (``visible_rows``) that knows the visible rows."""
    return lambda rows: {row for row in rows if row in visible}


@dataclass
class RowsListed:
    """A caller's check of visibility that can also list its rows (a ``RowLister``): it keeps
    ``visible``, and lists ``listed`` (the rows visible before a ``where``, a superset)."""

    visible: set[int]
    listed: set[int]
    asked: list[int] = field(default_factory=list)  # each limit it was asked to list under

    def __call__(self, rows: Sequence[int]) -> set[int]:
        return {row for row in rows if row in self.visible}

    def list_rows(self, limit: int) -> list[int] | None:
        self.asked.append(limit)
        return sorted(self.listed) if len(self.listed) <= limit else None
