"""The pure parts of the read path: fusion, query expansion parsing and context packing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.errors import ExtractorError, InvalidInputError
from shared_core.facts import Fact
from shared_core.memory import Hit, expand_query, pack_context, reciprocal_rank_fusion
from shared_core.memory.context import count_tokens_default


def hit(text: str, score: float, year: int, until: int | None = None) -> Hit:
    fact = Fact(
        text=text,
        valid_from=datetime(year, 1, 1, tzinfo=UTC),
        valid_to=None if until is None else datetime(until, 1, 1, tzinfo=UTC),
    )
    return Hit(fact, score)


# ---------------------------------------------------------------- fusion
def test_one_ranking_comes_back_unchanged() -> None:
    assert reciprocal_rank_fusion([["a", "b", "c"]]) == ["a", "b", "c"]


def test_items_found_by_several_variants_rise() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d"], ["c", "b"]])
    assert fused[0] == "c"
    assert set(fused) == {"a", "b", "c", "d"}


@given(st.lists(st.lists(st.integers(0, 20), max_size=10), max_size=5))
def test_fusion_is_a_duplicate_free_union(rankings: list[list[int]]) -> None:
    fused = reciprocal_rank_fusion(rankings)
    assert len(fused) == len(set(fused))
    assert set(fused) == {item for ranking in rankings for item in ranking}


# ---------------------------------------------------------------- expansion
def test_expansion_parses_bullets_numbers_and_quotes() -> None:
    answer = "1. Where is Maria's home?\n- \"Maria's city\"\n\n* where does maria live\nextra"

    variants = expand_query(lambda prompt: answer, "Where does Maria live", 2)
    assert variants == ["Where is Maria's home?", "Maria's city"]


def test_expansion_skips_the_query_itself_and_repeats() -> None:
    variants = expand_query(lambda p: "where does maria live\nA\na\nB", "Where does Maria live", 5)
    assert variants == ["A", "B"]


def test_expansion_failures_are_extractor_errors() -> None:
    with pytest.raises(ExtractorError, match="returned int"):
        expand_query(lambda p: 3, "q", 1)  # type: ignore[arg-type, return-value]


@given(st.text(max_size=300))
def test_expansion_survives_any_answer(answer: str) -> None:
    variants = expand_query(lambda p: answer, "q", 3)
    assert len(variants) <= 3
    assert all(v.strip() for v in variants)


# ---------------------------------------------------------------- context packing
def test_lines_carry_the_valid_interval() -> None:
    block = pack_context([hit("Maria lives in Berlin.", 0.9, 2020, 2022)], token_budget=100)
    assert block == "[valid 2020-01-01 -> 2022-01-01] Maria lives in Berlin."


def test_relevance_first_then_the_newest_valid() -> None:
    hits = [hit("old", 0.801, 2019), hit("new", 0.799, 2023), hit("best", 0.95, 2010)]
    lines = pack_context(hits, token_budget=100).splitlines()
    assert [line.rsplit("] ", 1)[1] for line in lines] == ["best", "new", "old"]


def test_the_budget_counts_the_whole_block() -> None:
    hits = [hit(f"fact number {n}", 1.0 - n / 10, 2020) for n in range(5)]
    for budget in range(1, 80):
        block = pack_context(hits, token_budget=budget)
        assert count_tokens_default(block) <= budget


def test_a_custom_token_counter_is_used() -> None:
    hits = [hit("a b c", 0.9, 2020), hit("d e f", 0.8, 2020)]
    by_chars = pack_context(hits, token_budget=40, count_tokens=len)
    assert by_chars.count("\n") == 0  # one line is 32 characters: the second does not fit


def test_token_budget_must_be_positive() -> None:
    with pytest.raises(InvalidInputError, match="token_budget"):
        pack_context([], token_budget=0)
