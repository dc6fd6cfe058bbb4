"""Write-time judging: the port the writer calls once per batch, and its implementations.

The port (:class:`Judge`, :class:`AsyncJudge`, :class:`WriteBatch`, :class:`Judgement`) is in
:mod:`shared_core.judging.base`; :class:`LLMExtractor` (an LLM proposing keys, batched and
shown the keys the memory holds, :mod:`~shared_core.judging.llm`), :class:`ClaimJudge` (the
subject rule and the frame head placing claims, :mod:`~shared_core.judging.claims`),
:class:`ProseJudge` (a pairwise scorer, :mod:`~shared_core.judging.pairwise`) and
:class:`JudgeChain` (several in turn) implement it.
docs/judging.md explains write-time judging as a whole.
"""

from shared_core.judging.base import (
    AsyncJudge,
    Judge,
    Judgement,
    WriteBatch,
    scoped_subject,
    speaker_subject,
)
from shared_core.judging.chain import JudgeChain
from shared_core.judging.claims import ClaimJudge, claim_judge
from shared_core.judging.llm import LLMExtractor, LLMJudgeStats
from shared_core.judging.pairwise import ProseJudge, kappa_judge

__all__ = [
    "AsyncJudge",
    "ClaimJudge",
    "Judge",
    "JudgeChain",
    "Judgement",
    "LLMExtractor",
    "LLMJudgeStats",
    "ProseJudge",
    "WriteBatch",
    "claim_judge",
    "kappa_judge",
    "scoped_subject",
    "speaker_subject",
]
