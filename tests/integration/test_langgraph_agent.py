"""A LangGraph agent with TemporalStore as its long-term memory, on the embedded default stack
(SQLite + Chroma + the offline MiniLM) and a fake chat model that calls tools.

The graph is LangGraph's memory pattern: a node recalls the user's memories nearest to the
message (``runtime.store.search``) into the model's context, the model calls a ``remember``
tool that writes one (``runtime.store.put``, a key per fact). Three conversations, in separate
runs: the user says where they live, then that they moved (same key: the store supersedes), then
asks; the third run's context holds the new city only, and the store's history both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
from langgraph.runtime import Runtime

from langchain_temporal import TemporalStore


@dataclass(frozen=True)
class Context:
    user_id: str


ANA = Context("ana")


@tool
def remember(key: str, text: str, runtime: ToolRuntime[Context]) -> str:
    """Remember a fact about the user under a short key (the same key replaces it)."""
    assert runtime.store is not None
    runtime.store.put(("memories", runtime.context.user_id), key, {"text": text})
    return f"remembered {key}"


def recall(state: MessagesState, runtime: Runtime[Context]) -> dict[str, list[BaseMessage]]:
    """Put the user's memories nearest to their message into the model's context."""
    assert runtime.store is not None
    question = str(state["messages"][-1].content)
    found = runtime.store.search(("memories", runtime.context.user_id), query=question, limit=3)
    lines = "\n".join(f"- {item.value['text']}" for item in found)
    return {"messages": [SystemMessage(f"What you remember about the user:\n{lines}")]}


def agent(model: GenericFakeChatModel, store: TemporalStore) -> CompiledStateGraph[Any, Any]:
    def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Context)
    builder.add_node("recall", recall)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([remember]))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(store=store)


def remembers(key: str, text: str, call: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "remember", "args": {"key": key, "text": text},
                                       "id": call}])  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TemporalStore]:
    with TemporalStore.open(tmp_path / "memory", index={"fields": ["text"]}) as store:
        yield store


async def test_an_agent_remembers_a_fact_that_changes_and_reads_the_current_one(
    store: TemporalStore,
) -> None:
    model = GenericFakeChatModel(
        messages=iter(
            [
                remembers("home", "The user lives in Berlin.", "call-1"),
                AIMessage("Noted: Berlin."),
                remembers("home", "The user moved to Lisbon.", "call-2"),
                AIMessage("Noted: Lisbon."),
                AIMessage("You live in Lisbon."),
            ]
        )
    )
    graph = agent(model, store)
    graph.invoke({"messages": [HumanMessage("I live in Berlin.")]}, context=ANA)
    moved = await graph.ainvoke(  # the async path (abatch) as well
        {"messages": [HumanMessage("I have moved to Lisbon.")]}, context=ANA
    )
    assert "Berlin" in moved["messages"][1].content  # what it knew before the move
    asked = graph.invoke({"messages": [HumanMessage("Where do I live?")]}, context=ANA)
    context = asked["messages"][1].content
    assert "Lisbon" in context
    assert "Berlin" not in context  # superseded: not in the agent's context any more
    assert asked["messages"][-1].content == "You live in Lisbon."

    item = store.get(("memories", "ana"), "home")
    assert item is not None
    assert item.value == {"text": "The user moved to Lisbon."}
    history = store.history(("memories", "ana"), "home")
    assert [(v.value["text"], v.status) for v in history] == [
        ("The user lives in Berlin.", "superseded"),
        ("The user moved to Lisbon.", "current"),
    ]
    before = store.get_as_of(("memories", "ana"), "home", valid_at=history[0].valid_from)
    assert before is not None
    assert before.value == {"text": "The user lives in Berlin."}
    assert store.search(("memories", "bo"), query="Where do I live?") == []  # another user
