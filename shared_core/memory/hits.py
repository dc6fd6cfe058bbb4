"""What :class:`~shared_core.memory.TemporalMemory` returns from writes and searches."""

from __future__ import annotations

from dataclasses import dataclass

from shared_core.facts import Fact
from shared_core.ledger.results import WriteResult
from shared_core.phi_t import Shadow


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the fact as known at the query's ``known_at``, its cosine similarity
    to the query (the best over expanded variants) and the shadows Phi_T removed because of it.

    ``shadows`` holds every removed candidate whose dominator chain ends at this hit (A -> B ->
    C: both A and B are shadows of C). ``from_buffer`` marks a fact the recency buffer added.
    """

    fact: Fact
    score: float
    shadows: tuple[Shadow, ...] = ()
    from_buffer: bool = False


@dataclass(frozen=True, slots=True)
class Added:
    """The outcome of adding one text: one write per stored statement.

    A text the extractor found no keyed facts in is stored once, as prose. ``problem`` says
    why an extractor's or the prose judge's output for it was rejected, in whole or in part
    (what was rejected was then stored as prose, never lost).
    """

    text: str
    writes: tuple[WriteResult, ...]
    problem: str | None = None

    @property
    def fact_ids(self) -> tuple[str, ...]:
        """The ids of the versions that now carry each statement (retractions have none)."""
        return tuple(w.fact.id for w in self.writes if w.fact is not None)

    @property
    def closed(self) -> tuple[Fact, ...]:
        """Versions these writes ended or shortened (superseded keyed values, prose that a
        prose judge found contradicted), as they are now."""
        return tuple(dict.fromkeys(fact for w in self.writes for fact in w.closed))


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """What a reconcile did: records applied to the index, texts embedded, rows removed, and
    where a damaged index was moved before it was rebuilt (``moved_to``; None: it was not)."""

    applied: int
    embedded: int
    removed: int = 0
    moved_to: str | None = None
