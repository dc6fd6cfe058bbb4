"""The subject rule of prose statements (shared_core.memory.subjects)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.memory.subjects import statement_subject


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Dana Reyes works for Northwind.", "dana reyes"),
        ("Dana Reyes's employer is Globex.", "dana reyes"),
        ("Dana Reyes\u2019s employer is Globex.", "dana reyes"),
        ("The city where Omar Haddad lives is Osaka.", "omar haddad"),
        ("Home for Omar Haddad is Osaka.", "omar haddad"),
        ("Per the CRM, Dana Reyes works for Northwind.", "dana reyes"),
        ("Reminder: Dana Reyes works for Northwind.", "dana reyes"),
        ("From the standup notes: Rosa Mbeki sticks to keto meals.", "rosa mbeki"),
        ("Caroline: I went to a support group yesterday.", "caroline"),
        ("In 2019, Jean-Luc Picard joined Starfleet.", "jean-luc picard"),
        ("Ana de la Cruz lives in Quito.", "ana de la cruz"),
        ("Caroline attended an LGBTQ support group recently.", "caroline"),
        ("I moved to Denver.", "i"),
        ("My phone number is 555-0142.", "i"),
        ("My sister lives in Lisbon.", "my sister"),
        ("Our landlord raised the rent.", "our landlord"),
        ("We use Postgres.", "we"),
        ("The payments API runs on Node 16.", "the payments api"),
        ("The search API runs on Node 18.", "the search api"),
        ("Per the HR system, the car Umar Vasquez drives is a Toyota Corolla.", "umar vasquez"),
    ],
)
def test_the_subject_of_a_statement(text: str, subject: str) -> None:
    assert statement_subject(text) == subject


@pytest.mark.parametrize(
    "text",
    [
        "She moved to Denver.",
        "They live in Oslo.",
        "It runs on Go.",
        "btw dana works at globex",
        "",
        "   ",
        "!!!",
    ],
)
def test_no_subject_when_the_rule_cannot_tell(text: str) -> None:
    assert statement_subject(text) is None


def test_two_services_are_never_one_subject() -> None:
    assert statement_subject("The payments API runs on Node 16.") != statement_subject(
        "The search API runs on Node 16."
    )


@given(st.text(max_size=200))
def test_the_rule_never_fails_and_answers_lower_case(text: str) -> None:
    subject = statement_subject(text)
    assert subject is None or (subject == subject.lower() and subject.strip() == subject != "")
