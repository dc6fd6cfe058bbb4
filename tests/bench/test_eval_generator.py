"""The synthetic temporal-mutation generator: deterministic, and its ground truth is consistent."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import UTC

import pytest

from shared_core.errors import InvalidInputError
from shared_core.facts import Cardinality
from temporal_rag_bench.generator import (
    DEFAULT_RATIOS,
    full_profile,
    generate,
    profile,
    quick_profile,
)
from temporal_rag_bench.generator_build import render
from temporal_rag_bench.generator_families import (
    FAMILIES,
    PREFIXES,
    SUFFIXES,
    Role,
    Subject,
    families,
)
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    QuestionKind,
    Track,
    normalize_answer,
    states,
)

SEED = 7
MARKERS = (
    "now", "moved", "move", "anymore", "used to", "currently", "current", "new", "newly",
    "changed", "change", "switched", "switch", "former", "formerly", "previous", "previously",
    "latest", "recent", "recently", "no longer", "still", "update", "updated", "old", "older",
    "earlier", "since", "became", "as of", "these days", "nowadays", "today",
)  # fmt: skip


@pytest.fixture(scope="module")
def keyed() -> Dataset:
    return generate(track=Track.KEYED, seed=SEED, entities=30)


@pytest.fixture(scope="module")
def prose() -> Dataset:
    return generate(track=Track.PROSE, seed=SEED, entities=30)


def chain_chunks(dataset: Dataset) -> dict[tuple[str | None, str | None], list[Chunk]]:
    groups: dict[tuple[str | None, str | None], list[Chunk]] = defaultdict(list)
    for chunk in dataset.chunks:
        if chunk.kind is not ChunkKind.DISTRACTOR:
            groups[(chunk.entity, chunk.family)].append(chunk)
    return groups


# --- determinism -----------------------------------------------------------------------------


def test_same_seed_gives_an_identical_dataset() -> None:
    first = generate(track=Track.KEYED, seed=3, entities=20)
    again = generate(track=Track.KEYED, seed=3, entities=20)
    assert first == again
    assert [c.id for c in first.chunks] == [c.id for c in again.chunks]


def test_another_seed_gives_another_dataset() -> None:
    first = generate(track=Track.PROSE, seed=3, entities=20)
    other = generate(track=Track.PROSE, seed=4, entities=20)
    assert [c.text for c in first.chunks] != [c.text for c in other.chunks]
    assert [q.text for q in first.questions] != [q.text for q in other.questions]


def test_both_tracks_share_texts_times_and_questions(keyed: Dataset, prose: Dataset) -> None:
    assert [(c.id, c.text, c.timestamp, c.value) for c in keyed.chunks] == [
        (c.id, c.text, c.timestamp, c.value) for c in prose.chunks
    ]
    assert keyed.questions == prose.questions
    assert (keyed.track, prose.track) == (Track.KEYED, Track.PROSE)


# --- the tables ------------------------------------------------------------------------------


def test_at_least_ten_changing_families_each_with_five_phrasings() -> None:
    assert len(families(Role.CHANGING)) >= 10
    assert families(Role.STATIC)
    assert families(Role.MANY)
    for family in FAMILIES:
        assert len(family.phrasings) >= 5, family.relation
        assert len(set(family.phrasings)) == len(family.phrasings), family.relation
        assert len(family.values) >= 8, family.relation
        assert "{name}" in family.question, family.relation
        for phrasing in family.phrasings:
            assert "{name}" in phrasing, phrasing
            assert "{value}" in phrasing, phrasing
            assert phrasing.endswith("."), phrasing
            assert not phrasing.startswith("{value}"), phrasing


def test_values_are_distinct_and_never_inside_one_another() -> None:
    normalised = [normalize_answer(v) for family in FAMILIES for v in family.values]
    assert all(normalised)
    assert len(set(normalised)) == len(normalised)
    padded = [f" {v} " for v in normalised]
    for i, a in enumerate(padded):
        for j, b in enumerate(padded):
            assert i == j or a not in b, (a, b)


def test_relation_names_are_unique_and_people_and_projects_both_have_attributes() -> None:
    assert len({f.relation for f in FAMILIES}) == len(FAMILIES)
    for subject in Subject:
        assert families(Role.CHANGING, subject)
        assert families(Role.STATIC, subject)


def test_render_frames_the_sentence_and_keeps_names_capitalised() -> None:
    text = render(
        "{name} lives in {value}.", "Quick note: ", " (per the CRM)", name="Ada Lee", value="Oslo"
    )
    assert text == "Quick note: Ada Lee lives in Oslo (per the CRM)."
    text = render(
        "Home for {name} is {value}.", "For the record, ", "", name="Ada Lee", value="Oslo"
    )
    assert text == "For the record, home for Ada Lee is Oslo."
    assert render("{name} runs.", "", "", name="the X service", value="") == "The X service runs."


# --- texts and keys --------------------------------------------------------------------------


def test_no_text_carries_a_recency_marker(keyed: Dataset) -> None:
    pattern = re.compile(r"\b(" + "|".join(re.escape(m) for m in MARKERS) + r")\b", re.IGNORECASE)
    for chunk in keyed.chunks:
        assert not pattern.search(chunk.text), chunk.text
    for phrase in (*PREFIXES, *SUFFIXES):
        assert not pattern.search(phrase), phrase


def test_prose_chunks_carry_no_keys(prose: Dataset) -> None:
    assert not any(c.subject or c.relation or c.object is not None for c in prose.chunks)
    assert not any(c.keyed for c in prose.chunks)


def test_keyed_chunks_carry_entity_family_and_value(keyed: Dataset) -> None:
    for chunk in keyed.chunks:
        if chunk.kind is ChunkKind.DISTRACTOR:
            assert not chunk.keyed
            assert chunk.value is None
        else:
            assert (chunk.subject, chunk.relation, chunk.object) == (
                chunk.entity,
                chunk.family,
                chunk.value,
            )


def test_values_are_stated_in_the_text(keyed: Dataset) -> None:
    for chunk in keyed.chunks:
        if chunk.value is not None:
            assert chunk.value in chunk.text


def test_every_version_is_worded_from_one_shared_pool(keyed: Dataset) -> None:
    """Old and new statements differ only in the value: each text, with its value blanked,
    is one of the family's framed phrasings for that entity."""
    by_relation = {f.relation: f for f in FAMILIES}
    for chunk in keyed.chunks:
        if chunk.value is None or chunk.entity is None or chunk.family is None:
            continue
        family = by_relation[chunk.family]
        mention = chunk.entity if family.subject is Subject.PERSON else f"the {chunk.entity}"
        pool = {
            render(phrasing, prefix, suffix, name=mention, value="\x00")
            for phrasing in family.phrasings
            for prefix in PREFIXES
            for suffix in SUFFIXES
        }
        assert chunk.text.replace(chunk.value, "\x00") in pool, chunk.text


def test_distractors_state_no_answer(keyed: Dataset) -> None:
    answers = {a for q in keyed.questions for a in (*q.gold, *q.stale)}
    for chunk in keyed.chunks:
        if chunk.kind is ChunkKind.DISTRACTOR:
            assert not any(states(chunk, answer) for answer in answers), chunk.text


# --- ids, order, time ------------------------------------------------------------------------


def test_ids_order_and_timestamps(keyed: Dataset) -> None:
    assert len({c.id for c in keyed.chunks}) == len(keyed.chunks)
    assert len({q.id for q in keyed.questions}) == len(keyed.questions)
    assert [c.recorded_order for c in keyed.chunks] == list(range(len(keyed.chunks)))
    assert keyed.now.tzinfo is UTC
    for chunk in keyed.chunks:
        assert chunk.timestamp.tzinfo is UTC
        assert chunk.timestamp < keyed.now
    years = {c.timestamp.year for c in keyed.chunks}
    assert len(years) >= 3
    in_time = [c for c in keyed.chunks if not c.metadata.get("late")]
    assert in_time == sorted(in_time, key=lambda c: c.timestamp)


def test_cardinalities_cover_every_relation(keyed: Dataset) -> None:
    for family in FAMILIES:
        assert keyed.cardinalities[family.relation] is family.cardinality
    assert {q.family for q in keyed.questions if q.cell == "many"} <= {
        f.relation for f in families(Role.MANY)
    }


# --- questions against the chains -----------------------------------------------------------


def test_every_question_has_a_cell_and_its_fields(keyed: Dataset) -> None:
    cells = Counter(q.cell for q in keyed.questions)
    expected = {f"current:N={n}" for n in DEFAULT_RATIOS}
    expected |= {"static", "as_of", "many", "late", "flip_flop"}
    assert set(cells) == expected
    for question in keyed.questions:
        assert question.gold
        assert question.entity
        assert question.family
        if question.cell.startswith("current:") or question.cell in ("late", "flip_flop"):
            assert question.kind is QuestionKind.CURRENT
            assert question.ratio is not None
            assert 1 <= question.changes <= 4
        if question.cell == "static":
            assert question.kind is QuestionKind.STATIC
            assert not question.stale
            assert question.changes == 0
        if question.kind is QuestionKind.AS_OF:
            assert question.valid_at is not None
            assert question.text.startswith("As of ")


def test_current_gold_is_the_chain_s_last_value(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    for question in keyed.questions:
        if question.kind is not QuestionKind.CURRENT or question.cell == "many":
            continue
        chunks = groups[(question.entity, question.family)]
        newest = max(chunks, key=lambda c: c.timestamp)
        assert question.gold == (newest.value,)
        assert newest.value not in question.stale
        assert set(question.stale) == {c.value for c in chunks} - {newest.value}
        assert question.changes >= len(question.stale)


def test_ratio_cells_hold_n_stale_and_m_current_statements(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    seen = set()
    for question in keyed.questions:
        if not question.cell.startswith("current:N="):
            continue
        assert question.ratio is not None
        n, m = question.ratio
        assert question.cell == f"current:N={n}"
        assert m in (1, 2)
        chunks = groups[(question.entity, question.family)]
        assert sum(c.value in question.stale for c in chunks) == n
        assert sum(c.value == question.gold[0] for c in chunks) == m
        assert not question.flip_flop
        seen.add(n)
    assert seen == set(DEFAULT_RATIOS)


def test_stale_statements_of_a_ratio_chain_use_varied_wording(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    for question in keyed.questions:
        if question.cell == "current:N=100":
            texts = [c.text for c in groups[(question.entity, question.family)]]
            assert len(set(texts)) == len(texts)


def test_flip_flops_return_to_an_earlier_value(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    flips = [q for q in keyed.questions if q.cell == "flip_flop"]
    assert flips
    for question in flips:
        assert question.flip_flop
        assert question.changes >= 2
        chunks = sorted(groups[(question.entity, question.family)], key=lambda c: c.timestamp)
        runs = [c.value for i, c in enumerate(chunks) if i == 0 or c.value != chunks[i - 1].value]
        assert len(runs) > len(set(runs))  # some value comes back after another


def test_late_arrivals_are_older_but_ingested_after_the_current_value(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    late_questions = [q for q in keyed.questions if q.cell == "late"]
    assert late_questions
    for question in late_questions:
        chunks = groups[(question.entity, question.family)]
        late = [c for c in chunks if c.metadata.get("late")]
        current = [c for c in chunks if c.value == question.gold[0]]
        assert late
        assert current
        for chunk in late:
            assert chunk.value in question.stale
            assert chunk.timestamp < min(c.timestamp for c in current)
            assert chunk.recorded_order > max(c.recorded_order for c in current)
    late_keys = {(c.entity, c.family) for c in keyed.chunks if c.metadata.get("late")}
    assert late_keys == {(q.entity, q.family) for q in late_questions}


def test_as_of_gold_is_the_value_then(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    as_of = [q for q in keyed.questions if q.kind is QuestionKind.AS_OF]
    assert as_of
    for question in as_of:
        assert question.valid_at is not None
        chunks = groups[(question.entity, question.family)]
        before = [c for c in chunks if c.timestamp <= question.valid_at]
        assert before
        assert question.gold == (max(before, key=lambda c: c.timestamp).value,)
        assert question.gold[0] not in question.stale
        assert set(question.stale) == {c.value for c in chunks} - set(question.gold)
        newest = max(chunks, key=lambda c: c.timestamp)
        assert question.valid_at < newest.timestamp  # about the past


def test_static_facts_never_change(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    statics = [q for q in keyed.questions if q.cell == "static"]
    assert statics
    for question in statics:
        chunks = groups[(question.entity, question.family)]
        assert chunks
        assert {c.value for c in chunks} == set(question.gold)
        assert all(c.kind is ChunkKind.STATIC for c in chunks)


def test_many_questions_want_every_accumulated_value(keyed: Dataset) -> None:
    groups = chain_chunks(keyed)
    many = [q for q in keyed.questions if q.cell == "many"]
    assert many
    for question in many:
        assert question.family is not None
        assert keyed.cardinalities[question.family] is Cardinality.MANY
        chunks = groups[(question.entity, question.family)]
        assert set(question.gold) == {c.value for c in chunks}
        assert len(question.gold) >= 2
        assert not question.stale


# --- sizes, profiles, input checks -----------------------------------------------------------


def test_quick_profile_size() -> None:
    quick = quick_profile(0)
    keyed, prose = quick.datasets()
    assert 2000 <= len(keyed.chunks) <= 4000
    assert 300 <= len(keyed.questions) <= 600
    assert len(prose.chunks) == len(keyed.chunks)
    assert profile("quick", 0) == quick


def test_full_profile_is_ten_times_the_quick_one() -> None:
    full = full_profile(0).generate(Track.PROSE)
    quick = quick_profile(0).generate(Track.PROSE)
    assert 8 <= len(full.chunks) / len(quick.chunks) <= 12
    assert 8 <= len(full.questions) / len(quick.questions) <= 12


@pytest.mark.parametrize(
    "kwargs",
    [
        {"entities": 0},
        {"entities": 5, "ratios": ()},
        {"entities": 5, "ratios": (1, 0)},
        {"entities": 5, "ratios": (3, 3)},
        {"entities": 5, "distractors": -1},
        {"entities": 2, "per_ratio": 50},
        {"entities": 10_000},
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        generate(track=Track.KEYED, seed=0, **kwargs)  # type: ignore[arg-type]


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="quick"):
        profile("huge")


def test_small_and_custom_sizes() -> None:
    tiny = generate(track=Track.KEYED, seed=1, entities=3, ratios=(2,), distractors=0, as_of=0)
    assert not [c for c in tiny.chunks if c.kind is ChunkKind.DISTRACTOR]
    assert not [q for q in tiny.questions if q.kind is QuestionKind.AS_OF]
    assert {q.cell for q in tiny.questions if q.cell.startswith("current:")} == {"current:N=2"}
