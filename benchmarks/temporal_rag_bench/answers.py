"""Answer accuracy: an LLM answers each CURRENT question from a method's top-k, and the answer
is scored correct / stale / other against the question's gold and stale answers.

The prompt is short: the retrieved statements as a list (a chat message prefixed with its
speaker's name, as a transcript shows it), the question, "answer with the answer only". An
answer is *correct* when it states a gold answer and no stale one, *stale* when it states a
stale answer and no gold one, *other* otherwise (both, neither, a refusal), by the bench's
normalisation (:func:`~temporal_rag_bench.model.normalize_answer`, whole words). Rates come
with Wilson 95% intervals. Identical prompts are asked once (temperature 0). Pure: standard
library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from temporal_rag_bench.model import Chunk, Question, QuestionKind, normalize_answer

PROMPT = """\
Answer the question using the memory below. Answer with the answer only, in a few words.

Memory:
{memory}

Question: {question}
Answer:"""
Z95 = 1.959964


class Verdict(StrEnum):
    CORRECT = "correct"
    STALE = "stale"
    OTHER = "other"


def prompt_for(question: Question, chunks: Sequence[Chunk]) -> str:
    """The answering prompt for ``question`` over the retrieved ``chunks`` (rank order)."""
    lines = []
    for chunk in chunks:
        speaker = chunk.metadata.get("speaker_name")
        lines.append(f"- {speaker}: {chunk.text}" if speaker else f"- {chunk.text}")
    return PROMPT.format(memory="\n".join(lines) or "(nothing)", question=question.text)


def _says(answer: str, value: str) -> bool:
    wanted = normalize_answer(value)
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(answer)} "


def verdict(question: Question, answer: str) -> Verdict:
    """Whether ``answer`` is correct, stale or other for ``question``."""
    gold = any(_says(answer, value) for value in question.gold)
    stale = any(_says(answer, value) for value in question.stale)
    if gold and not stale:
        return Verdict.CORRECT
    if stale and not gold:
        return Verdict.STALE
    return Verdict.OTHER


_N = re.compile(r"N=(\d+)$")


def stale_count(question: Question) -> int | None:
    """How many stale statements precede the current value (the question's N), or None for a
    question without stale answers (static, multi-valued)."""
    if question.kind is not QuestionKind.CURRENT or not question.stale:
        return None
    if question.ratio is not None:
        return question.ratio[0]
    match = _N.search(question.cell)
    return int(match.group(1)) if match else None


@dataclass(frozen=True, slots=True)
class Wilson:
    """A proportion and its Wilson 95% interval."""

    count: int
    n: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.count / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rate": self.rate}

    def __str__(self) -> str:
        if not self.n:
            return "-"
        return f"{self.count}/{self.n} [{self.low:.2f}, {self.high:.2f}]"


def wilson(count: int, n: int, z: float = Z95) -> Wilson:
    """``count`` of ``n`` with its Wilson score interval."""
    if n == 0:
        return Wilson(0, 0, 0.0, 1.0)
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Wilson(count, n, max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class Answered:
    """One method's answer to one question."""

    question: str
    kind: QuestionKind
    n: int | None
    answer: str
    verdict: Verdict


class Answerer:
    """Asks ``llm`` each question over each method's top-k, once per distinct prompt."""

    def __init__(self, llm: Callable[[str], str]) -> None:
        self.llm = llm
        self._asked: dict[str, str] = {}

    @property
    def distinct_prompts(self) -> int:
        return len(self._asked)

    def answer(self, question: Question, chunks: Sequence[Chunk]) -> Answered:
        prompt = prompt_for(question, chunks)
        if prompt not in self._asked:
            self._asked[prompt] = self.llm(prompt).strip()
        said = self._asked[prompt]
        return Answered(
            question.id, question.kind, stale_count(question), said, verdict(question, said)
        )


def curve(answers: Iterable[Answered]) -> dict[str, dict[str, Wilson]]:
    """Correct / stale / other per N ("all" too, over every question that has an N)."""
    groups: dict[str, list[Answered]] = {}
    for item in answers:
        if item.n is None:
            continue
        groups.setdefault(f"N={item.n}", []).append(item)
        groups.setdefault("all", []).append(item)
    ordered = sorted(groups, key=lambda g: (g == "all", int(g[2:]) if g != "all" else 0))
    return {
        group: {
            v.value: wilson(sum(a.verdict is v for a in groups[group]), len(groups[group]))
            for v in Verdict
        }
        for group in ordered
    }


__all__ = [
    "PROMPT",
    "Answered",
    "Answerer",
    "Verdict",
    "Wilson",
    "curve",
    "prompt_for",
    "stale_count",
    "verdict",
    "wilson",
]
