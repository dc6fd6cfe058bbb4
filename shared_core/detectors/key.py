"""kappa by key: same normalised key, different object, relation of cardinality ONE.

Deterministic and linear in k: candidates are grouped by key and each group is scanned once.
Prose (no key) never conflicts here; combine with a model detector through ``AnyConflict``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from shared_core.facts import Cardinality, FactKey, key_relation, normalize_object
from shared_core.phi_t import Candidate, Conflict

CardinalityLookup = Callable[[str], Cardinality | str]


class KeyConflictDetector:
    """Same key, another object, a newer timestamp: the older candidate is superseded.

    The default detector of the document compressor and the node postprocessor: exact, no
    model, linear in the number of candidates. Only dated candidates with a subject, relation
    and object take part; prose and undated candidates never conflict under it.

    Args:
        cardinality: which relations are MANY (they never conflict): a mapping of relation
            names to a :class:`~shared_core.facts.Cardinality` (or its value), or a callable
            such as ``ledger.cardinality``. Anything undeclared is ONE.
    """

    name = "key"

    def __init__(
        self, cardinality: Mapping[str, Cardinality | str] | CardinalityLookup | None = None
    ) -> None:
        if cardinality is None or isinstance(cardinality, Mapping):
            declared = {key_relation(r): Cardinality(c) for r, c in (cardinality or {}).items()}
            self._lookup: CardinalityLookup = lambda relation: declared.get(
                relation, Cardinality.ONE
            )
        else:
            self._lookup = cardinality

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        groups: dict[FactKey, list[int]] = defaultdict(list)
        for index, candidate in enumerate(candidates):
            dated = candidate.timestamp is not None
            if dated and candidate.key is not None and candidate.object is not None:
                groups[candidate.key].append(index)
        conflicts: list[Conflict] = []
        for key, members in groups.items():
            if len(members) > 1 and Cardinality(self._lookup(key.relation)) is Cardinality.ONE:
                conflicts.extend(_superseded_in_group(candidates, members, self.name))
        return conflicts

    async def afind_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        """:meth:`find_conflicts`, inline: it is linear in k and calls no model."""
        return self.find_conflicts(candidates, query=query)


def _superseded_in_group(
    candidates: Sequence[Candidate], members: list[int], detector: str
) -> list[Conflict]:
    """One pass: the newest member, and the newest member holding another object than it."""

    times = {i: candidates[i].timestamp for i in members}  # all dated (see the caller)
    objects = {i: normalize_object(candidates[i].object) for i in members}  # type: ignore[arg-type]

    def time_of(index: int) -> datetime:
        moment = times[index]
        assert moment is not None
        return moment

    newest = max(members, key=time_of)
    others = [i for i in members if objects[i] != objects[newest]]
    runner_up = max(others, key=time_of) if others else None
    conflicts = []
    for index in members:
        if objects[index] != objects[newest]:
            dominator: int | None = newest
        else:
            dominator = runner_up
        if dominator is not None and candidates[dominator].is_newer_than(candidates[index]):
            conflicts.append(Conflict(index, dominator, detector, 1.0))
    return conflicts
