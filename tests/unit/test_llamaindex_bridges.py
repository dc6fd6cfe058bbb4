"""Bridges: LlamaIndex embeddings <-> the core Embedder, and any LlamaIndex LLM as str -> str."""

from __future__ import annotations

import json
import pickle
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.bridge.pydantic import Field
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llamaindex_temporal import (
    CoreEmbedding,
    LlamaIndexEmbedder,
    TemporalNodePostprocessor,
    TemporalVectorStore,
    text_llm,
)
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.embedders.base import Embedder, HashingEmbedder
from shared_core.errors import EmbedderError, InvalidInputError, NotPicklableError
from shared_core.facts import Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, SearchOptions, TemporalMemory
from shared_core.phi_t import Candidate

TEXTS = ["Maria lives in Berlin.", "The report is due in March."]


# ---------------------------------------------------------------- CoreEmbedding
def test_core_embedding_gives_the_core_embedders_vectors() -> None:
    core = HashingEmbedder(16)
    embedding = CoreEmbedding(core)
    assert embedding.model_name == "hashing-16"
    assert embedding.embedder is core
    assert embedding.get_text_embedding_batch(TEXTS) == core.embed_documents(TEXTS)
    assert embedding.get_text_embedding(TEXTS[0]) == core.embed_documents(TEXTS[:1])[0]
    assert embedding.get_query_embedding("where") == core.embed_query("where")


async def test_core_embedding_async_agrees() -> None:
    core, embedding = HashingEmbedder(16), CoreEmbedding(HashingEmbedder(16))
    assert await embedding.aget_text_embedding_batch(TEXTS) == core.embed_documents(TEXTS)
    assert await embedding.aget_text_embedding(TEXTS[1]) == core.embed_documents(TEXTS[1:])[0]
    assert await embedding.aget_query_embedding("where") == core.embed_query("where")


def test_core_embedding_takes_base_embedding_options() -> None:
    embedding = CoreEmbedding(HashingEmbedder(16), embed_batch_size=1, model_name="custom")
    assert (embedding.embed_batch_size, embedding.model_name) == (1, "custom")
    assert embedding.get_text_embedding_batch(TEXTS) == HashingEmbedder(16).embed_documents(TEXTS)


def test_core_embedding_refuses_a_non_embedder() -> None:
    with pytest.raises(InvalidInputError, match="shared_core Embedder"):
        CoreEmbedding("minilm")  # type: ignore[arg-type]


# ---------------------------------------------------------------- LlamaIndexEmbedder
def test_llama_index_embedder_is_a_core_embedder() -> None:
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=8), name="mock-8")
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimension) == ("mock-8", 8)
    assert embedder.embed_documents(TEXTS) == [[0.5] * 8, [0.5] * 8]
    assert embedder.embed_documents([]) == []
    assert embedder.embed_query("where") == [0.5] * 8


def test_the_name_defaults_to_the_model_name_and_must_exist() -> None:
    assert LlamaIndexEmbedder(CoreEmbedding(HashingEmbedder(16))).name == "hashing-16"
    with pytest.raises(InvalidInputError, match="name the model"):
        LlamaIndexEmbedder(MockEmbedding(embed_dim=8))  # model_name "unknown"
    with pytest.raises(InvalidInputError, match="BaseEmbedding"):
        LlamaIndexEmbedder(HashingEmbedder(8))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="dimension"):
        LlamaIndexEmbedder(MockEmbedding(embed_dim=8), name="m", dimension=0)


def test_round_trip_through_both_bridges_drives_a_memory() -> None:
    core = HashingEmbedder(32)
    embedder = LlamaIndexEmbedder(CoreEmbedding(core))
    with TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
    ) as memory:
        memory.add_many(TEXTS)
        (hit,) = memory.search("Maria Berlin", k=1)
    assert hit.fact.text == TEXTS[0]
    assert hit.score == pytest.approx(
        sum(
            a * b
            for a, b in zip(
                core.embed_query("Maria Berlin"), core.embed_query(TEXTS[0]), strict=True
            )
        )
    )


def test_pickling_a_llama_index_embedder_raises_not_picklable_error_a_type_error() -> None:
    """wrapt's NotImplementedError escaped before, so code catching TypeError missed it."""
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=8), name="mock-8")
    with pytest.raises(TypeError) as refused:
        pickle.dumps(embedder)
    assert isinstance(refused.value, NotPicklableError)
    assert refused.value.what == "LlamaIndexEmbedder"
    assert "LlamaIndexEmbedder(embed_model) again" in refused.value.fix
    assert issubclass(NotPicklableError, TypeError)


class Failing(MockEmbedding):
    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("model server down")


class Ragged(MockEmbedding):
    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[0.5] * (self.embed_dim + i) for i, _ in enumerate(texts)]


def test_model_failures_become_embedder_errors() -> None:
    with pytest.raises(EmbedderError, match="model server down") as failed:
        LlamaIndexEmbedder(Failing(embed_dim=8), name="failing").embed_documents(TEXTS)
    assert isinstance(failed.value.__cause__, ConnectionError)
    with pytest.raises(EmbedderError, match="dimension 9"):
        LlamaIndexEmbedder(Ragged(embed_dim=8), name="ragged").embed_documents(TEXTS)


# ---------------------------------------------------------------- text_llm
def test_a_completion_llm_answers_with_its_completion() -> None:
    ask = text_llm(MockLLM())  # MockLLM echoes the prompt
    assert ask("Is Berlin current?") == "Is Berlin current?"
    assert ask.__name__ == "text_llm(MockLLM)"


class ChatOnly(MockLLM):
    """A chat model whose reply names what it was sent."""

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        (message,) = messages
        return ChatResponse(
            message=ChatMessage(
                role=MessageRole.ASSISTANT, content=f"{message.role.value}: {message.content}"
            )
        )


def test_a_chat_llm_gets_one_user_message() -> None:
    ask = text_llm(ChatOnly(is_chat_model=True))
    assert ask("Is Berlin current?") == "user: Is Berlin current?"
    assert text_llm(ChatOnly(is_chat_model=True), mode="complete")("hi") == "hi"
    assert text_llm(ChatOnly(), mode="chat")("hi") == "user: hi"


def test_text_llm_refuses_what_is_not_an_llm() -> None:
    with pytest.raises(InvalidInputError, match="llama_index LLM"):
        text_llm(lambda prompt: prompt)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="mode"):
        text_llm(MockLLM(), mode="stream")  # type: ignore[arg-type]


class Scripted(MockLLM):
    answer: str = ""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        return super().complete(self.answer)


def test_text_llm_drives_the_llm_extractor_and_detector() -> None:
    triple = {"subject": "Maria", "relation": "lives in", "object": "Lisbon",
              "sentence": "Maria moved to Lisbon."}  # fmt: skip
    extractor = LLMExtractor(text_llm(Scripted(json.dumps({"facts": [triple]}))))
    (fact,) = extractor.extract("Maria moved to Lisbon.", {}).facts
    assert (fact.subject, fact.object) == ("Maria", "Lisbon")

    detector = LLMConflictDetector(text_llm(Scripted('{"conflicts": [[1, 2]]}')))
    candidates = [
        Candidate(
            id="a", text="Maria lives in Berlin.", timestamp=datetime(2019, 1, 1, tzinfo=UTC)
        ),
        Candidate(
            id="b", text="Maria moved to Lisbon.", timestamp=datetime(2022, 1, 1, tzinfo=UTC)
        ),
    ]
    (conflict,) = detector.find_conflicts(candidates)
    assert (conflict.older, conflict.newer) == (0, 1)


# ---------------------------------------------------------------- async forms (issue 18, part 4)
class TwoWay(MockLLM):
    """Answers ``answer`` through complete / acomplete and chat / achat, recording which ran
    and on which thread."""

    answer: str = ""
    calls: list[tuple[str, int]] = Field(default_factory=list)

    def __init__(self, answer: str, **options: Any) -> None:
        super().__init__(**options)
        self.answer = answer
        self.calls = []

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        self.calls.append(("complete", threading.get_ident()))
        return super().complete(self.answer)

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        self.calls.append(("acomplete", threading.get_ident()))
        return super().complete(self.answer)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.calls.append(("chat", threading.get_ident()))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=self.answer))

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.calls.append(("achat", threading.get_ident()))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=self.answer))


async def test_text_llm_has_a_native_async_form_over_acomplete_and_achat() -> None:
    completer, chatter = TwoWay("Lisbon"), TwoWay("Lisbon", is_chat_model=True)
    for llm in (completer, chatter):
        ask = text_llm(llm)
        assert ask("Where?") == "Lisbon"
        assert await ask.acall("Where?") == "Lisbon"
    assert [form for form, _ in completer.calls] == ["complete", "acomplete"]
    assert [form for form, _ in chatter.calls] == ["chat", "achat"]


PROSE = [
    ("b", "Maria lives in Berlin.", "2019-03-01T00:00:00+00:00"),
    ("l", "Maria moved to Lisbon.", "2022-05-01T00:00:00+00:00"),
    ("c", "Maria keeps a cat.", "2020-01-01T00:00:00+00:00"),
]
OUTDATED = '{"conflicts": [[1, 3]]}'  # oldest first: Berlin (1), the cat (2), Lisbon (3)


async def test_the_postprocessor_awaits_the_judge_and_agrees_with_sync() -> None:
    judge = TwoWay(OUTDATED)
    nodes = [
        NodeWithScore(node=TextNode(id_=i, text=t, metadata={"valid_from": v})) for i, t, v in PROSE
    ]
    postprocessor = TemporalNodePostprocessor(detector=LLMConflictDetector(text_llm(judge)))
    sync = postprocessor.postprocess_nodes(nodes, query_str="Where does Maria live?")
    assert [n.node.node_id for n in sync] == ["l", "c"]
    again = await postprocessor.apostprocess_nodes(nodes, query_str="Where does Maria live?")
    assert again == sync
    assert judge.calls[1] == ("acomplete", threading.get_ident())  # on the loop, no thread


async def test_the_vector_store_awaits_the_extractor_and_judge_and_agrees_with_sync() -> None:
    triple = {"subject": "Maria", "relation": "lives in", "object": "Lisbon",
              "sentence": "Maria moved to Lisbon."}  # fmt: skip
    extractor, judge = TwoWay(json.dumps({"facts": [triple]})), TwoWay('{"conflicts": [[1, 2]]}')
    detector = LLMConflictDetector(text_llm(judge))
    stores = []
    for _ in range(2):
        memory = TemporalMemory(
            ledger=InMemoryLedger(),
            index=NumpyIndex(),
            config=MemoryConfig(
                embedder=HashingEmbedder(64), prose_judge=LLMExtractor(text_llm(extractor))
            ),
        )
        stores.append(TemporalVectorStore(memory, search_options=SearchOptions(detector=detector)))
    sync_store, async_store = stores
    berlin = Fact(text="Maria lives in Berlin.", valid_from=datetime(2019, 1, 1, tzinfo=UTC))
    for store in stores:
        # A prose Fact is judged too (one sync call per memory); the judge drops the "Lisbon"
        # the fake proposes for it (not written in it), so Berlin stays prose.
        store.memory.add_many([berlin])
        assert [f.subject for f in store.memory.as_of()] == [None]
    node = TextNode(id_="l", text="Maria moved to Lisbon.")
    assert sync_store.add([node]) == await async_store.async_add([node]) == ["l"]
    query = VectorStoreQuery(query_str="Where does Maria live?", similarity_top_k=3)
    sync, again = sync_store.query(query), await async_store.aquery(query)
    assert again.ids == sync.ids == ["l"]  # the judge outdated Berlin
    (lisbon,) = again.nodes or []
    assert lisbon.metadata["object"] == "Lisbon"
    assert [s["text"] for s in lisbon.metadata["shadows"]] == ["Maria lives in Berlin."]
    loop = threading.get_ident()
    assert [form for form, _ in extractor.calls] == [
        "complete",
        "complete",
        "complete",
        "acomplete",
    ]
    assert [form for form, _ in judge.calls] == ["complete", "acomplete"]
    assert extractor.calls[3][1] == judge.calls[1][1] == loop
    for store in stores:
        store.memory.close()
