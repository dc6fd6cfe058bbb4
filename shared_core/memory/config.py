"""How a memory is built: :class:`MemoryConfig`, one frozen value for every option of building a
:class:`~shared_core.memory.TemporalMemory` but where its ledger and index live.

``TemporalMemory(ledger=..., index=..., config=...)``, ``TemporalMemory.open(path, config=...)``,
``TemporalMemory.connect(ledger=..., index=..., config=...)`` and the adapters' ``open`` take
one; ``dataclasses.replace(config, clock=...)`` changes single options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Literal, get_args

from shared_core.clock import Clock
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError, InvalidInputTypeError
from shared_core.extractors.base import Extractor
from shared_core.judging.base import Judge
from shared_core.ledger import Durability
from shared_core.llm_calls import TextLLM

JudgeOption = Judge | Literal["kappa"]
"""One write-time judge as ``MemoryConfig.prose_judge`` names it."""

DEFAULT_RECENCY_CAPACITY = 8
"""How many of the most recent writes the recency buffer holds unless told otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryConfig:
    """The parts and options of a memory; ``None`` parts are the defaults, built when the
    memory is.

    - ``embedder``: embeds texts and queries (``None``: the offline MiniLM, loaded then).
    - ``extractor``: turns texts into keyed statements (``None``: ``MetadataExtractor()``).
    - ``clock``: the record time (``None``: ``SystemClock()``).
    - ``expander``: the LLM that rewrites queries for ``search(expand=...)`` (``None``: none).
    - ``prose_judge``: judges each batch with prose at write time (docs/judging.md): any
      :class:`~shared_core.judging.Judge` (a ``ClaimJudge``, a ``ProseJudge``, an LLM judge),
      ``"kappa"`` (the shipped claim judge; its models load on the first prose write), a
      tuple or list of those (run in turn as a :class:`~shared_core.judging.JudgeChain`), or
      ``None`` (prose is judged only at read time, by ``search(detector=...)``).
    - ``speaker_field``: the metadata field naming who wrote a text (default ``"user_id"``),
      read when a write passes no ``speaker=`` and written with one; ``None``: speakers are
      not recorded. First person resolves to the speaker and nothing closes across speakers.
    - ``durability``: ``"full"`` (an fsync per commit) or ``"normal"``, for an SQLite ledger
      the memory opens.
    - ``recency_capacity`` (>= 1): how many recent writes the recency buffer holds.
    - ``reconcile``: bring the index up to date with the ledger when the memory is built.
    """

    embedder: Embedder | None = None
    extractor: Extractor | None = None
    clock: Clock | None = None
    expander: TextLLM | None = None
    prose_judge: JudgeOption | Sequence[JudgeOption] | None = None
    speaker_field: str | None = "user_id"
    durability: Durability = "full"
    recency_capacity: int = DEFAULT_RECENCY_CAPACITY
    reconcile: bool = True

    def __post_init__(self) -> None:
        if _is_judge(self.extractor):
            raise InvalidInputError(
                "extractor",
                f"is a {type(self.extractor).__name__}, a write-time judge",
                "pass it as MemoryConfig(prose_judge=...): it then keys prose in batches, "
                "shown the keys the memory already holds",
            )
        judge = self.prose_judge
        if isinstance(judge, list):
            object.__setattr__(self, "prose_judge", tuple(judge))
        steps = judge if isinstance(judge, tuple | list) else () if judge is None else (judge,)
        if isinstance(judge, tuple | list) and not judge:
            raise InvalidInputError(
                "prose_judge", "is an empty sequence", "pass one or more judges, or None"
            )
        for position, step in enumerate(steps):
            if not (step == "kappa" or _is_judge(step)):
                where = f"prose_judge[{position}]" if steps is judge else "prose_judge"
                error = InvalidInputError if isinstance(step, str) else InvalidInputTypeError
                raise error(where, _not_a_judge(step), _ACCEPTED_JUDGES)
        field = self.speaker_field
        if field is not None and (not isinstance(field, str) or not field.strip()):
            raise InvalidInputError(
                "speaker_field",
                f"is {field!r}",
                'name the metadata field of the speaker (e.g. "user_id"), or pass None',
            )
        if self.durability not in get_args(Durability):
            raise InvalidInputError(
                "durability", f"{self.durability!r} is unknown", "use 'full' or 'normal'"
            )
        capacity = self.recency_capacity
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise InvalidInputError(
                "recency_capacity", f"{capacity!r} is not a positive int", "use e.g. 8"
            )


_ACCEPTED_JUDGES = (
    'the accepted values are "kappa" (the shipped claim judge), claim_judge(), kappa_judge(), '
    "any Judge (an object with judge(batch) -> Judgement), a tuple of those, or None"
)


def _not_a_judge(step: object) -> str:
    if not isinstance(step, str):
        return f"is of type {type(step).__name__}, not a judge"
    close = get_close_matches(step.strip().lower(), ["kappa"], n=1, cutoff=0.6)
    guess = f' (did you mean "{close[0]}"?)' if close else ""
    return f"is {step!r}, not an accepted value{guess}"


def _is_judge(value: object) -> bool:
    return not isinstance(value, str | type) and callable(getattr(value, "judge", None))


def memory_config(config: object) -> MemoryConfig:
    """``config`` checked, ``None`` being ``MemoryConfig()`` (the defaults)."""
    if config is None:
        return MemoryConfig()
    if not isinstance(config, MemoryConfig):
        raise InvalidInputError(
            "config", f"is a {type(config).__name__}", "pass MemoryConfig(...) or None"
        )
    return config
