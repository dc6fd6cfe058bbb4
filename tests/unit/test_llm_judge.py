"""LLMExtractor as a write-time judge (issue 31, items 2, 4, 5): key-aware, batched, decided by
deterministic rules after the model. Batches are built directly (InMemoryLedger + NumpyIndex +
HashingEmbedder); what a judgement says to write is written as the memory's writer will."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared_core.clock import ManualClock, to_instant
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import CardinalityConflictError
from shared_core.extractors.base import VALID_FROM_SOURCE
from shared_core.facts import Cardinality, Fact
from shared_core.index.base import Vector
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging import Judge, Judgement, LLMExtractor, WriteBatch
from shared_core.judging.base import AsyncJudge, flattened
from shared_core.judging.llm_format import ANSWER_SCHEMA
from shared_core.ledger import InMemoryLedger
from shared_core.memory.index_sync import IndexSync
from tests.keying_llm import BatchLLM, prompt_statements

EMBEDDER = HashingEmbedder(64)
Known = list[tuple[str, str, str]]


def d(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


class Store:
    """A ledger and its index: builds write batches and writes judgements."""

    def __init__(self, embed: Callable[[Sequence[str]], list[Vector]] | None = None) -> None:
        self.clock = ManualClock(d(2025))
        self.ledger = InMemoryLedger(clock=self.clock)
        self.index = NumpyIndex()
        self.index.bind(embedder=EMBEDDER.name, dimension=EMBEDDER.dimension)
        self.sync = IndexSync(self.ledger, self.index, EMBEDDER)
        self.embed = embed or EMBEDDER.embed_documents

    def batch(
        self,
        texts: Sequence[str],
        speakers: Sequence[str | None] | None = None,
        *,
        valid_from: datetime | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> WriteBatch:
        statements = tuple(
            Fact(text=t, valid_from=valid_from, metadata=metadata or {}) for t in texts
        )
        return WriteBatch(
            statements=statements,
            speakers=tuple(speakers or [None] * len(texts)),
            vectors=dict(zip(texts, EMBEDDER.embed_documents(list(texts)), strict=True)),
            ledger=self.ledger,
            index=self.index,
            now=to_instant(self.clock.now()),
            embed=self.embed,
        )

    def write(self, judgement: Judgement) -> None:
        for relation, cardinality in judgement.cardinalities:
            with contextlib.suppress(CardinalityConflictError):  # the first declaration wins
                self.ledger.declare(relation, cardinality)
        self.ledger.write_many(flattened(judgement))
        self.sync.catch_up()

    def judged(self, judge: LLMExtractor, texts: Sequence[str], *speakers: str | None) -> Judgement:
        judgement = judge.judge(self.batch(texts, speakers or None))
        self.write(judgement)
        self.clock.set(self.clock.now() + timedelta(days=1))
        return judgement

    def current(self, subject: str, relation: str) -> list[object]:
        return [f.object for f in self.ledger.current(subject=subject, relation=relation)]


def known_number(known: Known, relation: str) -> int | None:
    return next((n for n, k in enumerate(known, start=1) if k[1] == relation), None)


def chat_rule(text: str, known: Known) -> list[dict[str, Any]]:
    """A model that reuses a shown key when it knows the attribute, else proposes one."""
    rules = {
        "I live in Berlin.": ("lives in", "Berlin", "one"),
        "I live in Paris.": ("lives in", "Paris", "one"),
        "Just moved to Lisbon!": ("lives in", "Lisbon", "one"),
        "I'm allergic to peanuts.": ("allergic to", "peanuts", "many"),
        "I'm also allergic to shellfish.": ("allergic to", "shellfish", "many"),
    }
    if text not in rules:
        return []
    relation, value, card = rules[text]
    number = known_number(known, relation)
    if number is not None:
        return [{"k": number, "object": value}]
    return [{"subject": "I", "relation": relation, "object": value, "card": card}]


def judge_of(rule: Callable[[str, Known], list[dict[str, Any]]], **options: Any) -> LLMExtractor:
    return LLMExtractor(BatchLLM(rule), **options)


def test_it_implements_the_judging_port() -> None:
    judge = judge_of(chat_rule)
    assert isinstance(judge, Judge)
    assert isinstance(judge, AsyncJudge)
    assert ANSWER_SCHEMA["required"] == ["facts"]


# ---------------------------------------------------------------- defect 2: multi-valued
def test_a_second_allergy_does_not_close_the_first() -> None:
    store, judge = Store(), judge_of(chat_rule)
    first = store.judged(judge, ["I'm allergic to peanuts."], "ana")
    assert first.cardinalities == (("allergic_to", Cardinality.MANY),)
    store.judged(judge, ["I'm also allergic to shellfish."], "ana")
    assert sorted(store.current("ana", "allergic_to")) == ["peanuts", "shellfish"]


def test_the_local_model_calling_allergies_single_valued_does_not_close_the_first() -> None:
    # what Qwen2.5-Coder 1.5B answered: "card": "one" for "allergic to", the prompt notwithstanding
    def sure_it_is_one(text: str, known: Known) -> list[dict[str, Any]]:
        value = text.removesuffix(".").split()[-1]
        return [{"subject": "I", "relation": "allergic to", "object": value, "card": "one"}]

    store, judge = Store(), judge_of(sure_it_is_one)
    first = store.judged(judge, ["I'm allergic to peanuts."], "ana")
    assert first.cardinalities == (("allergic_to", Cardinality.MANY),)  # the word says it adds up
    store.judged(judge, ["I'm allergic to shellfish."], "ana")
    assert sorted(store.current("ana", "allergic_to")) == ["peanuts", "shellfish"]


def test_a_statement_adding_a_value_never_closes_a_single_valued_key() -> None:
    def one_car(text: str, known: Known) -> list[dict[str, Any]]:
        value = {"I drive a Volvo.": "Volvo", "I drive a Tesla too.": "Tesla"}[text]
        return [{"subject": "I", "relation": "drives", "object": value, "card": "one"}]

    store, judge = Store(), judge_of(one_car)
    store.judged(judge, ["I drive a Volvo."], "ana")
    added = store.judged(judge, ["I drive a Tesla too."], "ana")
    assert store.current("ana", "drives") == ["Volvo"]
    (extraction,) = added.extractions.values()
    assert extraction.problem_kind == "dropped"
    assert "adds one" in (extraction.problem or "")
    assert added.statements[0][0].key is None  # kept as prose


def test_the_old_value_named_as_subject_is_read_as_the_known_keys_subject() -> None:
    # what the 1.5B answered for "Tom left, Priya is my manager now.": Tom | manager | Priya
    def tom_as_subject(text: str, known: Known) -> list[dict[str, Any]]:
        if text == "My manager is Tom.":
            return [{"subject": "I", "relation": "manager", "object": "Tom", "card": "one"}]
        return [{"subject": "Tom", "relation": "manager", "object": "Priya", "card": "one"}]

    store, judge = Store(), judge_of(tom_as_subject)
    store.judged(judge, ["My manager is Tom."], "ana")
    store.judged(judge, ["Tom left, Priya is my manager now."], "ana")
    assert store.current("ana", "manager") == ["Priya"]
    assert store.current("ana::tom", "manager") == []


def test_a_new_relation_the_model_is_unsure_of_is_many() -> None:
    def unsure(text: str, known: Known) -> list[dict[str, Any]]:
        return [{"subject": "I", "relation": "speaks", "object": "Basque"}]

    judgement = judge_of(unsure).judge(Store().batch(["I speak Basque."]))
    assert judgement.cardinalities == (("speaks", Cardinality.MANY),)


# ---------------------------------------------------------------- defect 4: stable keys
def test_restatements_reuse_one_key() -> None:
    def answer_as_subject(text: str, known: Known) -> list[dict[str, Any]]:
        number = known_number(known, "lives in")
        if text == "Just moved to Lisbon!" and number is None:  # what the 1.5B did
            return [{"subject": "Lisbon", "relation": "is", "object": "Lisbon", "card": "one"}]
        return chat_rule(text, known)

    store, llm = Store(), BatchLLM(answer_as_subject)
    judge = LLMExtractor(llm)
    store.judged(judge, ["I live in Berlin."], "ana")
    store.judged(judge, ["Just moved to Lisbon!"], "ana")
    assert "K1: I | lives in | one" in llm.prompts[-1]
    assert store.current("ana", "lives_in") == ["Lisbon"]
    (berlin, lisbon) = store.ledger.history("ana", "lives_in")
    assert berlin.valid_to is not None
    assert lisbon.valid_to is None


def test_a_reworded_relation_is_canonicalised() -> None:
    def synonyms(texts: Sequence[str]) -> list[Vector]:
        return EMBEDDER.embed_documents([t.replace("resides", "lives") for t in texts])

    def reworded(text: str, known: Known) -> list[dict[str, Any]]:
        relation = "resides in" if "Lisbon" in text else "lives in"
        value = "Lisbon" if "Lisbon" in text else "Berlin"
        facts = [{"subject": "I", "relation": relation, "object": value, "card": "one"}]
        if "Acme" in text:
            facts = [{"subject": "I", "relation": "works at", "object": "Acme", "card": "one"}]
        return facts

    store, judge = Store(embed=synonyms), judge_of(reworded)
    store.judged(judge, ["I live in Berlin."], "ana")
    moved = store.judged(judge, ["I reside in Lisbon now."], "ana")
    (fact,) = moved.statements[0]
    assert fact.key is not None
    assert fact.key.relation == "lives_in"
    assert moved.cardinalities == ()  # a known relation is never redeclared
    assert store.current("ana", "lives_in") == ["Lisbon"]
    store.judged(judge, ["I work at Acme."], "ana")  # another attribute: its own key
    assert store.current("ana", "lives_in") == ["Lisbon"]
    assert store.current("ana", "works_at") == ["Acme"]


@pytest.mark.parametrize("invented", ["4", True, 4])
def test_an_invented_object_is_dropped(invented: object) -> None:
    def inventing(text: str, known: Known) -> list[dict[str, Any]]:
        return [{"subject": "Vegas", "relation": "has casinos", "object": invented, "card": "one"}]

    batch = Store().batch(["Vegas has many casinos."])
    judgement = judge_of(inventing).judge(batch)
    assert judgement.statements[0] == batch.statements  # kept as prose
    extraction = judgement.extractions[0]
    assert extraction.problem_kind == "dropped"
    assert extraction.problem is not None
    assert "is not written in the statement" in extraction.problem


def test_a_questions_answer_is_not_a_fact() -> None:
    def answering(text: str, known: Known) -> list[dict[str, Any]]:
        return [{"subject": "I", "relation": "manager", "object": "Priya", "card": "one"}]

    judgement = judge_of(answering).judge(Store().batch(["Is Priya my manager now?"]))
    assert judgement.extractions[0].problem_kind == "dropped"
    stated = judge_of(answering).judge(Store().batch(["Is it Tom? No: Priya is my manager."]))
    assert [f.object for f in stated.statements[0]] == ["Priya"]


def test_an_unknown_key_number_is_dropped_not_guessed() -> None:
    store = Store()
    store.judged(judge_of(chat_rule), ["I live in Berlin."], "ana")
    judge = judge_of(lambda text, known: [{"k": 7, "object": "Lisbon"}])
    batch = store.batch(["Just moved to Lisbon!"], ["ana"])
    judgement = judge.judge(batch)
    assert judgement.statements[0] == batch.statements
    extraction = judgement.extractions[0]
    assert extraction.problem_kind == "dropped"
    assert "known key number 7 is not in the prompt" in (extraction.problem or "")


# ---------------------------------------------------------------- defect 3: speakers
def test_known_keys_of_another_speaker_are_never_shown() -> None:
    store, llm = Store(), BatchLLM(chat_rule)
    judge = LLMExtractor(llm)
    store.judged(judge, ["I live in Paris."], "bo")
    judgement = store.judged(judge, ["I live in Berlin.", "I live in Paris."], "ana", "bo")
    ana_prompt, bo_prompt = llm.prompts[-2:]
    assert "K1:" not in ana_prompt  # Ana holds no key yet: any known key would be Bo's
    assert "K1: I | lives in | one" in bo_prompt
    assert [f.subject for group in judgement.statements for f in group] == ["ana", "bo"]
    assert store.current("bo", "lives_in") == ["Paris"]
    assert store.current("ana", "lives_in") == ["Berlin"]


def test_a_named_subject_is_scoped_to_its_speaker() -> None:
    def manager(text: str, known: Known) -> list[dict[str, Any]]:
        return [{"subject": "Tom", "relation": "works at", "object": "Acme", "card": "one"}]

    judgement = judge_of(manager).judge(Store().batch(["Tom works at Acme."], ["ana"]))
    assert judgement.statements[0][0].subject == "ana::tom"


# ---------------------------------------------------------------- defect 5: problems counted
def test_an_empty_extraction_is_counted() -> None:
    batch = Store().batch(["Nice weather today."])
    judgement = judge_of(chat_rule).judge(batch)
    assert judgement.statements[0] == batch.statements
    assert judgement.extractions[0].problem_kind == "empty"


def test_a_failed_call_keeps_every_statement_as_prose() -> None:
    def down(prompt: str) -> str:
        raise TimeoutError("no answer")

    batch = Store().batch(["I live in Berlin.", "Just moved to Lisbon!"])
    judgement = LLMExtractor(down, on_error="prose").judge(batch)
    assert flattened(judgement) == list(batch.statements)
    assert {e.problem_kind for e in judgement.extractions.values()} == {"failed"}


# ---------------------------------------------------------------- defect 6: cost
def test_calls_per_statement_stay_under_a_quarter_for_16_statements() -> None:
    def city(text: str, known: Known) -> list[dict[str, Any]]:
        return [{"subject": "I", "relation": "visited", "object": text.split()[-1].strip(".")}]

    texts = [f"Yesterday I visited City{n}." for n in range(16)]
    llm = BatchLLM(city)
    judge = LLMExtractor(llm)
    judgement = judge.judge(Store().batch(texts, ["ana"] * 16))
    assert judge.stats.calls / judge.stats.statements <= 0.25
    assert judge.stats.calls_per_statement == 2 / 16
    assert judge.stats.generated_tokens == llm.stats.generated_tokens
    assert [f.object for f in flattened(judgement)] == [f"City{n}" for n in range(16)]


def test_a_cache_hit_makes_no_call() -> None:
    store, llm = Store(), BatchLLM(chat_rule)
    judge = LLMExtractor(llm)
    first = judge.judge(store.batch(["I live in Berlin."], ["ana"]))
    again = judge.judge(store.batch(["I live in Berlin."], ["ana"]))
    assert len(llm.prompts) == 1
    assert (judge.stats.calls, judge.stats.cache_hits) == (1, 1)
    assert [f.object for f in flattened(again)] == [f.object for f in flattened(first)]
    uncached = LLMExtractor(llm, cache_size=0)
    uncached.judge(store.batch(["I live in Berlin."], ["ana"]))
    uncached.judge(store.batch(["I live in Berlin."], ["ana"]))
    assert uncached.stats.calls == 2


def test_sync_and_async_judges_agree() -> None:
    texts = [
        "I live in Berlin.",
        "I'm allergic to peanuts.",
        "Just moved to Lisbon!",
        "Nice weather today.",
        "I'm also allergic to shellfish.",
    ]
    speakers = ["ana", "ana", "ana", "bo", "ana"]
    store = Store()
    sync_llm, async_llm = BatchLLM(chat_rule), BatchLLM(chat_rule)
    options: dict[str, Any] = {"batch_size": 2, "max_concurrency": 2}
    batch = store.batch(texts, speakers)
    sync = LLMExtractor(sync_llm, **options).judge(batch)
    asynchronous = asyncio.run(LLMExtractor(async_llm, **options).ajudge(batch))
    assert sync_llm.prompts == async_llm.prompts
    assert len(sync_llm.prompts) == 3  # ana's 4 statements in 2 calls, bo's in 1

    def keys(judgement: Judgement) -> list[tuple[object, ...]]:
        return [(f.subject, f.relation, f.object) for f in flattened(judgement)]

    assert keys(sync) == keys(asynchronous)
    assert sync.cardinalities == asynchronous.cardinalities
    assert sync.extractions == asynchronous.extractions


def test_a_later_wave_is_shown_the_keys_an_earlier_one_proposed() -> None:
    store, llm = Store(), BatchLLM(chat_rule)
    judge = LLMExtractor(llm, batch_size=1, max_concurrency=1)
    judgement = judge.judge(
        store.batch(["I live in Berlin.", "Just moved to Lisbon!"], ["ana"] * 2)
    )
    assert "K1: I | lives in | one" in llm.prompts[1]
    assert [f.key for f in flattened(judgement)] == [flattened(judgement)[0].key] * 2


# ---------------------------------------------------------------- item 4: time
def test_the_callers_valid_from_dates_the_facts_and_a_leaked_date_is_refused() -> None:
    def leaking(text: str, known: Known) -> list[dict[str, Any]]:
        fact = chat_rule(text, known)[0]
        return [fact | {"valid_from": "2024-05-01T00:00:00Z"}]

    store = Store()
    batch = store.batch(["I live in Berlin."], metadata={"valid_from": "2021-03-01T00:00:00Z"})
    judgement = judge_of(leaking).judge(batch)
    (fact,) = judgement.statements[0]
    assert fact.valid_from == d(2021, 3)
    assert fact.metadata == {VALID_FROM_SOURCE: "caller"}
    assert judgement.extractions[0].refused_dates == 1
    undated = judge_of(chat_rule).judge(store.batch(["I live in Berlin."]))
    assert undated.statements[0][0].metadata[VALID_FROM_SOURCE] == "record_time"


def test_facts_the_local_model_numbered_off_by_one_are_placed_by_their_object() -> None:
    # what Qwen2.5-Coder 1.5B did on a third of SituatedQA's batches: each fact under the
    # number of the statement before (the first one's under the last)
    def shifted(prompt: str) -> str:
        texts = prompt_statements(prompt)
        values = [text.removesuffix(".").split()[-1] for text in texts]
        facts = [
            [(n % len(texts)) + 1, "I", "works at", value, "one"]
            for n, value in enumerate(values, start=1)
        ]
        facts.append([1, "I", "works at", "Initech", "one"])  # written nowhere: dropped
        return json.dumps({"facts": facts})

    store = Store()
    judgement = LLMExtractor(shifted).judge(
        store.batch(
            ["I work at Acme.", "Bo works at Globex.", "Cy works at Umbrella."], ["ana"] * 3
        )
    )
    keyed = [[(f.subject, f.object) for f in group] for group in judgement.statements]
    assert keyed == [[("ana", "Acme")], [("ana", "Globex")], [("ana", "Umbrella")]]
    assert "Initech" in (judgement.extractions[0].problem or "")
