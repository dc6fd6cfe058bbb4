"""The subject rule of prose statements (shared_core.judging.subjects)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.judging.subjects import statement_subject


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
        ("The shared spreadsheet says Rafael Rasmussen eats vegan.", "rafael rasmussen"),
        ("The insurance paperwork lists Jonas Fitzgerald as married.", "jonas fitzgerald"),
        ("The dashboard shows the payments API is down.", "the payments api"),
        ("Maria said that Omar Haddad lives in Osaka.", "omar haddad"),
        ("I said that my sister lives in Lisbon.", "my sister"),
        ("Caroline said she moved to Denver.", "caroline"),
        ("Caroline mentioned her adoption plans.", "caroline"),
        ("The claims service runs on Java 17.", "the claims service"),
        ("The records team moved to the third floor.", "the records team"),
        ("A colleague mentioned over coffee that Ines Duarte lives in Porto.", "ines duarte"),
        ("Somebody told me yesterday that my cousin moved to Perth.", "my cousin"),
        ("The scheduler for the Orion batch platform is Airflow.", "the orion batch platform"),
        ("The team behind the Lark mobile client wants fewer crashes.", "the lark mobile client"),
        ("The Orion batch platform's owner is Ravi Kumar.", "the orion batch platform"),
        ("The Orion batch platform retains logs for 30 days.", "the orion batch platform"),
        ("The ingest API accepts uploads up to 2 GB.", "the ingest api"),
        ("The Acme analytics service is down.", "the acme analytics service"),
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


def test_a_report_names_no_one_so_no_subject() -> None:
    assert statement_subject("The wiki says it moved to Denver.") is None


def test_a_source_is_not_the_subject_of_what_it_reports() -> None:
    # broke: "The shared spreadsheet says A ..." and "... says B ..." were one subject (the
    # spreadsheet), so news about two people could end one another
    about_rafael = statement_subject("The shared spreadsheet says Rafael Rasmussen eats vegan.")
    about_greta = statement_subject("The shared spreadsheet says Greta Tanaka eats vegan.")
    assert about_rafael != about_greta


def test_two_services_are_never_one_subject() -> None:
    assert statement_subject("The payments API runs on Node 16.") != statement_subject(
        "The search API runs on Node 16."
    )


@given(st.text(max_size=200))
def test_the_rule_never_fails_and_answers_lower_case(text: str) -> None:
    subject = statement_subject(text)
    assert subject is None or (subject == subject.lower() and subject.strip() == subject != "")


def test_an_unlisted_verb_ends_a_things_name() -> None:
    # broke: "the ... platform retains logs" had no listed verb, so the whole clause (or
    # nothing) was the subject and statements of one thing never shared a subject
    assert statement_subject("The Orion batch platform retains logs for 30 days.") == (
        statement_subject("The Orion batch platform runs on Kubernetes.")
    )


def test_a_report_whose_that_comes_later_is_about_whom_it_names() -> None:
    # broke: "Someone mentioned at lunch that X ..." had no subject ("that" was not the next word)
    assert statement_subject("Someone mentioned at lunch that Ines Duarte lives in Porto.") == (
        "ines duarte"
    )
