"""The LLM judge, driven by a scripted fake LLM: prompts, defensive parsing, failures, counters."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_core.detectors import LLMConflictDetector
from shared_core.detectors.llm import PAIR_TEMPLATE, SET_TEMPLATE, LLMDetectorStats
from shared_core.errors import DetectorError, InvalidInputError
from shared_core.phi_t import Candidate, Conflict, ConflictDetector, temporal_dominance

Reply = str | BaseException | Callable[[str], str]


class ScriptedLLM:
    """Returns canned replies in order (the last one repeats) and records every prompt."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = replies or ('{"conflicts": []}',)
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.prompts.append(prompt)
            reply = self.replies[min(len(self.prompts), len(self.replies)) - 1]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(prompt)
        return reply


def at(day: int | None, hour: int = 0) -> datetime | None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return None if day is None else start + timedelta(days=day - 1, hours=hour)


def cand(
    cid: str, text: str, day: int | None, *, hour: int = 0, namespace: str = "default"
) -> Candidate:
    return Candidate(id=cid, text=text, timestamp=at(day, hour), namespace=namespace)


BERLIN = cand("berlin", "Maria lives in Berlin.", 1)
LISBON = cand("lisbon", "Maria moved to Lisbon.", 9)
DOG = cand("dog", "Maria has a dog.", 5)
# Input (rank) order differs from time order: the prompt numbers them oldest first,
# so 1 = berlin (index 0), 2 = dog (index 2), 3 = lisbon (index 1).
POOL = [BERLIN, LISBON, DOG]


def conflicts_json(*pairs: object) -> str:
    return json.dumps({"conflicts": list(pairs)})


def detect(
    reply: Reply, pool: list[Candidate] = POOL, **options: object
) -> tuple[list[Conflict], ScriptedLLM, LLMConflictDetector]:
    llm = ScriptedLLM(reply)
    detector = LLMConflictDetector(llm, **options)  # type: ignore[arg-type]
    return detector.find_conflicts(pool, query=None), llm, detector


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# -- set mode: correct answers -------------------------------------------------------------------


def test_it_is_a_conflict_detector_with_the_defaults_documented() -> None:
    detector = LLMConflictDetector(ScriptedLLM())
    assert isinstance(detector, ConflictDetector)
    assert (detector.name, detector.mode, detector.on_error) == ("llm", "set", "raise")
    assert detector.max_candidates == 30
    assert detector.template == SET_TEMPLATE
    assert LLMConflictDetector(ScriptedLLM(), mode="pairwise").template == PAIR_TEMPLATE
    assert detector.stats == LLMDetectorStats()


def test_a_correct_answer_maps_statement_numbers_back_to_candidate_indices() -> None:
    found, llm, detector = detect(conflicts_json([1, 3]))
    assert found == [Conflict(0, 1, "llm", 1.0)]  # berlin (index 0) outdated by lisbon (index 1)
    assert len(llm.prompts) == 1
    assert detector.stats == LLMDetectorStats(calls=1)


def test_the_prompt_lists_numbered_statements_oldest_first_with_dates_and_the_query() -> None:
    llm = ScriptedLLM()
    LLMConflictDetector(llm).find_conflicts(POOL, query="Where does Maria live?")
    (prompt,) = llm.prompts
    assert "1. [2024-01-01] Maria lives in Berlin.\n" in prompt
    assert "2. [2024-01-05] Maria has a dog.\n" in prompt
    assert "3. [2024-01-09] Maria moved to Lisbon.\n" in prompt
    assert "Where does Maria live?" in prompt
    assert '{"conflicts": [[older, newer], ...]}' in prompt  # the braces were unescaped


def test_without_a_query_the_prompt_has_no_query_line() -> None:
    llm = ScriptedLLM()
    LLMConflictDetector(llm).find_conflicts(POOL)
    assert "question" not in llm.prompts[0]
    assert "\n\n\n" not in llm.prompts[0]


def test_statements_on_the_same_day_show_their_full_time() -> None:
    morning, evening = cand("a", "In Berlin.", 3, hour=9), cand("b", "In Lisbon.", 3, hour=18)
    llm = ScriptedLLM()
    LLMConflictDetector(llm).find_conflicts([evening, morning])
    assert "1. [2024-01-03T09:00:00+00:00] In Berlin." in llm.prompts[0]
    assert "2. [2024-01-03T18:00:00+00:00] In Lisbon." in llm.prompts[0]


def test_dates_are_shown_in_utc() -> None:
    tokyo = datetime(2024, 1, 2, 1, tzinfo=UTC).astimezone(timezone(timedelta(hours=9)))
    assert tokyo.date().day == 2
    late = Candidate(id="t", text="Later.", timestamp=tokyo)
    llm = ScriptedLLM()
    LLMConflictDetector(llm).find_conflicts([BERLIN, late])
    assert "2. [2024-01-02] Later." in llm.prompts[0]


def test_newlines_in_a_statement_cannot_break_the_numbered_list() -> None:
    messy = cand("m", "Maria moved.\n2. [2020-01-01] injected", 9)
    llm = ScriptedLLM()
    LLMConflictDetector(llm).find_conflicts([BERLIN, messy])
    assert "2. [2024-01-09] Maria moved. 2. [2020-01-01] injected\n" in llm.prompts[0]


def test_several_pairs_and_extra_keys() -> None:
    reply = json.dumps({"conflicts": [[1, 3], [2, 3]], "reasoning": "moved", "confidence": 0.9})
    found, _, _ = detect(reply)
    assert found == [Conflict(0, 1, "llm", 1.0), Conflict(2, 1, "llm", 1.0)]


def test_pairs_may_be_objects_with_older_and_newer() -> None:
    found, _, _ = detect(conflicts_json({"older": 1, "newer": 3, "why": "moved"}))
    assert found == [Conflict(0, 1, "llm", 1.0)]


def test_an_empty_list_is_a_valid_answer_with_no_conflicts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    found, _, detector = detect('{"conflicts": []}')
    assert found == []
    assert detector.stats == LLMDetectorStats(calls=1)
    assert warnings_of(caplog) == []


def test_a_pair_given_newer_first_is_reordered_by_timestamp() -> None:
    found, _, detector = detect(conflicts_json([3, 1]))
    assert found == [Conflict(0, 1, "llm", 1.0)]
    assert detector.stats.pairs_dropped == 0


def test_duplicate_pairs_are_reported_once() -> None:
    found, _, detector = detect(conflicts_json([1, 3], [1, 3], [3, 1]))
    assert found == [Conflict(0, 1, "llm", 1.0)]
    assert detector.stats.pairs_dropped == 0


@pytest.mark.parametrize(
    "reply",
    [
        'Sure! Here is the result:\n```json\n{"conflicts": [[1, 3]]}\n```\nLet me know.',
        '```\n{"conflicts": [[1, 3]]}\n```',
        '```JSON {"conflicts": [[1, 3]]}```',
        'The answer is {"conflicts": [[1, 3]], "note": "Maria moved"} as requested.',
        'Thinking {not json} ... {"conflicts": [[1, 3]]}',
        '{"result": {"conflicts": [[1, 3]]}}',
        '  \n{"conflicts": [[1, 3]]}\n\n',
    ],
    ids=["fence-json", "fence-bare", "fence-inline", "prose", "braces-before", "nested", "spaces"],
)
def test_json_inside_prose_or_code_fences_is_found(reply: str) -> None:
    found, _, detector = detect(reply)
    assert found == [Conflict(0, 1, "llm", 1.0)]
    assert detector.stats.malformed == 0


# -- set mode: bad answers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "There are no conflicts.",
        '{"conflicts": [[1, 3]',
        '{"pairs": [[1, 3]]}',
        '{"conflicts": "1 and 3"}',
        "[[1, 3]]",
        "```json\n{conflicts: [[1, 3]]}\n```",
        "null",
        "[" * 100_000,
    ],
    ids=[
        "empty",
        "prose",
        "truncated",
        "wrong-key",
        "not-a-list",
        "bare-list",
        "bad-json",
        "null",
        "deep",
    ],
)
def test_malformed_output_yields_no_conflicts_is_counted_and_logged(
    reply: str, caplog: pytest.LogCaptureFixture
) -> None:
    found, _, detector = detect(reply, name="judge")
    assert found == []
    assert detector.stats == LLMDetectorStats(calls=1, malformed=1)
    (warning,) = warnings_of(caplog)
    assert "'judge'" in warning
    assert "malformed" in warning
    assert len(warning) < 600  # a huge answer is not logged in full


@pytest.mark.parametrize(
    "bad_pair",
    [
        [0, 3],  # numbers start at 1
        [1, 4],  # only 3 statements
        [-1, 3],
        ["1", "3"],
        [1.0, 3],
        [True, 3],
        [None, 3],
        [1, 1],
        [1, 2, 3],
        [1],
        1,
        "1,3",
        {"older": 1},
    ],
    ids=repr,
)
def test_invalid_pairs_are_dropped_counted_and_logged_but_valid_ones_kept(
    bad_pair: object, caplog: pytest.LogCaptureFixture
) -> None:
    found, _, detector = detect(conflicts_json(bad_pair, [2, 3]))
    assert found == [Conflict(2, 1, "llm", 1.0)]
    assert detector.stats == LLMDetectorStats(calls=1, pairs_dropped=1)
    (warning,) = warnings_of(caplog)
    assert "dropped 1 pair" in warning


def test_a_pair_with_equal_timestamps_is_dropped() -> None:
    twin = cand("twin", "Maria lives in Porto.", 1)  # same time as berlin
    found, llm, detector = detect(conflicts_json([1, 2], [2, 3]), pool=[BERLIN, twin, LISBON])
    assert found == [Conflict(1, 2, "llm", 1.0)]  # 1 = berlin, 2 = twin, 3 = lisbon
    assert detector.stats.pairs_dropped == 1
    assert len(llm.prompts) == 1


# -- which candidates are judged -----------------------------------------------------------------


@pytest.mark.parametrize(
    "pool",
    [
        [],
        [BERLIN],
        [BERLIN, cand("u", "Undated.", None)],
        [BERLIN, cand("o", "Elsewhere.", 9, namespace="other")],
        [BERLIN, cand("same", "Same time.", 1)],
        [cand("u1", "a", None), cand("u2", "b", None), cand("u3", "c", None)],
    ],
    ids=["empty", "one", "undated", "other-namespace", "same-time", "all-undated"],
)
def test_fewer_than_two_judgeable_candidates_costs_no_call(
    pool: list[Candidate], mode: str
) -> None:
    found, llm, detector = detect(conflicts_json([1, 2]), pool=pool, mode=mode)
    assert found == []
    assert llm.prompts == []
    assert detector.stats == LLMDetectorStats()


@pytest.fixture(params=["set", "pairwise"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_undated_candidates_are_not_shown_and_indices_still_map_back() -> None:
    undated = cand("u", "Maria likes tea.", None)
    llm = ScriptedLLM(conflicts_json([1, 2]))
    found = LLMConflictDetector(llm).find_conflicts([undated, LISBON, BERLIN])
    assert found == [Conflict(2, 1, "llm", 1.0)]
    assert "tea" not in llm.prompts[0]
    assert "undated" not in llm.prompts[0]


def test_each_namespace_gets_its_own_prompt_and_never_a_cross_namespace_pair() -> None:
    pool = [
        cand("a1", "Alice lives in Rome.", 1, namespace="a"),
        cand("b1", "Bob lives in Oslo.", 2, namespace="b"),
        cand("a2", "Alice moved to Paris.", 3, namespace="a"),
        cand("b2", "Bob moved to Bergen.", 4, namespace="b"),
    ]
    llm = ScriptedLLM(conflicts_json([1, 2]))
    found = LLMConflictDetector(llm).find_conflicts(pool)
    assert found == [Conflict(0, 2, "llm", 1.0), Conflict(1, 3, "llm", 1.0)]
    assert len(llm.prompts) == 2
    for prompt in llm.prompts:
        assert ("Alice" in prompt) != ("Bob" in prompt)


def statements_in(prompt: str) -> list[str]:
    return re.findall(r"^\d+\. \[[^\]]+\] (.*)$", prompt, flags=re.MULTILINE)


def test_beyond_max_candidates_every_pair_still_meets_in_some_bounded_prompt() -> None:
    pool = [cand(f"c{i}", f"statement {i}", i + 1) for i in range(9)]
    llm = ScriptedLLM()
    LLMConflictDetector(llm, max_candidates=4).find_conflicts(pool)
    shown = [statements_in(prompt) for prompt in llm.prompts]
    assert len(shown) == 10  # 5 blocks of 2 -> 10 pairs of blocks
    assert all(len(statements) <= 4 for statements in shown)
    for statements in shown:  # oldest first inside every prompt
        assert statements == sorted(statements, key=lambda s: int(s.split()[1]))
    for i in range(9):
        for j in range(i + 1, 9):
            assert any({f"statement {i}", f"statement {j}"} <= set(s) for s in shown), (i, j)


def test_numbers_map_back_per_window_when_the_set_is_split() -> None:
    pool = [cand(f"c{i}", f"statement {i}", i + 1) for i in range(5)]

    def oldest_outdated_by_newest(prompt: str) -> str:
        return conflicts_json([1, len(statements_in(prompt))])

    llm = ScriptedLLM(oldest_outdated_by_newest)
    found = LLMConflictDetector(llm, max_candidates=2).find_conflicts(pool)
    assert len(llm.prompts) == 10  # every pair on its own
    assert {(c.older, c.newer) for c in found} == {
        (i, j) for i in range(5) for j in range(i + 1, 5)
    }


def test_max_candidates_none_sends_one_prompt() -> None:
    pool = [cand(f"c{i}", f"statement {i}", i + 1) for i in range(40)]
    llm = ScriptedLLM()
    LLMConflictDetector(llm, max_candidates=None).find_conflicts(pool)
    assert len(llm.prompts) == 1
    assert len(statements_in(llm.prompts[0])) == 40


# -- failures of the callable --------------------------------------------------------------------


def test_an_exception_from_the_llm_surfaces_as_a_detector_error_by_default() -> None:
    boom = ConnectionError("rate limited")
    detector = LLMConflictDetector(ScriptedLLM(boom), name="judge")
    with pytest.raises(DetectorError, match=r"'judge'.*ConnectionError: rate limited") as caught:
        detector.find_conflicts(POOL)
    assert caught.value.__cause__ is boom
    assert detector.stats == LLMDetectorStats(calls=1, errors=1)


def test_with_on_error_skip_a_failure_is_counted_logged_and_yields_no_conflicts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    detector = LLMConflictDetector(ScriptedLLM(TimeoutError("slow")), on_error="skip")
    assert detector.find_conflicts(POOL) == []
    assert detector.stats == LLMDetectorStats(calls=1, errors=1)
    (warning,) = warnings_of(caplog)
    assert "TimeoutError: slow" in warning


def test_with_on_error_skip_only_the_failed_prompt_is_lost() -> None:
    pool = [
        cand("a1", "Alice lives in Rome.", 1, namespace="a"),
        cand("a2", "Alice moved to Paris.", 3, namespace="a"),
        cand("b1", "Bob lives in Oslo.", 2, namespace="b"),
        cand("b2", "Bob moved to Bergen.", 4, namespace="b"),
    ]
    llm = ScriptedLLM(RuntimeError("down"), conflicts_json([1, 2]))
    found = LLMConflictDetector(llm, on_error="skip").find_conflicts(pool)
    assert found == [Conflict(2, 3, "llm", 1.0)]


def test_a_non_string_reply_is_a_failure_of_the_callable() -> None:
    llm = ScriptedLLM(lambda prompt: {"content": "yes"})  # type: ignore[arg-type,return-value]
    with pytest.raises(DetectorError, match="returned a dict, not a str"):
        LLMConflictDetector(llm).find_conflicts(POOL)
    skipping = LLMConflictDetector(llm, on_error="skip")
    assert skipping.find_conflicts(POOL) == []
    assert skipping.stats.errors == 1


def test_keyboard_interrupt_is_never_swallowed() -> None:
    detector = LLMConflictDetector(ScriptedLLM(KeyboardInterrupt()), on_error="skip")
    with pytest.raises(KeyboardInterrupt):
        detector.find_conflicts(POOL)


# -- pairwise mode -------------------------------------------------------------------------------


def pairwise_reply(verdicts: dict[tuple[str, str], str]) -> Callable[[str], str]:
    """Answers by which two statements the prompt shows (older, newer)."""

    def reply(prompt: str) -> str:
        older = re.search(r"Older statement \([^)]*\): (.*)", prompt)
        newer = re.search(r"Newer statement \([^)]*\): (.*)", prompt)
        assert older is not None
        assert newer is not None
        return verdicts.get((older.group(1), newer.group(1)), "no")

    return reply


@pytest.mark.parametrize(
    ("answer", "conflict", "malformed"),
    [
        ("yes", True, 0),
        ("Yes.", True, 0),
        ("**YES** - Maria moved.", True, 0),
        ("Answer: yes", True, 0),
        ('{"conflict": true, "why": "moved"}', True, 0),
        ('```json\n{"conflict": true}\n```', True, 0),
        ("no", False, 0),
        ("No, these are unrelated.", False, 0),
        ('{"conflict": false}', False, 0),
        ("maybe", False, 1),
        ("Yesterday she moved.", False, 1),
        ("None of them.", False, 1),
        ('{"conflict": "yes"}', False, 1),
        ("", False, 1),
    ],
)
def test_pairwise_answers_are_read_as_yes_or_no(
    answer: str, conflict: bool, malformed: int, caplog: pytest.LogCaptureFixture
) -> None:
    verdicts = {("Maria lives in Berlin.", "Maria moved to Lisbon."): answer}
    found, llm, detector = detect(pairwise_reply(verdicts), mode="pairwise")
    assert found == ([Conflict(0, 1, "llm", 1.0)] if conflict else [])
    assert len(llm.prompts) == 3  # (berlin, dog), (berlin, lisbon), (dog, lisbon)
    assert detector.stats == LLMDetectorStats(calls=3, malformed=malformed)
    assert len(warnings_of(caplog)) == malformed


def test_the_pairwise_prompt_shows_both_statements_their_dates_and_the_query() -> None:
    llm = ScriptedLLM("no")
    detector = LLMConflictDetector(llm, mode="pairwise")
    detector.find_conflicts([LISBON, BERLIN], query="Where does Maria live?")
    (prompt,) = llm.prompts
    assert "Older statement (2024-01-01): Maria lives in Berlin." in prompt
    assert "Newer statement (2024-01-09): Maria moved to Lisbon." in prompt
    assert "Where does Maria live?" in prompt
    assert prompt.rstrip().endswith("yes or no.")


def test_pairwise_errors_follow_on_error() -> None:
    with pytest.raises(DetectorError):
        LLMConflictDetector(ScriptedLLM(OSError("x")), mode="pairwise").find_conflicts(POOL)
    skipping = LLMConflictDetector(
        ScriptedLLM(OSError("x"), "yes"), mode="pairwise", on_error="skip"
    )
    assert len(skipping.find_conflicts(POOL)) == 2  # the first of three pairs was lost
    assert skipping.stats == LLMDetectorStats(calls=3, errors=1)


# -- templates and options -----------------------------------------------------------------------


def test_a_custom_template_is_filled_with_the_named_fields() -> None:
    template = 'Q: {query}\n{count} facts:\n{statements}\nReply {{"conflicts": [...]}}'
    llm = ScriptedLLM(conflicts_json([1, 2]))
    found = LLMConflictDetector(llm, template=template).find_conflicts(
        [LISBON, BERLIN], query="where?"
    )
    assert found == [Conflict(1, 0, "llm", 1.0)]
    assert llm.prompts == [
        "Q: where?\n2 facts:\n"
        "1. [2024-01-01] Maria lives in Berlin.\n2. [2024-01-09] Maria moved to Lisbon.\n"
        'Reply {"conflicts": [...]}'
    ]


def test_a_custom_pairwise_template() -> None:
    llm = ScriptedLLM("yes")
    template = "{older_date} {older} | {newer_date} {newer}{query_block}"
    found = LLMConflictDetector(llm, mode="pairwise", template=template).find_conflicts(
        [BERLIN, LISBON]
    )
    assert found == [Conflict(0, 1, "llm", 1.0)]
    assert llm.prompts == ["2024-01-01 Maria lives in Berlin. | 2024-01-09 Maria moved to Lisbon."]


@pytest.mark.parametrize(
    ("template", "mode", "problem"),
    [
        ("List the conflicts.", "set", "has no {statements} field"),
        ("{statements} {stuff}", "set", "unknown field {stuff}"),
        ("{statements} {}", "set", "unknown field {}"),
        ("{statements} {0}", "set", "unknown field {0}"),
        ("{statements.upper}", "set", "unknown field {statements.upper}"),
        ('{statements} answer {"conflicts": []}', "set", 'unknown field {"conflicts"'),
        ("{statements", "set", "not a valid str.format template"),
        ("{statements} }", "set", "not a valid str.format template"),
        ("{statements:d}", "set", "cannot be filled"),
        ("{statements:{width}}", "set", "cannot be filled"),
        ("{older} then what?", "pairwise", "has no {newer} field"),
        ("{statements}", "pairwise", "unknown field {statements}"),
        ("{older} {newer}", "set", "unknown field {older}"),
    ],
)
def test_a_bad_template_is_refused_naming_the_field(template: str, mode: str, problem: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(problem)) as caught:
        LLMConflictDetector(ScriptedLLM(), template=template, mode=mode)  # type: ignore[arg-type]
    assert caught.value.field == "template"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"mode": "batch"}, "mode"),
        ({"on_error": "ignore"}, "on_error"),
        ({"max_candidates": 1}, "max_candidates"),
        ({"max_candidates": True}, "max_candidates"),
        ({"max_candidates": 10.0}, "max_candidates"),
        ({"name": ""}, "name"),
        ({"template": 42}, "template"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        LLMConflictDetector(ScriptedLLM(), **options)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="llm"):
        LLMConflictDetector("gpt-4")  # type: ignore[arg-type]
    detector = LLMConflictDetector(ScriptedLLM())
    with pytest.raises(InvalidInputError, match=r"candidates\[1\]"):
        detector.find_conflicts([BERLIN, "Maria moved."])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="query"):
        detector.find_conflicts(POOL, query=3)  # type: ignore[arg-type]


# -- through Phi_T, concurrency, and any output at all -------------------------------------------


def test_end_to_end_a_chain_keeps_only_the_newest() -> None:
    a = cand("a", "Maria lives in Berlin.", 1)
    b = cand("b", "Maria moved to Madrid.", 5)
    c = cand("c", "Maria moved to Lisbon.", 9)
    detector = LLMConflictDetector(ScriptedLLM(conflicts_json([1, 2], [2, 3])), name="judge")
    result = temporal_dominance([c, a, b], detector, query="Where does Maria live?")
    assert result.kept == (c,)
    assert {(s.candidate.id, s.dominated_by, s.detector, s.score) for s in result.shadows} == {
        ("a", "b", "judge", 1.0),
        ("b", "c", "judge", 1.0),
    }


def test_counters_are_exact_under_concurrent_use() -> None:
    detector = LLMConflictDetector(ScriptedLLM("not json"), on_error="skip")
    threads = [
        threading.Thread(target=lambda: [detector.find_conflicts(POOL) for _ in range(50)])
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert detector.stats == LLMDetectorStats(calls=400, malformed=400)


PROPERTY_POOL = [
    cand("p0", "a", 3),
    cand("p1", "b", 1),
    cand("p2", "c", 3),  # same time as p0
    cand("p3", "d", None),
    cand("p4", "e", 2, namespace="other"),
    cand("p5", "f", 7),
    cand("p6", "g", 5, namespace="other"),
]

json_like_answers = st.builds(
    lambda pairs, wrap: wrap.format(json.dumps({"conflicts": pairs})),
    st.lists(
        st.one_of(
            st.tuples(st.integers(1, 4), st.integers(1, 4)).map(list),  # mostly plausible pairs
            st.lists(st.integers(-2, 8), min_size=0, max_size=3),
            st.integers(),
            st.text(max_size=3),
            st.none(),
        ),
        max_size=8,
    ),
    st.sampled_from(["{0}", "```json\n{0}\n```", "Sure: {0} ok", "{0}{0}"]),
)
answers = st.one_of(st.text(), json_like_answers, st.sampled_from(["yes", "no", "Yes!"]))


@settings(max_examples=300, deadline=None)
@given(
    answer=answers,
    mode=st.sampled_from(["set", "pairwise"]),
    max_candidates=st.sampled_from([None, 2, 3]),
)
def test_any_output_never_raises_and_yields_only_valid_older_newer_pairs(
    answer: str, mode: str, max_candidates: int | None
) -> None:
    detector = LLMConflictDetector(
        ScriptedLLM(answer),
        mode=mode,  # type: ignore[arg-type]
        max_candidates=max_candidates,
    )
    found = detector.find_conflicts(PROPERTY_POOL, query="q")
    assert len({(c.older, c.newer) for c in found}) == len(found)
    for conflict in found:
        assert 0 <= conflict.older < len(PROPERTY_POOL)
        assert 0 <= conflict.newer < len(PROPERTY_POOL)
        assert PROPERTY_POOL[conflict.newer].is_newer_than(PROPERTY_POOL[conflict.older])
        assert (conflict.detector, conflict.score) == ("llm", 1.0)
    assert detector.stats.errors == 0
