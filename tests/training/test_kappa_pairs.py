"""The kappa training-pair generator: determinism, the mix, labels, texts and argument checks."""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_core.errors import InvalidInputError
from temporal_rag_training.families import Family, Value, families
from temporal_rag_training.pairs import (
    DEFAULT_MIX,
    KINDS,
    POSITIVE_KINDS,
    V2_MIX,
    LabelledPair,
    family_names,
    generate_pairs,
    quotas,
    write_jsonl,
)
from temporal_rag_training.phrasings import phrasings
from temporal_rag_training.rendering import render
from temporal_rag_training.statements import Statements
from temporal_rag_training.subjects import first_person
from temporal_rag_training.tables import implied_states, instances, log_tables, table_names

_SAMPLE = generate_pairs(seed=1, count=4000)
_UNFILLED = re.compile(r"[{}]|\[[^\]]*\|")  # a slot, or an agreement choice like [live|lives]
_BAD_GRAMMAR = re.compile(
    r"\bI (?:is|has|does) |\bthey (?:is|has|does) |(?:^|; )(?:he|she|it) (?:have|do|are|were) "
    r"|\b(?:the the|a a|an an|a the|the a) ",
    re.IGNORECASE,
)


def test_same_seed_gives_the_same_pairs() -> None:
    assert generate_pairs(seed=7, count=600) == generate_pairs(seed=7, count=600)


def test_different_seeds_give_different_pairs() -> None:
    first = generate_pairs(seed=7, count=600)
    second = generate_pairs(seed=8, count=600)
    assert first != second
    assert len(set(first) & set(second)) < 60


def test_count_and_default_mix_are_respected() -> None:
    counts = Counter(pair.kind for pair in _SAMPLE)
    assert len(_SAMPLE) == 4000
    for kind in KINDS:
        assert abs(counts[kind] - 4000 * DEFAULT_MIX.get(kind, 0.0)) <= 1, kind
    positives = sum(pair.label for pair in _SAMPLE)
    assert 0.45 <= positives / len(_SAMPLE) <= 0.51


def test_a_custom_mix_is_respected_within_rounding() -> None:
    mix = {"paraphrase": 1.0, "retraction": 2.0, "unrelated": 0.5}
    pairs = generate_pairs(seed=3, count=701, mix=mix)
    counts = Counter(pair.kind for pair in pairs)
    assert len(pairs) == 701
    assert set(counts) == set(mix)
    for kind, weight in mix.items():
        assert abs(counts[kind] - 701 * weight / 3.5) <= 1, kind


@given(
    count=st.integers(min_value=0, max_value=500),
    weights=st.lists(
        st.floats(min_value=0, max_value=10), min_size=len(KINDS), max_size=len(KINDS)
    ),
)
def test_quotas_add_up_and_round_each_kind(count: int, weights: list[float]) -> None:
    if sum(weights) <= 0:
        return
    total = sum(weights)
    mix = {kind: weight / total for kind, weight in zip(KINDS, weights, strict=True)}
    shares = quotas(count, mix)
    assert sum(shares.values()) == count
    for kind in KINDS:
        assert abs(shares[kind] - count * mix[kind]) < 1 + 1e-9


def test_labels_agree_with_kinds() -> None:
    for pair in _SAMPLE:
        assert pair.kind in KINDS
        assert pair.label == (1 if pair.kind in POSITIVE_KINDS else 0)
    ends = {"explicit_change", "implied_change", "retraction", "bare_change", "revision_change"}
    assert ends == POSITIVE_KINDS


def test_no_duplicate_pairs() -> None:
    keys = [(pair.older, pair.newer) for pair in _SAMPLE]
    assert len(keys) == len(set(keys))


def test_texts_are_filled_non_empty_and_of_sane_length() -> None:
    for pair in _SAMPLE:
        for text in (pair.older, pair.newer):
            assert text.strip() == text
            assert not _UNFILLED.search(text), text
            assert 3 <= len(text.split()) <= 45, text
        assert pair.older != pair.newer


def test_no_obvious_grammar_slips() -> None:
    for pair in _SAMPLE:
        for text in (pair.older, pair.newer):
            assert not _BAD_GRAMMAR.search(text), text


def test_every_kind_is_produced_and_most_families_are_used() -> None:
    assert {pair.kind for pair in _SAMPLE} == set(DEFAULT_MIX)
    assert {pair.kind for pair in generate_pairs(seed=2, count=600, mix=V2_MIX)} == set(KINDS)
    used = {pair.family for pair in _SAMPLE}
    assert used <= set(family_names())
    assert len(used) >= 90


def test_at_least_45_distinct_families() -> None:
    names = family_names()
    assert len(names) == len(set(names)) >= 45
    shapes = Counter(family.shape for family in families())
    assert shapes["single"] >= 45
    assert shapes["multi"] >= 10
    assert shapes["event"] >= 8


def _phrasings(role: str, family: Family, value: Value) -> int:
    """How many templates state (or change to) ``value``: its own plus the family's."""
    own: tuple[str, ...] = getattr(value, role)
    shared: tuple[str, ...] = () if value.own else getattr(family, role)
    return len(own) + len(shared)


def test_families_have_enough_values_and_phrasings() -> None:
    for family in families():
        if not family.stateful:
            assert len(family.values) >= 8, family.name
        keys = [value.key for value in family.values]
        assert len(keys) == len(set(keys)), family.name
        if family.shape in ("single", "static", "multi"):
            for value in family.values:
                # 4: templates the benchmark generator also uses were removed (deploy_region)
                assert _phrasings("state", family, value) >= 4, (family.name, value.key)
        if family.shape == "single":
            for index, value in enumerate(family.values):
                if family.monotone and index == 0:
                    continue  # never the new value
                assert _phrasings("change", family, value) >= 5, (family.name, value.key)
        if family.shape == "multi":
            assert len(family.add) >= 4, family.name


def test_pairs_are_frozen_records() -> None:
    pair = _SAMPLE[0]
    assert isinstance(pair, LabelledPair)
    with pytest.raises(AttributeError):
        pair.label = 1 - pair.label  # type: ignore[misc]


def test_count_zero_gives_nothing() -> None:
    assert generate_pairs(seed=0, count=0) == []


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(min_value=-(2**40), max_value=2**40), count=st.integers(0, 120))
def test_any_seed_gives_valid_pairs(seed: int, count: int) -> None:
    pairs = generate_pairs(seed=seed, count=count)
    assert len(pairs) == count
    assert len({(pair.older, pair.newer) for pair in pairs}) == count
    for pair in pairs:
        assert pair.label == (pair.kind in POSITIVE_KINDS)
        assert pair.older
        assert pair.newer
        assert not _UNFILLED.search(pair.older + pair.newer)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"seed": "1", "count": 10}, "seed"),
        ({"seed": True, "count": 10}, "seed"),
        ({"seed": 1.0, "count": 10}, "seed"),
        ({"seed": 1, "count": -1}, "count"),
        ({"seed": 1, "count": 2.5}, "count"),
        ({"seed": 1, "count": True}, "count"),
        ({"seed": 1, "count": "10"}, "count"),
        ({"seed": 1, "count": 10**9}, "count"),
        ({"seed": 1, "count": 10, "mix": {"sarcasm": 1.0}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": -0.1}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": math.nan}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": math.inf}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": True}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": "0.5"}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {}}, "mix"),
        ({"seed": 1, "count": 10, "mix": {"paraphrase": 0.0}}, "mix"),
        ({"seed": 1, "count": 10, "mix": [("paraphrase", 1.0)]}, "mix"),
        ({"seed": 1, "count": 10, "phrasing_share": 1.5}, "phrasing_share"),
        ({"seed": 1, "count": 10, "phrasing_share": -0.1}, "phrasing_share"),
        ({"seed": 1, "count": 10, "phrasing_share": math.nan}, "phrasing_share"),
        ({"seed": 1, "count": 10, "phrasing_share": True}, "phrasing_share"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        generate_pairs(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert caught.value.fix


def test_write_jsonl_round_trips(tmp_path: Path) -> None:
    pairs = _SAMPLE[:50]
    path = tmp_path / "pairs.jsonl"
    assert write_jsonl(pairs, path) == 50
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [LabelledPair(**record) for record in records] == pairs
    assert set(records[0]) == {"older", "newer", "label", "kind", "family"}


def test_write_jsonl_rejects_other_objects(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as caught:
        write_jsonl([_SAMPLE[0], {"older": "a"}], tmp_path / "bad.jsonl")  # type: ignore[list-item]
    assert caught.value.field == "pairs[1]"


@pytest.mark.slow
def test_forty_thousand_pairs_are_quick() -> None:
    started = time.perf_counter()
    pairs = generate_pairs(seed=5, count=40_000)
    elapsed = time.perf_counter() - started
    assert len(pairs) == 40_000
    assert elapsed < 30  # about 1 s on a laptop; generous for slow CI machines


def test_new_log_instance_and_implied_tables_are_broad() -> None:
    implied = implied_states()
    assert len(implied) >= 60
    for family in implied:
        assert len(family.state) >= 3, family.name
        assert len(family.evidence) >= 4, family.name
    assert sum(bool(family.plans) for family in implied) >= 60
    assert len(log_tables().logs) >= 20
    assert len(instances()) >= 18
    assert set(table_names()) <= set(family_names())


def test_new_kinds_appear_with_the_right_labels() -> None:
    extra = set(table_names())
    counts = Counter((pair.kind, pair.label) for pair in _SAMPLE if pair.family in extra)
    assert counts[("separate_events", 0)] >= 80
    assert counts[("other_person", 0)] >= 60
    assert counts[("implied_change", 1)] >= 300
    assert counts[("explicit_change", 1)] >= 80
    assert counts[("compatible", 0)] >= 40
    logs = [p for p in _SAMPLE if p.family.startswith("log_")]
    assert logs
    assert all(p.label == 0 for p in logs)


_PHRASED = generate_pairs(seed=1, count=3000, mix=V2_MIX, phrasing_share=0.5)


def test_a_phrasing_share_says_plain_statements_with_the_extra_phrasings() -> None:
    """kappa-minilm-v3 met six templates per attribute and said "neither" to "X works for
    Cobalt Robotics." / "X works for Veridian Energy."; its successor's plain statements use the
    families' extra phrasings too (frame_phrasings.json), and news that states no attribute."""
    extra = Statements(random.Random(3), phrasing_share=1.0)
    employer = next(f for f in extra.families if f.name == "employer")
    said = [
        extra.say(employer, "state", extra.subject(employer), employer.values[0]) for _ in range(40)
    ]
    assert all(s is not None and s.template in phrasings().by_family["employer"] for s in said)
    plain = Statements(random.Random(3))
    said = [
        plain.say(employer, "state", plain.subject(employer), employer.values[0]) for _ in range(40)
    ]
    assert not any(s is not None and s.template in phrasings().by_family["employer"] for s in said)
    news = {
        render(
            t,
            first_person(),
            dict.fromkeys(("v", "vb", "old", "oldb", "when", "oldwhen", "year"), ""),
        )[0]
        for t in phrasings().news
    }
    assert len(_PHRASED) == 3000
    assert generate_pairs(seed=1, count=3000, mix=V2_MIX) != _PHRASED
    neighbours = [p for p in _PHRASED if p.kind == "same_subject_news"]
    assert any(any(n.lower() in (p.older + p.newer).lower() for n in news) for p in neighbours)
    for pair in _PHRASED:
        for text in (pair.older, pair.newer):
            assert not _UNFILLED.search(text), text
            assert not _BAD_GRAMMAR.search(text), text
