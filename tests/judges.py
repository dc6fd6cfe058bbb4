"""Offline write-time judges for tests: a keying judge (what an LLM judge does: it keys "I live
in X" under the speaker), and a claim judge over fakes of the frame head and kappa."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from shared_core.detectors.frames import Frame, FrameProfile
from shared_core.detectors.kappa import Verdict
from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Cardinality
from shared_core.judging import ClaimJudge, Judgement, WriteBatch, scoped_subject

EMBEDDER = HashingEmbedder(64)
HOME = re.compile(r"\b(?:I|we) (?:live in|moved to|am in) (\w+)", re.IGNORECASE)
LIKES = re.compile(r"\bI (?:like|am allergic to) (\w+)", re.IGNORECASE)


def home_of(text: str) -> str | None:
    """The city a first-person "I live in X" / "I moved to X" names."""
    found = HOME.search(text)
    return None if found is None else found.group(1)


@dataclass
class KeyingJudge:
    """Keys first-person homes as (speaker, "lives in", city) and "I like X" / "I am allergic
    to X" as (speaker, ``likes``, X); leaves everything else. ``cardinalities`` are proposed
    with every judgement; ``batches`` records what it was asked."""

    cardinalities: tuple[tuple[str, Cardinality], ...] = ()
    batches: list[WriteBatch] = field(default_factory=list)

    def judge(self, batch: WriteBatch) -> Judgement:
        self.batches.append(batch)
        out = []
        for fact, speaker in zip(batch.statements, batch.speakers, strict=True):
            city, liked = home_of(fact.text), LIKES.search(fact.text)
            if fact.key is not None or (city is None and liked is None):
                out.append((fact,))
                continue
            relation = "lives in" if city is not None else "likes"
            value = city if city is not None else liked.group(1)  # type: ignore[union-attr]
            subject = scoped_subject("I", speaker)
            out.append((replace(fact, subject=subject, relation=relation, object=value),))
        return Judgement(statements=tuple(out), cardinalities=self.cardinalities)


@dataclass
class AsyncKeyingJudge(KeyingJudge):
    """:class:`KeyingJudge` with a native async form; records which form was called."""

    calls: list[str] = field(default_factory=list)

    def judge(self, batch: WriteBatch) -> Judgement:
        self.calls.append("judge")
        return super().judge(batch)

    async def ajudge(self, batch: WriteBatch) -> Judgement:
        self.calls.append("ajudge")
        return super().judge(batch)


class HomeFrames:
    """A frame head fake: the texts it is told name a home have the ``home_city`` frame."""

    def __init__(self, texts: Sequence[str]) -> None:
        vectors = EMBEDDER.embed_documents(list(texts))
        self._framed = {self._key(v) for v, t in zip(vectors, texts, strict=True) if home_of(t)}

    @staticmethod
    def _key(vector: Sequence[float]) -> tuple[float, ...]:
        return tuple(round(x, 6) for x in vector)

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        frame = Frame("home_city", 0.99)
        return [
            FrameProfile(0.99, frame, (1.0,))
            if self._key(v) in self._framed
            else FrameProfile(0.0, None, (1.0,))
            for v in vectors
        ]


class HomeScorer:
    """A kappa fake: two homes restate when the city is the same, else the later ends the
    earlier."""

    def verdict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        return [
            Verdict(ends=0.01, restates=0.98, neither=0.01)
            if home_of(older) == home_of(newer)
            else Verdict(ends=0.98, restates=0.01, neither=0.01)
            for older, newer in pairs
        ]


def home_claim_judge(texts: Sequence[str]) -> ClaimJudge:
    """A ClaimJudge over the fakes, framing the homes among ``texts``."""
    return ClaimJudge(
        scorer=HomeScorer(),
        frames=HomeFrames(texts),
        name="test-claims",
        ends_threshold=0.9,
        restates_threshold=0.9,
    )
