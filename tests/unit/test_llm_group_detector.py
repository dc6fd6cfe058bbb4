"""The LLM group detector, driven by fake LLMs: one prompt per retrieved set, the newest of each
group wins, never across speakers or namespaces, and every doubtful answer keeps chunks."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_temporal import TemporalDocumentCompressor
from shared_core import LLMGroupDetector
from shared_core.clock import ManualClock
from shared_core.detectors.llm_groups import GROUP_TEMPLATE, GROUPS_SCHEMA, GroupDetectorStats
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import DetectorError, InvalidInputError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.llm_calls import TextLLMPair
from shared_core.llms import LLMStats
from shared_core.memory import MemoryConfig, TemporalMemory
from shared_core.phi_t import Candidate, ConflictDetector, temporal_dominance

LINE = re.compile(r"^(\d+)\. \[([^\]]*)\] (.*)$", re.MULTILINE)
TOPICS = {"live in": "home", "moved to": "home", "manager": "manager"}


def lines(prompt: str) -> list[tuple[int, str]]:
    """The prompt's numbered chunks: (number, text)."""
    return [(int(m.group(1)), m.group(3)) for m in LINE.finditer(prompt)]


def by_topic(prompt: str) -> str:
    """A model that groups chunks by what they are about, ignoring who said them."""
    groups: dict[str, list[int]] = {}
    for number, text in lines(prompt):
        topic = next((t for w, t in TOPICS.items() if w in text), None)
        if topic is not None:
            groups.setdefault(topic, []).append(number)
    return json.dumps({"groups": [g for g in groups.values() if len(g) > 1], "unsure": []})


class Scripted:
    """Returns one reply (or a function of the prompt) and records every prompt."""

    def __init__(self, reply: str | Callable[[str], str] | BaseException) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply(prompt) if callable(self.reply) else self.reply


def at(day: int | None) -> datetime | None:
    return None if day is None else datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=day)


def cand(cid: str, text: str, day: int | None, user: str | None = "ana", **kw: Any) -> Candidate:
    metadata = {} if user is None else {"user_id": user}
    return Candidate(id=cid, text=text, timestamp=at(day), metadata=metadata, **kw)


BERLIN = cand("berlin", "I live in Berlin.", 1)
CAT = cand("cat", "I have a cat.", 3)
LISBON = cand("lisbon", "I moved to Lisbon.", 5)
POOL = [LISBON, CAT, BERLIN]  # rank order; the prompt numbers them oldest first


def kept_ids(pool: list[Candidate], detector: LLMGroupDetector) -> list[str]:
    return [c.id for c in temporal_dominance(pool, detector).kept]


def test_the_newest_chunk_of_a_group_wins_and_the_older_ones_are_dropped() -> None:
    llm = Scripted(json.dumps({"groups": [[1, 3]], "unsure": []}))
    detector = LLMGroupDetector(llm)
    assert isinstance(detector, ConflictDetector)
    result = temporal_dominance(POOL, detector)
    assert [c.id for c in result.kept] == ["lisbon", "cat"]
    assert [(s.candidate.id, s.dominated_by, s.detector) for s in result.shadows] == [
        ("berlin", "lisbon", "llm-groups")
    ]
    assert detector.stats.calls == len(llm.prompts) == 1


def test_the_prompt_numbers_dated_chunks_oldest_first_with_dates_and_speakers() -> None:
    llm = Scripted('{"groups": [], "unsure": []}')
    undated = cand("undated", "I moved to Rome.", None)
    LLMGroupDetector(llm).find_conflicts([*POOL, undated], query="Where do I live?")
    (prompt,) = llm.prompts
    assert lines(prompt) == [
        (1, "I live in Berlin."),
        (2, "I have a cat."),
        (3, "I moved to Lisbon."),
    ]
    assert "1. [2024-01-02, speaker ana] I live in Berlin." in prompt
    assert "Rome" not in prompt  # an undated chunk can neither drop nor be dropped
    assert "Where do I live?" not in prompt  # one retrieved set, one cache entry
    chunks = (
        "1. [2024-01-02, speaker ana] I live in Berlin.\n"
        "2. [2024-01-04, speaker ana] I have a cat.\n"
        "3. [2024-01-06, speaker ana] I moved to Lisbon."
    )
    assert prompt == GROUP_TEMPLATE.format(chunks=chunks)


def test_chunks_of_different_speakers_are_never_grouped() -> None:
    bo_berlin = cand("bo-berlin", "I live in Berlin.", 2, user="bo")
    bo_paris = cand("bo-paris", "I moved to Paris.", 6, user="bo")
    nobody = cand("nobody", "I moved to Oslo.", 7, user=None)
    pool = [LISBON, bo_paris, BERLIN, bo_berlin, nobody]
    detector = LLMGroupDetector(by_topic)  # groups all five "home" chunks as one
    assert kept_ids(pool, detector) == ["lisbon", "bo-paris", "nobody"]
    # another speaker field: all of them one speaker's but the one without it
    other = LLMGroupDetector(by_topic, speaker_field="speaker")
    assert kept_ids(pool, other) == ["nobody"]
    assert kept_ids(pool, LLMGroupDetector(by_topic, speaker_field=None)) == ["nobody"]


def test_chunks_of_different_namespaces_are_never_grouped() -> None:
    elsewhere = cand("elsewhere", "I moved to Paris.", 9, namespace="work")
    detector = LLMGroupDetector(by_topic)
    assert kept_ids([LISBON, BERLIN, elsewhere], detector) == ["lisbon", "elsewhere"]


@pytest.mark.parametrize(
    "group",
    [[1, 4], [0, 3], [3], [3, 3], ["1", "3"], [1.0, 3], [True, 3], "1,3", {"older": 1}],
)
def test_a_group_out_of_range_of_one_chunk_or_not_of_numbers_is_ignored(
    group: object, caplog: pytest.LogCaptureFixture
) -> None:
    detector = LLMGroupDetector(Scripted(json.dumps({"groups": [group, [2, 3]]})))
    with caplog.at_level(logging.WARNING):
        assert kept_ids(POOL, detector) == ["lisbon", "berlin"]  # only [2, 3]: the cat goes
    assert kept_ids(POOL, detector) == ["lisbon", "berlin"]  # only [2, 3]: the cat goes
    assert detector.stats.groups_ignored == 1  # read once, then answered from the cache
    assert any("ignored 1 group" in r.getMessage() for r in caplog.records)


def test_unsure_groups_keep_their_chunks() -> None:
    detector = LLMGroupDetector(Scripted('{"groups": [], "unsure": [[1, 3]]}'))
    assert kept_ids(POOL, detector) == ["lisbon", "cat", "berlin"]
    assert detector.stats.unsure == 1


def test_equal_valid_times_drop_nothing() -> None:
    same_day = cand("same-day", "I moved to Porto.", 5)
    pool = [LISBON, same_day, BERLIN]
    detector = LLMGroupDetector(by_topic)
    # Berlin is older than both; Lisbon and Porto share the newest time: both stay
    assert kept_ids(pool, detector) == ["lisbon", "same-day"]
    only_ties = LLMGroupDetector(Scripted('{"groups": [[2, 3]]}'))
    assert kept_ids(pool, only_ties) == ["lisbon", "same-day", "berlin"]


@pytest.mark.parametrize(
    "answer",
    ["", "no groups here", '{"conflicts": [[1, 3]]}', '{"groups": "1,3"}', "[[1, 3]]", "{"],
)
def test_a_malformed_answer_drops_nothing_and_is_counted_and_logged(
    answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    llm = Scripted(answer)
    detector = LLMGroupDetector(llm)
    with caplog.at_level(logging.WARNING):
        assert kept_ids(POOL, detector) == ["lisbon", "cat", "berlin"]
        assert kept_ids(POOL, detector) == ["lisbon", "cat", "berlin"]
    assert detector.stats == GroupDetectorStats(calls=2, malformed=2)  # not cached: asked again
    assert any("malformed answer" in r.getMessage() for r in caplog.records)


def test_an_answer_in_prose_or_a_fence_is_read() -> None:
    fenced = 'Sure!\n```json\n{"groups": [[1, 3]], "unsure": []}\n```'
    assert kept_ids(POOL, LLMGroupDetector(Scripted(fenced))) == ["lisbon", "cat"]
    inline = 'The answer is {"groups": [[3, 1]]} as asked.'
    assert kept_ids(POOL, LLMGroupDetector(Scripted(inline))) == ["lisbon", "cat"]


def test_no_call_is_made_when_nothing_could_be_dropped() -> None:
    llm = Scripted(by_topic)
    detector = LLMGroupDetector(llm)
    bo = cand("bo", "I moved to Paris.", 9, user="bo")
    undated = cand("undated", "I live in Rome.", None)
    for pool in ([], [LISBON], [LISBON, bo], [LISBON, undated], [LISBON, cand("x", "y", 5)]):
        assert detector.find_conflicts(pool) == []
    assert llm.prompts == []
    assert detector.stats == GroupDetectorStats()


def test_a_retrieved_set_asked_again_is_answered_from_the_cache() -> None:
    llm = Scripted(by_topic)
    detector = LLMGroupDetector(llm, cache_size=1)
    first = detector.find_conflicts(POOL, query="Where do I live?")
    assert detector.find_conflicts(list(reversed(POOL)), query="Where is home?") != []
    assert detector.find_conflicts(POOL) == first
    assert (detector.stats.calls, detector.stats.cache_hits) == (1, 2)
    detector.find_conflicts([LISBON, BERLIN])  # another set evicts the first (size 1)
    detector.find_conflicts(POOL)
    assert detector.stats.calls == 3
    uncached = LLMGroupDetector(llm, cache_size=0)
    uncached.find_conflicts(POOL)
    uncached.find_conflicts(POOL)
    assert (uncached.stats.calls, uncached.stats.cache_hits) == (2, 0)


class CountingLLM:
    """A model that reports its generated tokens, as LocalLLM does (``stats``)."""

    def __init__(self) -> None:
        self.stats = LLMStats()

    def __call__(self, prompt: str) -> str:
        answer = by_topic(prompt)
        self.stats = LLMStats(
            calls=self.stats.calls + 1, generated_tokens=self.stats.generated_tokens + 7
        )
        return answer


def test_generated_tokens_are_counted_when_the_llm_reports_them() -> None:
    counted = LLMGroupDetector(CountingLLM())
    counted.find_conflicts(POOL)
    counted.find_conflicts([LISBON, BERLIN])
    counted.find_conflicts(POOL)  # cached: no tokens
    assert (counted.stats.calls, counted.stats.generated_tokens) == (2, 14)
    silent = LLMGroupDetector(by_topic)
    silent.find_conflicts(POOL)
    assert silent.stats.generated_tokens is None


def test_a_failing_llm_raises_a_detector_error_or_drops_nothing_when_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = ConnectionError("server down")
    with pytest.raises(DetectorError, match=r"llm-groups.*ConnectionError") as raised:
        LLMGroupDetector(Scripted(broken)).find_conflicts(POOL)
    assert raised.value.__cause__ is broken
    skipping = LLMGroupDetector(Scripted(broken), on_error="skip")
    with caplog.at_level(logging.WARNING):
        assert kept_ids(POOL, skipping) == ["lisbon", "cat", "berlin"]
    assert (skipping.stats.calls, skipping.stats.errors) == (1, 1)
    not_text = LLMGroupDetector(lambda prompt: 42, on_error="skip")  # type: ignore[arg-type,return-value]
    assert not_text.find_conflicts(POOL) == []
    assert not_text.stats.errors == 1


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"speaker_field": ""}, "speaker_field"),
        ({"speaker_field": 3}, "speaker_field"),
        ({"on_error": "ignore"}, "on_error"),
        ({"cache_size": -1}, "cache_size"),
        ({"cache_size": True}, "cache_size"),
        ({"name": ""}, "name"),
        ({"template": "no field"}, "template"),
        ({"template": "{chunks} {unknown}"}, "template"),
        ({"template": "{chunks} {"}, "template"),
        ({"template": 3}, "template"),
    ],
)
def test_bad_options_are_refused_naming_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        LLMGroupDetector(by_topic, **options)
    with pytest.raises(InvalidInputError, match="llm"):
        LLMGroupDetector("not callable")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"candidates\[0\]"):
        LLMGroupDetector(by_topic).find_conflicts(["text"])  # type: ignore[list-item]


def test_a_custom_template_is_used() -> None:
    llm = Scripted(by_topic)
    detector = LLMGroupDetector(llm, template="Q: {query}\n{count} chunks:\n{chunks}\nJSON:")
    assert kept_ids(POOL, detector) == ["lisbon", "cat"]
    assert llm.prompts[0].startswith("Q: \n3 chunks:\n1. [")


def test_the_schema_accepts_the_answers_the_prompt_asks_for() -> None:
    for answer in ('{"groups": [[1, 4], [2, 3]], "unsure": []}', '{"groups": [], "unsure": []}'):
        jsonschema.validate(json.loads(answer), GROUPS_SCHEMA)
    for bad in ({"groups": [[1]], "unsure": []}, {"groups": [[0, 1]], "unsure": []}, {}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, GROUPS_SCHEMA)
    assert '{"groups": [[1, 4], [2, 3]], "unsure": []}' in GROUP_TEMPLATE.format(chunks="")


# ---------------------------------------------------------------- sync and async
def pair(rule: Callable[[str], str]) -> TextLLMPair:
    async def asynchronous(prompt: str) -> str:
        return rule(prompt)

    return TextLLMPair(rule, asynchronous, name="fake")


@pytest.mark.parametrize("answer", ['{"groups": [[1, 3]]}', '{"groups": [[1, 2, 3]]}', "junk"])
def test_sync_and_async_give_the_same_conflicts(answer: str) -> None:
    async def async_only(prompt: str) -> str:
        return answer

    pool = [*POOL, cand("bo", "I moved to Paris.", 9, user="bo")]
    sync = LLMGroupDetector(pair(lambda prompt: answer)).find_conflicts(pool)
    for llm in (pair(lambda prompt: answer), async_only, lambda prompt: answer):
        detector = LLMGroupDetector(llm)
        assert asyncio.run(detector.afind_conflicts(pool)) == sync
        assert detector.stats.calls == 1


# ---------------------------------------------------------------- invariants
SPEAKERS = st.sampled_from(["ana", "bo", None])


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(st.tuples(st.integers(0, 4), SPEAKERS), min_size=0, max_size=7),
    groups=st.lists(st.lists(st.integers(-1, 9), max_size=5), max_size=4),
)
def test_whatever_the_model_says_the_newest_chunk_of_each_speaker_stays(
    chunks: list[tuple[int, str | None]], groups: list[list[int]]
) -> None:
    pool = [cand(f"c{i}", f"text {i}", day, user) for i, (day, user) in enumerate(chunks)]
    detector = LLMGroupDetector(Scripted(json.dumps({"groups": groups})))
    result = temporal_dominance(pool, detector)
    kept = {c.id for c in result.kept}
    for candidate in pool:
        peers = [c for c in pool if c.metadata == candidate.metadata]
        if candidate.timestamp == max(c.timestamp for c in peers if c.timestamp is not None):
            assert candidate.id in kept
    by_id = {c.id: c for c in pool}
    for shadow in result.shadows:
        winner = by_id[shadow.dominated_by]
        assert winner.metadata == shadow.candidate.metadata  # the same speaker
        assert winner.is_newer_than(shadow.candidate)


# ---------------------------------------------------------------- through the memory and adapters
@pytest.fixture
def memory() -> Any:
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    config = MemoryConfig(embedder=HashingEmbedder(128), clock=clock)
    with TemporalMemory(ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config) as m:
        for text, day, user in [
            ("I live in Berlin.", 1, "ana"),
            ("I live in Berlin.", 2, "bo"),
            ("I have a cat.", 3, "ana"),
            ("I moved to Lisbon.", 5, "ana"),
        ]:
            m.add(text, valid_from=at(day), metadata={"user_id": user})
        yield m


def test_memory_search_with_the_group_detector_drops_the_speakers_stale_chunk(
    memory: TemporalMemory,
) -> None:
    detector = LLMGroupDetector(by_topic)
    hits = memory.search("Where do I live?", k=5, detector=detector)
    found = [(h.fact.text, h.fact.metadata["user_id"]) for h in hits]
    assert ("I moved to Lisbon.", "ana") in found
    assert ("I live in Berlin.", "bo") in found  # another speaker's: kept
    assert ("I live in Berlin.", "ana") not in found
    lisbon = next(h for h in hits if h.fact.text == "I moved to Lisbon.")
    assert [s.candidate.text for s in lisbon.shadows] == ["I live in Berlin."]
    again = asyncio.run(
        memory.asearch("Where do I live?", k=5, detector=LLMGroupDetector(pair(by_topic)))
    )
    assert again == hits
    assert detector.stats.calls == 1


def test_the_langchain_compressor_passes_the_speaker_to_the_group_detector() -> None:
    documents = [
        Document(
            "I live in Berlin.", metadata={"valid_from": "2024-01-01T00:00:00Z", "user_id": "ana"}
        ),
        Document(
            "I moved to Paris.", metadata={"valid_from": "2024-03-01T00:00:00Z", "user_id": "bo"}
        ),
        Document(
            "I moved to Lisbon.",
            metadata={"valid_from": datetime(2024, 2, 1, tzinfo=UTC), "user_id": "ana"},
        ),
    ]
    compressor = TemporalDocumentCompressor(detector=LLMGroupDetector(by_topic))
    kept = compressor.compress_documents(documents, "Where do I live?")
    assert [d.page_content for d in kept] == ["I moved to Paris.", "I moved to Lisbon."]
    assert [s["id"] for s in kept[1].metadata["shadows"]] == [None]
    assert kept[1].metadata["shadows"][0]["text"] == "I live in Berlin."
    again = asyncio.run(compressor.acompress_documents(documents, "Where do I live?"))
    assert again == kept
