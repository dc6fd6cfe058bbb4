"""LangChain chat models and LLMs as the core's text-in/text-out callables (through text_llm):
the LLM conflict detector, the LLM extractor and query expansion, driven by scripted fakes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel, FakeListLLM, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from langchain_temporal import TemporalDocumentCompressor, TemporalRetriever, text_llm
from shared_core.clock import ManualClock
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import DetectorError
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

QUERY = "Where does Maria live?"
BERLIN_OUTDATED = '{"conflicts": [[1, 2]]}'  # statement 1 (oldest) is outdated by statement 2


def prose_timeline() -> list[Document]:
    """Prose without keys, as a vector store returns it: only an NLI or LLM judge can tell."""
    return [
        Document("Maria lives in Berlin.", metadata={"valid_from": "2019-03-01T00:00Z"}, id="b"),
        Document("Maria moved to Lisbon last May.", metadata={"valid_from": 1_651_363_200}, id="l"),
        Document("The office opens at nine.", id="o"),  # undated: never shown to the judge
    ]


def texts(documents: Sequence[Document]) -> list[str]:
    return [document.page_content for document in documents]


def judged(model: Any, **options: Any) -> tuple[TemporalDocumentCompressor, LLMConflictDetector]:
    detector = LLMConflictDetector(text_llm(model), **options)
    return TemporalDocumentCompressor(detector=detector), detector


# ---------------------------------------------------------------- the LLM judge
def test_a_scripted_verdict_removes_the_outdated_prose() -> None:
    compressor, detector = judged(FakeListChatModel(responses=[BERLIN_OUTDATED]))
    kept = compressor.compress_documents(prose_timeline(), QUERY)
    assert texts(kept) == ["Maria moved to Lisbon last May.", "The office opens at nine."]
    (shadow,) = kept[0].metadata["shadows"]
    assert (shadow["id"], shadow["dominated_by"], shadow["detector"]) == ("b", "l", "llm")
    assert detector.stats.calls == 1


def test_the_prompt_lists_the_dated_statements_oldest_first() -> None:
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        return BERLIN_OUTDATED

    compressor, _ = judged(RunnableLambda(judge))
    compressor.compress_documents(prose_timeline(), QUERY)
    (prompt,) = prompts
    assert "1. [2019-03-01] Maria lives in Berlin." in prompt
    assert "2. [2022-05-01] Maria moved to Lisbon last May." in prompt
    assert "office" not in prompt
    assert QUERY in prompt


def test_content_blocks_are_flattened_to_their_text() -> None:
    reply = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "Berlin came first; [[2, 1]] would be wrong."},
            {"type": "text", "text": "```json\n"},
            {"type": "text", "text": BERLIN_OUTDATED + "\n```"},
        ]
    )
    compressor, _ = judged(GenericFakeChatModel(messages=iter([reply])))
    assert texts(compressor.compress_documents(prose_timeline(), QUERY))[0].startswith(
        "Maria moved"
    )


@pytest.mark.parametrize("answer", ["Berlin is outdated, I think.", '{"conflicts": "yes"}', ""])
def test_a_malformed_verdict_removes_nothing_and_is_counted(
    answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    compressor, detector = judged(FakeListChatModel(responses=[answer]))
    with caplog.at_level(logging.WARNING, logger="shared_core.detectors.llm"):
        kept = compressor.compress_documents(prose_timeline(), QUERY)
    assert texts(kept) == texts(prose_timeline())
    assert detector.stats.malformed == 1
    assert "malformed answer" in caplog.text


def test_a_pair_naming_a_missing_statement_is_dropped_and_counted() -> None:
    compressor, detector = judged(FakeListChatModel(responses=['{"conflicts": [[1, 7]]}']))
    assert len(compressor.compress_documents(prose_timeline(), QUERY)) == 3
    assert detector.stats.pairs_dropped == 1


def failing(prompt: str) -> str:
    raise ConnectionError("the model server is down")


async def test_a_failing_model_raises_a_detector_error_or_is_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    compressor, _ = judged(RunnableLambda(failing))
    with pytest.raises(DetectorError, match="ConnectionError") as caught:
        compressor.compress_documents(prose_timeline(), QUERY)
    assert isinstance(caught.value.__cause__, ConnectionError)
    with pytest.raises(DetectorError):
        await compressor.acompress_documents(prose_timeline(), QUERY)
    skipping, detector = judged(RunnableLambda(failing), on_error="skip")
    with caplog.at_level(logging.WARNING, logger="shared_core.detectors.llm"):
        assert len(await skipping.acompress_documents(prose_timeline(), QUERY)) == 3
    assert detector.stats.errors == 1


@pytest.mark.parametrize("mode", ["set", "pairwise"])
async def test_sync_and_async_compression_return_the_same_documents(mode: str) -> None:
    answer = BERLIN_OUTDATED if mode == "set" else "Yes."
    compressor, _ = judged(FakeListChatModel(responses=[answer]), mode=mode)
    sync = compressor.compress_documents(prose_timeline(), QUERY)
    assert len(sync) == 2
    assert await compressor.acompress_documents(prose_timeline(), QUERY) == sync


def test_an_llm_that_returns_plain_text_works_too() -> None:
    compressor, _ = judged(FakeListLLM(responses=[BERLIN_OUTDATED]))
    assert len(compressor.compress_documents(prose_timeline(), QUERY)) == 2


# ---------------------------------------------------------------- through the memory
EXTRACTED = [
    "Maria lives in Berlin.",
    "Maria moved to Lisbon last May.",
    "The office opens at nine.",
]
# One call keys the batch, the JSON inside prose: the Berlin fact is placed by its sentence,
# the others by number; "9" is not written in the office's statement, so that fact is dropped
# and the statement kept as prose (one problem). "lives in" is one value at a time only when
# every proposal says so (unsure or disagreeing: many, and Lisbon would not close Berlin).
ANSWER = (
    'Here you go: {"facts": [{"subject": "Maria", "relation": "lives in", "object": "Berlin", '
    '"card": "one", "sentence": "Maria lives in Berlin.", "valid_from": "2019-03-01T00:00Z"}, '
    '{"s": 2, "subject": "Maria", "relation": "lives in", "object": "Lisbon", "card": "one", '
    '"valid_from": "2022-05-01T00:00Z"}, '
    '{"s": 3, "subject": "the office", "relation": "opens at", "object": "9", "card": "one"}]}'
)


@pytest.fixture
def memory() -> Iterator[TemporalMemory]:
    extractor = FakeListChatModel(responses=[ANSWER])
    expander = FakeListChatModel(responses=["Maria's home city\nWhere is Maria based"])
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(
            embedder=HashingEmbedder(256),
            prose_judge=LLMExtractor(text_llm(extractor)),
            expander=text_llm(expander),
            clock=clock,
        ),
    ) as memory:
        yield memory


async def test_an_llm_extractor_keys_documents_and_an_expander_rewrites_queries(
    memory: TemporalMemory,
) -> None:
    retriever = TemporalRetriever(memory=memory, k=3, expand=2)
    dated = {d.page_content: d.metadata for d in prose_timeline()}  # the caller's valid time
    ids = retriever.add_documents([Document(text, metadata=dated[text]) for text in EXTRACTED])
    assert len(ids) == 3
    assert memory.extraction_problems == 1
    current = retriever.invoke(QUERY)
    assert texts(current) == ["Maria moved to Lisbon last May.", "The office opens at nine."]
    assert await retriever.ainvoke(QUERY) == current
    assert texts(retriever.invoke(QUERY, valid_at=datetime(2020, 1, 1, tzinfo=UTC))) == [
        "Maria lives in Berlin."
    ]


async def test_the_retriever_with_an_llm_judge_is_the_same_sync_and_async() -> None:
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(256), clock=clock),
    ) as memory:
        retriever = TemporalRetriever(memory=memory, k=5)
        retriever.add_documents(
            [Document(d.page_content, metadata={"valid_from": d.metadata.get("valid_from")})
             for d in prose_timeline()]
        )  # fmt: skip
        judge = LLMConflictDetector(text_llm(FakeListChatModel(responses=[BERLIN_OUTDATED])))
        sync = retriever.invoke(QUERY, detector=judge)
        assert texts(sync) == ["Maria moved to Lisbon last May.", "The office opens at nine."]
        assert await retriever.ainvoke(QUERY, detector=judge) == sync


# ---------------------------------------------------------------- async forms (issue 18, part 4)
class TwoWay:
    """A Runnable answering ``answer`` through invoke and ainvoke, recording which ran where."""

    def __init__(self, answer: str) -> None:
        self.calls: list[tuple[str, int]] = []

        def sync(prompt: str) -> str:
            self.calls.append(("invoke", threading.get_ident()))
            return answer

        async def asynchronous(prompt: str) -> str:
            self.calls.append(("ainvoke", threading.get_ident()))
            return answer

        self.runnable = RunnableLambda(sync, afunc=asynchronous)


async def test_text_llm_has_a_native_async_form_over_ainvoke() -> None:
    model = TwoWay("Lisbon")
    ask = text_llm(model.runnable)
    assert ask("Where?") == "Lisbon"
    assert await ask.acall("Where?") == "Lisbon"
    assert [form for form, _ in model.calls] == ["invoke", "ainvoke"]
    assert await text_llm(FakeListChatModel(responses=["hello"])).acall("hi") == "hello"


async def test_the_compressor_awaits_the_judge_and_agrees_with_sync() -> None:
    model = TwoWay(BERLIN_OUTDATED)
    compressor, _ = judged(model.runnable)
    sync = compressor.compress_documents(prose_timeline(), QUERY)
    assert await compressor.acompress_documents(prose_timeline(), QUERY) == sync
    assert texts(sync) == ["Maria moved to Lisbon last May.", "The office opens at nine."]
    assert model.calls[1] == ("ainvoke", threading.get_ident())  # on the loop, no thread


async def test_the_retriever_awaits_the_expander_and_judge_and_agrees_with_sync() -> None:
    expander, judge = TwoWay("Maria's home city\nWhere is Maria based"), TwoWay(BERLIN_OUTDATED)
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(
            embedder=HashingEmbedder(256), expander=text_llm(expander.runnable), clock=clock
        ),
    ) as memory:
        detector = LLMConflictDetector(text_llm(judge.runnable))
        retriever = TemporalRetriever(memory=memory, k=5, expand=2, detector=detector)
        retriever.add_documents(
            [Document(d.page_content, metadata={"valid_from": d.metadata.get("valid_from")})
             for d in prose_timeline()]
        )  # fmt: skip
        sync = retriever.invoke(QUERY)
        assert texts(sync) == ["Maria moved to Lisbon last May.", "The office opens at nine."]
        assert await retriever.ainvoke(QUERY) == sync
    loop = threading.get_ident()
    for model in (expander, judge):
        assert [form for form, _ in model.calls] == ["invoke", "ainvoke"]
        assert model.calls[1][1] == loop
