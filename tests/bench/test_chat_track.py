"""The chat track (temporal_rag_bench.chat): several users' first-person messages, seeded and
deterministic, generated from the packaged tables in data/chat/."""

from __future__ import annotations

import itertools
import re
import string
from collections import defaultdict
from datetime import datetime
from importlib import resources
from pathlib import Path

import pytest

from shared_core.errors import InvalidInputError
from shared_core.facts import Cardinality
from temporal_rag_bench.chat import (
    CHANGE_ACTS,
    SIZES,
    SMALL_TALK,
    ChatSize,
    chat_statistics,
    generate_chat,
)
from temporal_rag_bench.chat_data import MULTI, SINGLE, SPLITS, STATIC, load_tables
from temporal_rag_bench.metrics import about
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    QuestionKind,
    Track,
    normalize_answer,
)
from temporal_rag_bench.profiles import DATASETS, KNOWN, PROFILES, load_datasets


@pytest.fixture(scope="module")
def chat() -> Dataset:
    return generate_chat(seed=7)


def timeline(dataset: Dataset) -> dict[tuple[str, str], list[Chunk]]:
    """(speaker, family) -> its STATE/STATIC chunks in time order."""
    found: dict[tuple[str, str], list[Chunk]] = defaultdict(list)
    for chunk in dataset.chunks:
        if chunk.kind is not ChunkKind.DISTRACTOR:
            assert chunk.speaker is not None
            assert chunk.family is not None
            found[(chunk.speaker, chunk.family)].append(chunk)
    return found


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


# --- the tables ----------------------------------------------------------------------------


def test_no_phrasing_is_shared_between_splits() -> None:
    tables = load_tables()
    phrasings = tables.phrasings()
    assert len({p.id for p in phrasings}) == len(phrasings)
    by_text: dict[str, set[str]] = defaultdict(set)
    for phrasing in phrasings:
        assert phrasing.split in SPLITS
        assert f".{phrasing.split}." in phrasing.id
        by_text[normalize_answer(phrasing.text)].add(phrasing.split)
    assert all(len(splits) == 1 for splits in by_text.values())


def test_every_family_has_many_phrasings_per_act_in_every_split() -> None:
    tables = load_tables()
    acts = {SINGLE: {"state", "change", "replace"}, MULTI: {"state", "add"}, STATIC: {"state"}}
    for family in tables.families:
        assert set(family.phrasings) == acts[family.kind], family.relation
        for act, pool in family.phrasings.items():
            assert len(pool) >= (8 if family.kind != STATIC else 10), (family.relation, act)
            assert all(family.pool(act, split) for split in SPLITS), (family.relation, act)
            wanted = {"value", "old"} if act == "replace" else {"value"}
            assert all(placeholders(p.text) == wanted for p in pool), (family.relation, act)
    assert len(tables.small_talk) >= 24
    assert {split for p in tables.small_talk for split in [p.split]} == set(SPLITS)


def test_values_are_distinct_and_none_holds_another_as_whole_words() -> None:
    for family in load_tables().families:
        values = [f" {normalize_answer(v)} " for v in family.values]
        assert len(set(values)) == len(values), family.relation
        for a in values:
            assert a.strip()
            assert not any(a != b and a in b for b in values), (family.relation, a)


def test_speaker_names_appear_in_no_value_phrasing_or_small_talk_name() -> None:
    tables = load_tables()
    texts = [p.text for p in tables.phrasings()]
    texts += [v for f in tables.families for v in f.values]
    texts += [*tables.people, *tables.places]
    words = {w for text in texts for w in re.findall(r"[a-z]+", text.lower())}
    assert not {name.lower() for name in tables.speakers} & words


def test_the_tables_ship_inside_the_package() -> None:
    folder = resources.files("temporal_rag_bench").joinpath("data", "chat")
    names = {entry.name for entry in folder.iterdir()}
    assert {"single.json", "multi.json", "static.json", "small_talk.json", "people.json"} <= names
    pyproject = Path(__file__).resolve().parents[2] / "benchmarks" / "pyproject.toml"
    # hatch's wheel takes every file of the listed package, data files included
    assert 'packages = ["temporal_rag_bench"]' in pyproject.read_text(encoding="utf-8")


# --- the dataset ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_dataset_and_another_seed_another() -> None:
    size = SIZES["tiny"]
    assert generate_chat(seed=3, size=size) == generate_chat(seed=3, size=size)
    assert generate_chat(seed=3, size=size).chunks != generate_chat(seed=4, size=size).chunks


def test_the_benchmark_uses_the_test_split_and_a_pipeline_can_ask_for_another() -> None:
    test = generate_chat(seed=1, size=SIZES["tiny"])
    train = generate_chat(seed=1, size=SIZES["tiny"], split="train")
    assert {c.metadata["phrasing"].split(".")[2] for c in test.chunks} == {"test"}
    assert {c.metadata["phrasing"].split(".")[2] for c in train.chunks} == {"train"}
    assert not {c.text for c in test.chunks} & {c.text for c in train.chunks}


def test_several_speakers_share_one_store_in_the_first_person(chat: Dataset) -> None:
    tables = load_tables()
    speakers = {c.speaker for c in chat.chunks}
    assert len(speakers) == SIZES["quick"].speakers
    names = {c.speaker: c.metadata["speaker_name"] for c in chat.chunks}
    assert set(names.values()) <= set(tables.speakers)
    for chunk in chat.chunks:
        assert chunk.metadata["user_id"] == chunk.speaker == chunk.entity
        own = str(names[chunk.speaker]).lower()
        assert own not in re.findall(r"[a-z]+", chunk.text.lower()), chunk.text
    first_person = [c for c in chat.chunks if c.kind is not ChunkKind.DISTRACTOR]
    assert sum(bool(re.search(r"\b(I|I'm|I've|my|My|me)\b", c.text)) for c in first_person) > (
        0.7 * len(first_person)
    )


def test_dates_are_iso_with_an_offset_and_in_time_order(chat: Dataset) -> None:
    moments = []
    for index, chunk in enumerate(chat.chunks):
        stamp = chunk.metadata["valid_from"]
        parsed = datetime.fromisoformat(stamp)
        assert re.search(r"[+-]\d\d:\d\d$", stamp), stamp
        assert parsed == chunk.timestamp
        assert parsed.utcoffset() == chunk.timestamp.utcoffset()
        assert chunk.recorded_order == index
        assert parsed < chat.now
        moments.append(parsed)
    assert moments == sorted(moments)
    assert len({m.utcoffset() for m in moments}) > 1  # speakers live in different zones


def test_current_single_questions_gold_the_last_value_and_stale_the_earlier(
    chat: Dataset,
) -> None:
    lines = timeline(chat)
    current = [q for q in chat.questions if q.kind is QuestionKind.CURRENT and "single" in q.cell]
    assert current
    for question in current:
        assert question.speaker is not None
        assert question.family is not None
        chunks = lines[(question.speaker, question.family)]
        values = list(dict.fromkeys(str(c.value) for c in chunks))
        assert question.gold == (chunks[-1].value,) == (values[-1],)
        assert question.stale == tuple(values[:-1])
        assert question.cell == f"current:single:N={len(values) - 1}"
        assert question.changes == len(values) - 1
        changes = [c for c in chunks if c.metadata["act"] in CHANGE_ACTS]
        assert len(changes) == len(values) - 1


def test_restatements_repeat_the_value_in_force_and_are_not_changes(chat: Dataset) -> None:
    restated = 0
    for chunks in timeline(chat).values():
        for before, chunk in itertools.pairwise(chunks):
            single = chat.cardinalities[str(chunk.family)] is Cardinality.ONE
            if chunk.metadata["act"] == "restate" and single:
                assert chunk.value == before.value
                restated += 1
            if chunk.metadata["act"] == "replace":
                assert normalize_answer(str(before.value)) in normalize_answer(chunk.text)
    assert restated


def test_multi_valued_questions_gold_every_value_and_have_no_stale(chat: Dataset) -> None:
    lines = timeline(chat)
    multi = [q for q in chat.questions if "multi" in q.cell]
    assert multi
    for question in multi:
        assert question.kind is QuestionKind.CURRENT
        assert question.stale == ()
        assert question.family is not None
        assert chat.cardinalities[question.family] is Cardinality.MANY
        chunks = lines[(str(question.speaker), question.family)]
        assert set(question.gold) == {c.value for c in chunks}
        assert len(question.gold) >= 2
        assert [c.metadata["act"] for c in chunks].count("add") == len(question.gold) - 1


def test_as_of_questions_gold_the_value_in_force_then(chat: Dataset) -> None:
    lines = timeline(chat)
    as_of = [q for q in chat.questions if q.kind is QuestionKind.AS_OF]
    assert as_of
    for question in as_of:
        assert question.valid_at is not None
        chunks = lines[(str(question.speaker), str(question.family))]
        before = [c for c in chunks if c.timestamp <= question.valid_at]
        assert question.gold == (before[-1].value,)
        assert question.gold[0] not in question.stale
        assert question.stale
        assert question.gold[0] != chunks[-1].value  # asks about an earlier version


def test_questions_have_a_third_and_a_first_person_form(chat: Dataset) -> None:
    names = {c.speaker: str(c.metadata["speaker_name"]) for c in chat.chunks}
    for question in chat.questions:
        name = names[question.speaker]
        assert name in question.text
        assert name not in question.first_person
        assert re.search(r"\b(I|my|am)\b", question.first_person), question.first_person
        assert question.entity == question.speaker


def test_cells_cover_n_1_3_10_and_both_kinds(chat: Dataset) -> None:
    cells = {q.cell for q in chat.questions}
    for n in (1, 3, 10):
        assert {f"current:single:N={n}", f"as_of:single:N={n}"} <= cells
    assert any(c.startswith("current:multi:N=") for c in cells)
    assert "static" in cells


def test_speakers_share_values_so_cross_speaker_supersession_would_show(chat: Dataset) -> None:
    current: dict[tuple[str, str], set[str]] = defaultdict(set)
    for question in chat.questions:
        if question.kind is QuestionKind.CURRENT and "single" in question.cell:
            current[(str(question.family), question.gold[0])].add(str(question.speaker))
    assert any(len(who) > 1 for who in current.values())
    assert "residence" in {family for (family, _), who in current.items() if len(who) > 1}
    assert chat_statistics(chat)["shared_values"] > 0


def test_small_talk_names_places_and_people_but_never_scores(chat: Dataset) -> None:
    tables = load_tables()
    talk = [c for c in chat.chunks if c.kind is ChunkKind.DISTRACTOR]
    assert talk
    assert all(c.family == SMALL_TALK and c.value is None for c in talk)
    places = {*tables.places, *tables.family("residence").values}
    assert any(any(p in c.text for p in places) for c in talk)
    for question in chat.questions[:20]:
        assert not any(about(c, question) for c in talk)


def test_statistics_count_what_was_generated(chat: Dataset) -> None:
    stats = chat_statistics(chat)
    acts = stats["chunks_per_act"]
    assert stats["chunks"] == len(chat.chunks) == sum(stats["chunks_per_kind"].values())
    assert stats["changes"] == sum(acts.get(a, 0) for a in CHANGE_ACTS)
    assert all(acts.get(a, 0) > 0 for a in CHANGE_ACTS)
    assert stats["restatements"] > 0
    assert stats["additions"] > 0
    assert stats["distractors"] == stats["chunks_per_kind"]["distractor"]
    assert sum(stats["questions_per_cell"].values()) == len(chat.questions)
    assert 200 <= stats["chunks"] <= 600  # the quick size: a few hundred chunks


def test_the_keyed_form_carries_speaker_relation_and_value() -> None:
    keyed = generate_chat(seed=2, size=SIZES["tiny"], keyed=True)
    prose = generate_chat(seed=2, size=SIZES["tiny"])
    assert keyed.track is Track.KEYED
    assert prose.track is Track.PROSE
    assert [c.text for c in keyed.chunks] == [c.text for c in prose.chunks]
    for chunk in keyed.chunks:
        assert chunk.keyed == (chunk.kind is not ChunkKind.DISTRACTOR)
        if chunk.keyed:
            assert (chunk.subject, chunk.relation, chunk.object) == (
                chunk.speaker,
                chunk.family,
                chunk.value,
            )
    assert not any(c.keyed for c in prose.chunks)


def test_bad_sizes_and_splits_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        generate_chat(split="holdout")
    with pytest.raises(InvalidInputError):
        generate_chat(size=ChatSize(changes=(40,)))
    with pytest.raises(InvalidInputError):
        generate_chat(size=ChatSize(speakers=0))
    with pytest.raises(InvalidInputError):
        generate_chat(size=ChatSize(speakers=99))


def test_chat_is_in_the_default_run_at_the_profiles_size() -> None:
    assert "chat" in DATASETS
    assert "chat" in KNOWN
    (dataset,), notes = load_datasets(["chat"], profile=PROFILES["tiny"], seed=5, data_dir=None)
    assert dataset == generate_chat(seed=5, size=SIZES["tiny"])
    assert not notes
    assert PROFILES["quick"].chat == SIZES["quick"]


def test_the_command_line_accepts_chat() -> None:
    from temporal_rag_bench.bench import BenchUsageError, parse_list

    assert parse_list("chat,synthetic-prose", KNOWN) == ("chat", "synthetic-prose")
    with pytest.raises(BenchUsageError):
        parse_list("chat,nope", KNOWN)
