"""How a memory is built: :class:`MemoryConfig`, one frozen value for every option of building a
:class:`~shared_core.memory.TemporalMemory` but where its ledger and index live.

``TemporalMemory(ledger=..., index=..., config=...)``, ``TemporalMemory.open(path, config=...)``,
``TemporalMemory.connect(ledger=..., index=..., config=...)`` and the adapters' ``open`` take
one; ``dataclasses.replace(config, clock=...)`` changes single options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shared_core.clock import Clock
from shared_core.embedders.base import Embedder
from shared_core.errors import InvalidInputError
from shared_core.extractors.base import Extractor
from shared_core.ledger import Durability
from shared_core.llm_calls import TextLLM
from shared_core.memory.claims import ClaimJudge
from shared_core.memory.prose_judge import ProseJudge

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
    - ``prose_judge``: judges new prose at write time: a :class:`ClaimJudge`, a
      :class:`ProseJudge`, ``"kappa"`` (the shipped claim judge, loaded on the first prose
      write) or ``None`` (prose is judged only at read time, by ``search(detector=...)``).
    - ``durability``: ``"full"`` (an fsync per commit) or ``"normal"``, for an SQLite ledger
      the memory opens.
    - ``recency_capacity`` (>= 1): how many recent writes the recency buffer holds.
    - ``reconcile``: bring the index up to date with the ledger when the memory is built.
    """

    embedder: Embedder | None = None
    extractor: Extractor | None = None
    clock: Clock | None = None
    expander: TextLLM | None = None
    prose_judge: ClaimJudge | ProseJudge | Literal["kappa"] | None = None
    durability: Durability = "full"
    recency_capacity: int = DEFAULT_RECENCY_CAPACITY
    reconcile: bool = True

    def __post_init__(self) -> None:
        judge = self.prose_judge
        if not (judge is None or judge == "kappa" or isinstance(judge, ClaimJudge | ProseJudge)):
            raise InvalidInputError(
                "prose_judge",
                f"is {judge!r}" if isinstance(judge, str) else f"is a {type(judge).__name__}",
                'pass "kappa", claim_judge(), a ClaimJudge, a ProseJudge or None',
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


def memory_config(config: object) -> MemoryConfig:
    """``config`` checked, ``None`` being ``MemoryConfig()`` (the defaults)."""
    if config is None:
        return MemoryConfig()
    if not isinstance(config, MemoryConfig):
        raise InvalidInputError(
            "config", f"is a {type(config).__name__}", "pass MemoryConfig(...) or None"
        )
    return config
