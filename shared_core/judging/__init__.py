"""Write-time judging: the port the writer calls once per batch, and its implementations."""

from shared_core.judging.base import (
    AsyncJudge,
    Judge,
    Judgement,
    WriteBatch,
    scoped_subject,
    speaker_subject,
)
from shared_core.judging.chain import JudgeChain
from shared_core.judging.llm import LLMExtractor, LLMJudgeStats

__all__ = [
    "AsyncJudge",
    "Judge",
    "JudgeChain",
    "Judgement",
    "LLMExtractor",
    "LLMJudgeStats",
    "WriteBatch",
    "scoped_subject",
    "speaker_subject",
]
