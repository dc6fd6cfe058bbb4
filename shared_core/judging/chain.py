"""Several judges in turn, as one: :class:`JudgeChain`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from shared_core.extractors.base import Extraction
from shared_core.facts import Fact
from shared_core.judging.base import AsyncJudge, Judge, Judgement, WriteBatch, check_judgement


@dataclass(frozen=True, slots=True)
class JudgeChain:
    """Runs ``steps`` in order, each on what the one before made of the batch (an LLM that keys
    prose, then a claim judge for the prose it left): one judge to the memory. Supersessions
    and cardinalities add up; a step's extractions are mapped back to the input statement they
    came from."""

    steps: tuple[Judge, ...]

    def __post_init__(self) -> None:
        if not self.steps or not all(callable(getattr(s, "judge", None)) for s in self.steps):
            raise TypeError("JudgeChain needs one or more judges")

    def judge(self, batch: WriteBatch) -> Judgement:
        """Each step's :meth:`~Judge.judge` in turn."""
        judgement = Judgement.unchanged(batch)
        for step in self.steps:
            sub, origins = _inner(batch, judgement)
            judgement = _merged(judgement, check_judgement(sub, step.judge(sub), step), origins)
        return judgement

    async def ajudge(self, batch: WriteBatch) -> Judgement:
        """:meth:`judge`, awaiting each step's ``ajudge`` where it has one."""
        judgement = Judgement.unchanged(batch)
        for step in self.steps:
            sub, origins = _inner(batch, judgement)
            answer = await step.ajudge(sub) if isinstance(step, AsyncJudge) else step.judge(sub)
            judgement = _merged(judgement, check_judgement(sub, answer, step), origins)
        return judgement


def _inner(batch: WriteBatch, judgement: Judgement) -> tuple[WriteBatch, list[int]]:
    """The batch the next step sees (the statements so far) and each one's input position."""
    statements: list[Fact] = []
    speakers: list[str | None] = []
    origins: list[int] = []
    for position, group in enumerate(judgement.statements):
        statements.extend(group)
        speakers.extend([batch.speakers[position]] * len(group))
        origins.extend([position] * len(group))
    return replace(batch, statements=tuple(statements), speakers=tuple(speakers)), origins


def _merged(so_far: Judgement, step: Judgement, origins: Sequence[int]) -> Judgement:
    groups: list[list[Fact]] = [[] for _ in so_far.statements]
    for position, group in zip(origins, step.statements, strict=True):
        groups[position].extend(group)
    extractions: dict[int, Extraction] = dict(so_far.extractions)
    for position, extraction in step.extractions.items():
        extractions.setdefault(origins[position], extraction)
    return Judgement(
        statements=tuple(tuple(group) for group in groups),
        supersessions=so_far.supersessions + step.supersessions,
        cardinalities=so_far.cardinalities + step.cardinalities,
        extractions=extractions,
    )
