"""Which relations hold several values, and which statements say they add one
(``cardinality_words.json``), as both judges read them."""

from __future__ import annotations

import pytest

from shared_core.judging.adding import adds_up, says_it_adds


@pytest.mark.parametrize(
    ("relation", "expected"),
    [("pet_name", True), ("allergic_to", True), ("home_city", False), ("employer", False)],
)
def test_a_relation_adds_up_when_its_words_say_so(relation: str, expected: bool) -> None:
    assert adds_up(relation) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dana also lives in Rome.", True),
        ("DANA   ALSO lives in Rome.", True),  # read as normalized text
        ("I got another cat, Miso.", True),
        ("Dana lives in Rome.", False),
        ("Dana moved to Toronto.", False),  # "to" is not "too"
    ],
)
def test_a_statement_says_it_adds_a_value_with_an_additive_word(text: str, expected: bool) -> None:
    assert says_it_adds(text) is expected
