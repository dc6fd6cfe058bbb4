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


def test_a_source_cited_inside_a_report_is_no_subject_two_people_share() -> None:
    # broke: "Someone mentioned at lunch that the insurance paperwork lists Valeria Nieminen as
    # separated." was about "the insurance paperwork", the subject of every person's statement
    # said so, and the claim judge compared two people's relationship statuses
    report = "Someone mentioned at lunch that the insurance paperwork lists {} as separated."
    valeria, amara = report.format("Valeria Nieminen"), report.format("Amara Ibarra")
    assert statement_subject(valeria) == "valeria nieminen"
    assert statement_subject(amara) == "amara ibarra"
    assert statement_subject("Ana mentioned that the team wiki says Dana lives in Rome.") == "dana"
    # a report of a person's report is still not read further
    assert statement_subject("Maria said that Omar says Dana moved.") == "omar"


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Relationship status for Valeria Nieminen: separated.", "valeria nieminen"),
        ("Relationship status for Amara Ibarra: engaged.", "amara ibarra"),
        ("Production traffic for the Raven service is served from Frankfurt.", "the raven service"),
        # broke: after a lead-in the common noun is lower-case, and the head was read as "raven"
        (
            "Per the HR system, production traffic for the Raven notification service is "
            "served from af-south-1.",
            "the raven notification service",
        ),
        # "of" or "for" right after the first word may belong to a name or a quantity
        ("Bank of America is headquartered in Charlotte.", "bank"),
        ("Most of my hours go to Nimbus.", "nimbus"),
    ],
)
def test_a_common_noun_head_is_about_whom_it_names_after_for(text: str, subject: str) -> None:
    # broke: "Relationship status for Valeria Nieminen: separated." was about "relationship",
    # a subject every person's statement said so shared
    assert statement_subject(text) == subject


# ------------------------------------------- issue 33, item 2: chat statements and their writer
@pytest.mark.parametrize(
    "text",
    [
        "Just moved to Lisbon!",
        "Got hired by Globex!",
        "Tom left, Priya is my manager now.",
        "Tom quit, so I report to Priya now.",
        "With Tom gone, Priya is my boss.",
        "Priya is my manager now.",
        "Lisbon is where I live.",
        "Sam and I are a couple.",
        "My manager is Tom.",
        "My partner's name is Sam.",
        "I live in Berlin.",
        "On paper I'm a team lead.",
        "The title on my badge is data scientist.",
        "Btw, the city I live in is Denver.",
        "Made a fresh inbox: paper.crane5@mailbox.test.",
        "Ring me at +49 151 2304 7716 anytime.",
        "Use +1 415 555 0142 to reach me from today.",
    ],
)
def test_a_chat_statement_that_names_no_one_else_is_its_writers(text: str) -> None:
    assert statement_subject(text, writer=True) == "i"


def test_just_moved_to_lisbon_is_not_read_as_about_lisbon() -> None:
    # broke (issue 33): the head ran to the first capitalised word, so the subject was lisbon
    assert statement_subject("Just moved to Lisbon!", writer=True) == "i"
    assert statement_subject("Just moved to Lisbon!") is None  # no writer: no subject, prose


def test_tom_left_priya_is_my_manager_now_is_not_read_as_about_tom() -> None:
    # broke (issue 33): the old value named first was read as the subject
    assert statement_subject("Tom left, Priya is my manager now.", writer=True) == "i"
    assert statement_subject("Tom left, Priya is my manager now.") is None


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("My sister just moved to Oslo.", "my sister"),
        ("My sister is a doctor.", "my sister"),
        ("Tom moved to Oslo, I miss him.", "tom"),  # a long first clause is news of Tom
        ("Tom told me Oslo is lovely this time of year.", "tom"),
        ("Caroline: I went to a support group yesterday.", "caroline"),
        ("My friend Zara just adopted a cat.", "my friend"),
    ],
)
def test_news_of_someone_else_stays_theirs_with_a_writer(text: str, subject: str) -> None:
    assert statement_subject(text, writer=True) == subject


@pytest.mark.parametrize(
    "text",
    ["Did you see the match last night?", "Guess who moved to Lisbon?", "Is Tom my manager?"],
)
def test_a_question_has_no_subject(text: str) -> None:
    assert statement_subject(text) is None
    assert statement_subject(text, writer=True) is None


@given(st.text(max_size=200))
def test_the_writer_is_never_read_into_a_statement_of_someone_else(text: str) -> None:
    without, with_writer = statement_subject(text), statement_subject(text, writer=True)
    assert with_writer is None or with_writer == with_writer.lower()
    if with_writer != "i":  # knowing the writer only ever turns a reading into the writer's
        assert with_writer == without


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("My position is solutions architect. :D", "i"),
        ("I call Bogota home. :)", "i"),
        ("Dana Reyes works for Northwind. ;-)", "dana reyes"),
    ],
)
def test_a_trailing_emoticon_is_not_read_as_a_name(text: str, subject: str) -> None:
    # broke (issue 33, the chat track): ":D" after a sentence was read as the subject "d"
    assert statement_subject(text) == subject


def test_a_source_in_an_aside_is_not_a_value_the_statement_names() -> None:
    from shared_core.judging.subjects import named_values

    said = named_values("Per the HR system, Dana Reyes lives in Lisbon (per the CRM).")
    assert said == named_values("Dana Reyes lives in Lisbon (from the team wiki).")
    assert "lisbon" in said
    assert "crm" not in said


@pytest.mark.parametrize(
    ("said", "same"),
    [
        ("Reach me by email: tide.runner@inbox.test.", "tide.runner@inbox.test is my email."),
        ("Best number for me: +1 415 555 0142.", "My cell is +1 415 555 0142."),
    ],
)
def test_a_sentence_word_opening_a_restatement_is_no_value_it_names(said: str, same: str) -> None:
    # broke (issue 33, the chat track): "Reach" and "Best" were read as values, so a
    # restatement seemed to name a value of its own and could have ended its claim
    from shared_core.judging.subjects import named_values

    assert named_values(said) == named_values(same)


def test_a_request_about_someone_else_is_not_its_writers() -> None:
    # a request names the writer only with "me"/"my": calling Esther is no news of the writer's
    assert statement_subject("Call Esther Rinaldi on 206-555-0137.", writer=True) != "i"
    assert statement_subject("Ring me at +49 151 2304 7716.", writer=True) == "i"


@pytest.mark.parametrize(
    "text",
    [
        "My new address is river.stone@postbox.test, update your contacts.",
        "My number changed, use +82 10 2345 6789 from now on.",
    ],
)
def test_a_first_clause_that_says_something_is_not_stripped_as_a_lead_in(text: str) -> None:
    # broke (issue 33, chat dev phrasings): "My new address is X," was dropped as a lead-in
    # like "Per the CRM,", leaving "update your contacts." with no subject
    assert statement_subject(text, writer=True) == "i"
    assert statement_subject("Per the CRM, Dana Reyes lives in Oslo.") == "dana reyes"


def test_you_can_find_me_is_the_writers() -> None:
    # broke (issue 33, chat dev phrasings): "You can find me in Marseille" had no subject
    assert (
        statement_subject("You can find me in Marseille, that's where I live.", writer=True) == "i"
    )
    assert statement_subject("You can reach Tom at 555-0100.", writer=True) != "i"
    # the request words are read once for the writer rule and the one contacted alike
    assert statement_subject("You'll find me in Marseille now.", writer=True) == "i"
    assert statement_subject("You'll reach me at 555-0100 now.", writer=True) == "i"
    assert statement_subject("You'll reach Tom at 555-0100.", writer=True) == "tom"


@pytest.mark.parametrize(
    "text",
    [
        "+44 7700 900 481 no longer works, try +49 151 2304 7716.",  # a value first
        "quietfox@postbox.test is closed, email me at blue.heron42@mailbox.test.",
        "Heads up, new mobile: +49 151 2304 7716.",
        "It's over with Robin. I'm with Sam.",  # "it" names no one; Robin is an old value
        "No more Cobalt Robotics for me, I work for Brightline Analytics now.",
        "Cobalt Robotics is history, I'm employed by Brightline Analytics now.",
        "Said goodbye to Berlin, hello Lisbon!",  # a past tense the writer leaves unsaid
        "Handed in my notice at Cobalt Robotics, Brightline Analytics hired me.",
        "Finally relocated to Lisbon.",
        "Officially a staff engineer as of today.",
        "Big news: I'm moving to Lisbon, the lease starts this week.",
    ],
)
def test_a_chat_change_that_names_no_one_is_its_writers(text: str) -> None:
    # broke (issue 33, the chat track's train and dev phrasings): these had no subject or an
    # old value's ("robin", "cobalt robotics", "said", "big"), so they stayed prose or were
    # keyed apart from the writer's claims, and the stale value stayed current beside the new
    assert statement_subject(text, writer=True) == "i"


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("It's over with Robin. I'm with Sam.", None),
        ("She moved to Lisbon.", None),
        ("The weather in Oslo is awful today.", "the weather in oslo"),
        ("Somebody told me yesterday that my cousin moved to Perth.", "my cousin"),
    ],
)
def test_a_statement_naming_someone_else_or_no_one_is_never_the_writers_without_one(
    text: str, subject: str | None
) -> None:
    assert statement_subject(text) == subject
    if subject is not None:
        assert statement_subject(text, writer=True) == subject


@pytest.mark.parametrize(
    "text",
    [
        "New relationship: Sam.",  # a lead-in, then only the value
        "Don't use +44 7700 900 481 anymore, call +49 151 2304 7716.",  # a request of a value
        "Replace quietfox@postbox.test with blue.heron42@mailbox.test please.",
    ],
)
def test_a_value_after_a_lead_in_or_in_a_request_is_the_writers(text: str) -> None:
    # broke (issue 33, the chat track's train and dev phrasings): read as about "sam",
    # "don't", "replace"
    assert statement_subject(text, writer=True) == "i"
    assert statement_subject(text) != "i"


def test_a_value_after_a_lead_in_is_no_subject_without_a_writer() -> None:
    # broke: "New relationship: Sam." was about "sam" when the write named no speaker
    assert statement_subject("New relationship: Sam.") is None
    assert statement_subject("New assignment: Atlas.") is None


@pytest.mark.parametrize(
    "text",
    ["Job title of Dana Reyes: staff engineer.", "Home address of Dana Reyes: 12 Rua Augusta."],
)
def test_a_label_naming_whose_attribute_follows_is_no_lead_in(text: str) -> None:
    # broke: the label was dropped as a lead-in, so with a speaker the value was the writer's
    # (Dana's job title would have closed the writer's own) and without one "rua augusta"
    assert statement_subject(text) == "dana reyes"
    assert statement_subject(text, writer=True) == "dana reyes"


def test_news_after_a_lead_in_stays_of_whom_it_names() -> None:
    assert statement_subject("Note: Dana moved.", writer=True) == "dana"
    assert statement_subject("It's raining again, of course.", writer=True) is None


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Call Hana Lombardi on 206-555-0135 (noted at the offsite).", "hana lombardi"),
        ("You can reach Sakura Ortega at 206-555-0103.", "sakura ortega"),
        ("For the record, you can reach Sakura Ortega at 206-555-0103.", "sakura ortega"),
        ("Someone mentioned that you can reach Priya Novak at 312-555-0144.", "priya novak"),
        ("Email Dana Reyes at dana@example.test.", "dana reyes"),
        ("Hana Lombardi picks up calls at 206-555-0135.", "hana lombardi"),
    ],
)
def test_a_request_to_contact_someone_is_about_the_one_contacted(text: str, subject: str) -> None:
    # broke (issue 33, synthetic prose): "Call Hana Lombardi on ..." was about "call hana
    # lombardi" and "you can reach Sakura Ortega at ..." about no one, so neither phone
    # number ever met the person's other statements and a stale number stayed current
    assert statement_subject(text) == subject
    assert statement_subject(text, writer=True) == subject


def test_a_request_to_contact_the_writer_stays_the_writers() -> None:
    assert statement_subject("Call me on 555-0100.", writer=True) == "i"
    assert statement_subject("You can reach me at 555-0101.", writer=True) == "i"
    assert statement_subject("Call me on 555-0100.") is None
