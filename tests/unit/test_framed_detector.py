"""The framed kappa detector: only same-subject, same-attribute pairs reach the scorer, in one
call per read, with readings and verdicts kept; write-time verdicts; sync and async agree. A
counting fake scorer and a fake frame head (a vector *is* its attribute distribution)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_core.detectors import (
    FramedConflictDetector,
    InMemoryReadings,
    InMemoryVerdicts,
    NLIConflictDetector,
    Reading,
    comparable,
)
from shared_core.detectors.frames import FrameProfile
from shared_core.errors import InvalidInputError
from shared_core.phi_t import Candidate, atemporal_dominance, temporal_dominance

T0 = datetime(2024, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
CITY, JOB = (1.0, 0.0), (0.0, 1.0)


class CountingScorer:
    """Every pair ends the older one unless its newer text says "still"; counts calls."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(list(pairs))
        return [0.1 if "still" in newer else 0.9 for _, newer in pairs]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [pair for call in self.calls for pair in call]


class FakeFrames:
    """A vector is read as the statement's attribute distribution; counts texts read."""

    def __init__(self) -> None:
        self.read = 0

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        self.read += len(vectors)
        return [FrameProfile(state=1.0, frame=None, attributes=tuple(v)) for v in vectors]


def first_word(text: str) -> str | None:
    return text.split()[0].lower()


def cand(id: str, text: str, day: int | None, **metadata: Any) -> Candidate:
    return Candidate(
        id=id, text=text, timestamp=None if day is None else T0 + day * DAY, metadata=metadata
    )


def detector(
    frames: FakeFrames | None = None, **options: Any
) -> tuple[FramedConflictDetector, CountingScorer, FakeFrames]:
    scorer, frames = CountingScorer(), FakeFrames() if frames is None else frames
    built = FramedConflictDetector(
        scorer,
        frames=frames,
        threshold=0.5,
        agreement_threshold=0.9,
        subject_of=first_word,
        **options,
    )
    return built, scorer, frames


def remembered(
    found: FramedConflictDetector, pool: Sequence[Candidate], attributes: Sequence[Any]
) -> None:
    found.remember([c.text for c in pool], list(attributes))


POOL = [
    cand("a1", "Ana lives in Lisbon", 1),
    cand("b1", "Ben lives in Oslo", 2),
    cand("a2", "Ana lives in Porto", 3),
    cand("a3", "Ana works at Acme", 4),
    cand("b2", "Ben lives in Rome", 5),
]
POOL_ATTRIBUTES = [CITY, CITY, CITY, JOB, CITY]


def test_pairs_with_different_subjects_are_never_scored() -> None:
    found, scorer, _ = detector()
    remembered(found, POOL, POOL_ATTRIBUTES)
    result = temporal_dominance(POOL, found)
    assert {first_word(older) for older, _ in scorer.pairs} == {"ana", "ben"}
    assert all(first_word(older) == first_word(newer) for older, newer in scorer.pairs)
    assert sorted(c.id for c in result.kept) == ["a2", "a3", "b2"]


def test_pairs_stating_different_attributes_are_never_scored() -> None:
    found, scorer, _ = detector()
    remembered(found, POOL, POOL_ATTRIBUTES)
    temporal_dominance(POOL, found)
    assert ("Ana lives in Porto", "Ana works at Acme") not in scorer.pairs
    assert ("Ana lives in Lisbon", "Ana works at Acme") not in scorer.pairs
    assert found.last_counts.considered == 10
    assert found.last_counts.compared == 2  # (a1, a2) and (b1, b2)


def test_one_scorer_call_per_read_however_many_pairs() -> None:
    found, scorer, _ = detector()
    pool = [cand(f"a{i}", f"Ana lives in city {i}", i) for i in range(6)]
    remembered(found, pool, [CITY] * len(pool))
    temporal_dominance(pool, found)
    assert len(scorer.calls) == 1
    assert len(scorer.calls[0]) == 15
    assert found.last_counts.calls == 1


def test_a_repeated_read_hits_the_verdict_cache() -> None:
    found, scorer, _ = detector()
    remembered(found, POOL, POOL_ATTRIBUTES)
    first = temporal_dominance(POOL, found)
    second = temporal_dominance(list(reversed(POOL)), found)
    assert len(scorer.calls) == 1
    assert found.last_counts.cached == found.last_counts.compared == 2
    assert found.last_counts.scored == found.last_counts.calls == 0
    assert {c.id for c in first.kept} == {c.id for c in second.kept}


async def test_sync_and_async_agree() -> None:
    sync, _, _ = detector()
    asynchronous, scorer, _ = detector()
    for built in (sync, asynchronous):
        remembered(built, POOL, POOL_ATTRIBUTES)
    expected = temporal_dominance(POOL, sync)
    got = await atemporal_dominance(POOL, asynchronous)
    assert got == expected
    assert len(scorer.calls) == 1
    again = await atemporal_dominance(POOL, asynchronous)
    assert again == expected
    assert len(scorer.calls) == 1


def test_statements_of_two_speakers_are_never_compared() -> None:
    found, scorer, _ = detector(speaker_field="speaker")
    pool = [
        cand("x", "I live in Lisbon", 1, speaker="ana"),
        cand("y", "I live in Oslo", 2, speaker="ben"),
        cand("z", "I live in Porto", 3, speaker="ana"),
    ]
    remembered(found, pool, [CITY] * 3)
    result = temporal_dominance(pool, found)
    assert scorer.pairs == [("I live in Lisbon", "I live in Porto")]
    assert [c.id for c in result.kept] == ["y", "z"]


def test_a_text_never_remembered_is_read_from_its_vector_or_not_compared() -> None:
    blind, blind_scorer, _ = detector()
    assert temporal_dominance(POOL, blind).kept == tuple(POOL)
    assert blind_scorer.calls == []
    stored = dict(zip([c.id for c in POOL], POOL_ATTRIBUTES, strict=True))
    lookups: list[list[str]] = []

    def vectors(ids: Sequence[str]) -> dict[str, Any]:
        lookups.append(list(ids))
        return {i: stored[i] for i in ids if i != "b1"}

    found, scorer, frames = detector(vectors=vectors)
    result = temporal_dominance(POOL, found)
    assert sorted(c.id for c in result.kept) == ["a2", "a3", "b1", "b2"]  # b1 unread: kept
    assert scorer.pairs == [("Ana lives in Lisbon", "Ana lives in Porto")]
    temporal_dominance(POOL, found)
    assert frames.read == 4  # read once, then kept
    assert lookups == [[c.id for c in POOL], ["b1"]]


def test_remember_reads_each_text_once() -> None:
    found, _, frames = detector()
    remembered(found, POOL, POOL_ATTRIBUTES)
    remembered(found, POOL, POOL_ATTRIBUTES)
    assert frames.read == len(POOL)


def test_write_time_verdicts_leave_reads_without_a_scorer_call() -> None:
    found, scorer, _ = detector(FakeFrames2())
    pool = [cand(f"a{i}", f"Ana lives in city {i}", i) for i in range(5)]
    pool += [cand("j", "Ana works at Acme", 9), cand("b", "Ben lives in Oslo", 9)]
    attributes = [CITY] * 5 + [JOB, CITY]
    vectors = [(*a, 0.01 * i) for i, a in enumerate(attributes)]
    scored = found.precompute(pool, vectors, neighbours=4)
    assert scored == 10  # every pair of the five cities, nothing else
    assert all(first_word(o) == "ana" and "Acme" not in o + n for o, n in scorer.pairs)
    calls = len(scorer.calls)
    result = temporal_dominance(pool[2:], found)
    assert len(scorer.calls) == calls
    assert found.last_counts.cached == found.last_counts.compared == 3
    assert sorted(c.id for c in result.kept) == ["a4", "b", "j"]


def test_on_unscored_keep_never_calls_the_scorer_at_read_time() -> None:
    found, scorer, _ = detector(on_unscored="keep")
    remembered(found, POOL, POOL_ATTRIBUTES)
    result = temporal_dominance(POOL, found)
    assert scorer.calls == []
    assert result.kept == tuple(POOL)  # a missed change, never a dropped fact
    assert found.last_counts.compared == 2
    assert found.last_counts.scored == 0


class FakeFrames2(FakeFrames):
    """Reads only the first two numbers of a vector (the rest place it for the cosine)."""

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        return super().profiles([tuple(v[:2]) for v in vectors])


def test_the_pair_rule_needs_both_readings_and_a_subject() -> None:
    older, newer = cand("o", "x", 1), cand("n", "y", 2)
    profile = FrameProfile(1.0, None, CITY)
    read = Reading("ana", profile)
    assert comparable(older, newer, read, read, agreement_threshold=0.9)
    assert not comparable(older, newer, None, read, agreement_threshold=0.9)
    assert not comparable(older, newer, Reading(None, profile), read, agreement_threshold=0.9)
    assert not comparable(older, newer, Reading("ana", None), read, agreement_threshold=0.9)
    assert not comparable(older, newer, read, Reading("ben", profile), agreement_threshold=0.9)


class StaticFrames(FakeFrames):
    """Reads a vector's first two numbers as the attribute distribution and its third as
    whether that attribute never changes (the frame card's ``static_labels``)."""

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        self.read += len(vectors)
        return [
            FrameProfile(state=1.0, frame=None, attributes=tuple(v[:2]), unchanging=v[2] > 0)
            for v in vectors
        ]


def test_a_reading_of_an_attribute_that_never_changes_is_never_dropped() -> None:
    # broke (make bench, synthetic prose, supersession + read-time Phi_T): a birthplace the
    # frame head read as the attribute of a newer city was scored and dropped (static -0.8 pt)
    older, newer = cand("o", "Ana was born in Lisbon", 1), cand("n", "Ana lives in Porto", 2)
    static = Reading("ana", FrameProfile(1.0, None, CITY, unchanging=True))
    changing = Reading("ana", FrameProfile(1.0, None, CITY))
    assert not comparable(older, newer, static, changing, agreement_threshold=0.9)
    assert not comparable(older, newer, changing, static, agreement_threshold=0.9)
    found, scorer, _ = detector(StaticFrames())
    found.remember([older.text, newer.text], [(*CITY, 1.0), (*CITY, 0.0)])
    result = temporal_dominance([older, newer], found)
    assert {c.id for c in result.kept} == {"o", "n"}
    assert scorer.pairs == []


def test_the_stores_forget_the_least_recently_used() -> None:
    verdicts = InMemoryVerdicts(size=2)
    verdicts.put_many({(b"a", b"b"): 0.1, (b"b", b"c"): 0.2})
    assert verdicts.get_many([(b"a", b"b")]) == {(b"a", b"b"): 0.1}
    verdicts.put_many({(b"c", b"d"): 0.3})
    assert verdicts.get_many([(b"a", b"b"), (b"b", b"c"), (b"c", b"d")]) == {
        (b"a", b"b"): 0.1,
        (b"c", b"d"): 0.3,
    }
    with pytest.raises(InvalidInputError, match="size"):
        InMemoryReadings(size=0)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"threshold": 0}, "threshold"),
        ({"agreement_threshold": 1.5}, "agreement_threshold"),
        ({"on_unscored": "drop"}, "on_unscored"),
        ({"vectors": 3}, "vectors"),
        ({"name": ""}, "name"),
    ],
)
def test_options_are_checked_naming_the_field(options: dict[str, Any], field: str) -> None:
    settings_ = {"threshold": 0.5, "agreement_threshold": 0.9, **options}
    with pytest.raises(InvalidInputError, match=field):
        FramedConflictDetector(CountingScorer(), frames=FakeFrames(), **settings_)
    with pytest.raises(InvalidInputError, match="frames"):
        FramedConflictDetector(
            CountingScorer(), frames=object(), threshold=0.5, agreement_threshold=0.9
        )  # type: ignore[arg-type]


class HashScorer:
    """A pair's score from a digest of its texts: some pairs conflict, some do not."""

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [hashlib.sha256(f"{o}|{n}".encode()).digest()[0] / 255 for o, n in pairs]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Ana", "Ben"]),
            st.sampled_from([CITY, JOB]),
            st.one_of(st.none(), st.integers(0, 4)),
        ),
        max_size=7,
    )
)
def test_the_pair_rule_never_drops_a_chunk_the_unfiltered_detector_keeps(
    rows: list[tuple[str, tuple[float, float], int | None]],
) -> None:
    pool = [cand(f"c{i}", f"{who} said {i}", day) for i, (who, _, day) in enumerate(rows)]
    framed = FramedConflictDetector(
        HashScorer(),
        frames=FakeFrames(),
        threshold=0.5,
        agreement_threshold=0.9,
        subject_of=first_word,
    )
    framed.remember([c.text for c in pool], [attribute for _, attribute, _ in rows])
    unfiltered = NLIConflictDetector(HashScorer(), threshold=0.5)
    kept = {c.id for c in temporal_dominance(pool, framed).kept}
    assert kept >= {c.id for c in temporal_dominance(pool, unfiltered).kept}
