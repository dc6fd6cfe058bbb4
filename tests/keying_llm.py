"""Deterministic fakes of an LLMExtractor's LLM: :func:`keying_llm` keys where Ana lives and,
like the 1.5B model of issue 31, copies the old prompt's example date into every fact (it
answers one-statement and batch prompts);
:class:`BatchLLM` answers the judge's batch format with a rule per statement."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.llms import LLMStats
from shared_core.memory import MemoryConfig, TemporalMemory

LEAKED = "2024-05-01T00:00:00Z"  # the example date the old prompt showed
CITIES = ("Berlin", "Lisbon", "Porto")


def keying_llm(prompt: str) -> str:
    """Per statement: ("Ana", "lives in", <city>), one value at a time, with the leaked date, in
    the old answer form (no ``"s"``; the fact's ``"sentence"`` places it); no facts for the
    weather; for anything else chatter when it is the prompt's only statement, else a fact
    without an object (either way the statement's answer is invalid)."""
    statements = prompt_statements(prompt)
    facts: list[dict[str, Any]] = []
    for text in statements:
        city = next((c for c in CITIES if c in text), None)
        if city is not None:
            fact = {"subject": "Ana", "relation": "lives in", "object": city, "card": "one"}
            facts.append(fact | {"sentence": text, "valid_from": LEAKED})
        elif "weather" not in text:
            if len(statements) == 1:
                return "Sorry, I cannot help with that."
            facts.append({"subject": "Ana", "sentence": text})
    return json.dumps({"facts": facts})


def keyed_memory(clock: ManualClock) -> TemporalMemory:
    """An in-memory TemporalMemory whose extractor is an LLMExtractor over :func:`keying_llm`."""
    config = MemoryConfig(
        embedder=HashingEmbedder(64),
        prose_judge=LLMExtractor(keying_llm, on_error="prose"),
        clock=clock,
    )
    return TemporalMemory(ledger=InMemoryLedger(clock=clock), index=NumpyIndex(), config=config)


def ana_history(memory: TemporalMemory) -> list[tuple[object, datetime | None, datetime | None]]:
    """Where Ana lived, version by version: (city, valid_from, valid_to)."""
    return [(f.object, f.valid_from, f.valid_to) for f in memory.history("Ana", "lives in")]


_STATEMENT = re.compile(r"^S(\d+): <source_text>(.*?)</source_text>$", re.MULTILINE)
_KNOWN = re.compile(r"^K(\d+): (.*?) \| (.*?) \| (one|many)$", re.MULTILINE)

Rule = Callable[[str, list[tuple[str, str, str, str]]], list[dict[str, Any]]]
"""A statement's text and the prompt's known keys (subject, relation, values, card) in, the
facts the fake answers for it (without ``"s"``) out."""


def prompt_statements(prompt: str) -> list[str]:
    """The statements an LLMExtractor prompt numbers, in order."""
    return [text for _, text in _STATEMENT.findall(prompt)]


def prompt_known(prompt: str) -> list[tuple[str, str, str]]:
    """The known keys an LLMExtractor prompt numbers, in order: (subject, relation, card)."""
    return [(s, r, c) for _, s, r, c in _KNOWN.findall(prompt)]


class BatchLLM:
    """A fake LLM answering the judge's batch format: ``rule`` per statement; counts calls and
    keeps the prompts; reports generated tokens (the answer's words) like LocalLLM's stats."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.prompts: list[str] = []
        self.stats = LLMStats()

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        known = prompt_known(prompt)
        facts = [
            {"s": number, **fact}
            for number, text in enumerate(prompt_statements(prompt), start=1)
            for fact in self.rule(text, known)
        ]
        answer = json.dumps({"facts": facts})
        self.stats = LLMStats(
            calls=self.stats.calls + 1,
            generated_tokens=self.stats.generated_tokens + len(answer.split()),
        )
        return answer

    async def acall(self, prompt: str) -> str:
        return self(prompt)
