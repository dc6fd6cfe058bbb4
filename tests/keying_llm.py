"""A deterministic fake of a small LLM as an LLMExtractor's callable: it keys where Ana lives
and, like the 1.5B model of issue 31, copies the old prompt's example date into every fact."""

from __future__ import annotations

import json
from datetime import datetime

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.extractors.llm import LLMExtractor
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

LEAKED = "2024-05-01T00:00:00Z"  # the example date the old prompt showed
CITIES = ("Berlin", "Lisbon", "Porto")


def source_text(prompt: str) -> str:
    """The text an LLMExtractor prompt asks about."""
    return prompt.split("<source_text>\n", 1)[1].split("\n</source_text>", 1)[0]


def keying_llm(prompt: str) -> str:
    """("Ana", "lives in", <city>) with the leaked date; no facts for the weather; else chatter."""
    text = source_text(prompt)
    city = next((c for c in CITIES if c in text), None)
    if city is None:
        return '{"facts": []}' if "weather" in text else "Sorry, I cannot help with that."
    fact = {"subject": "Ana", "relation": "lives in", "object": city, "sentence": text}
    return json.dumps({"facts": [fact | {"valid_from": LEAKED}]})


def keyed_memory(clock: ManualClock) -> TemporalMemory:
    """An in-memory TemporalMemory whose extractor is an LLMExtractor over :func:`keying_llm`."""
    config = MemoryConfig(
        embedder=HashingEmbedder(64),
        extractor=LLMExtractor(keying_llm, on_error="prose"),
        clock=clock,
    )
    return TemporalMemory(ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config)


def ana_history(memory: TemporalMemory) -> list[tuple[object, datetime | None, datetime | None]]:
    """Where Ana lived, version by version: (city, valid_from, valid_to)."""
    return [(f.object, f.valid_from, f.valid_to) for f in memory.history("Ana", "lives in")]
