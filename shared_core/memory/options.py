"""The search contract: :class:`SearchOptions`, one frozen value for what a search asks.

:meth:`TemporalMemory.search <shared_core.memory.TemporalMemory.search>`, ``asearch`` and
``context`` take one (or build one from keyword arguments), and the adapters hold one
(``TemporalRetriever.search_options``, ``TemporalVectorStore.search_options``). An option is
added here and nowhere else: :class:`SearchChanges` (the keyword form, for type checkers) must
name the same fields, which a test checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, TypedDict, Unpack

from shared_core.clock import TimeInput, to_datetime
from shared_core.errors import InvalidInputError, InvalidInputTypeError
from shared_core.facts import DEFAULT_NAMESPACE, check_namespace
from shared_core.filters import Filter, as_filter
from shared_core.phi_t import ConflictDetector

CONTEXT_K = 20
"""How many facts :meth:`TemporalMemory.context` retrieves unless told otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOptions:
    """What a search asks for; every field is checked when the value is built.

    - ``k`` (>= 1): how many facts to return (Phi_T may return fewer, the recency buffer more).
    - ``namespace``: where to search; namespaces never see each other.
    - ``valid_at`` / ``known_at``: the facts valid at ``valid_at`` as known at ``known_at``
      (aware datetimes, ISO-8601 strings with an offset or epoch seconds, read into aware
      datetimes; ``None``: now, i.e. the current state).
    - ``include_history``: also versions no longer (or not yet) valid then, such as superseded
      ones; records retired in record time (corrected, withdrawn) never come back.
    - ``detector``: Phi_T over the candidates with this conflict detector (``None``: no
      read-time filter); what it removes is in ``Hit.shadows``.
    - ``use_recency_buffer``: add the most recently written facts still visible at the query's
      times to the candidates and to the hits, beyond ``k``, as GC-Mem does.
    - ``expand`` (>= 0): ask the memory's expander for this many rewrites of the query and fuse
      the results (reciprocal-rank fusion).
    - ``where``: keep only facts whose metadata (and subject / relation / object, ``fact_id``)
      match a filter of :mod:`shared_core.filters`, or a dict of field -> value (all equal),
      inside the index; an empty dict is no filter.
    """

    k: int = 5
    namespace: str = DEFAULT_NAMESPACE
    valid_at: datetime | None = None
    known_at: datetime | None = None
    include_history: bool = False
    detector: ConflictDetector | None = None
    use_recency_buffer: bool = False
    expand: int = 0
    where: Filter | None = None

    def __post_init__(self) -> None:
        _check_count("k", self.k, least=1)
        _check_count("expand", self.expand, least=0)
        object.__setattr__(self, "namespace", check_namespace(self.namespace))
        for name in ("valid_at", "known_at"):
            object.__setattr__(self, name, to_datetime(getattr(self, name), name))
        for name in ("include_history", "use_recency_buffer"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(name, f"is {getattr(self, name)!r}", "pass True or False")
        if self.detector is not None and not isinstance(self.detector, ConflictDetector):
            raise InvalidInputError(
                "detector",
                f"is a {type(self.detector).__name__}",
                "pass a ConflictDetector (e.g. KeyConflictDetector()) or None",
            )
        where: object = self.where
        object.__setattr__(self, "where", as_filter(where))  # type: ignore[arg-type]

    def merged(self, **changes: Unpack[SearchChanges]) -> SearchOptions:
        """A copy with ``changes`` applied (the keywords of :class:`SearchChanges`). A change of
        ``None`` keeps the current value; ``where={}`` removes the filter."""
        unknown = sorted(set(changes) - set(OPTION_NAMES))
        if unknown:
            raise TypeError(
                f"unexpected search option(s) {', '.join(unknown)}; "
                f"the options are {', '.join(OPTION_NAMES)}"
            )
        given: dict[str, Any] = {k: value for k, value in changes.items() if value is not None}
        return replace(self, **given) if given else self


class SearchChanges(TypedDict, total=False):
    """:class:`SearchOptions` as keyword arguments (``search(query, k=3, valid_at=...)``);
    ``None`` means "keep what the options say"."""

    k: int | None
    namespace: str | None
    valid_at: TimeInput | None
    known_at: TimeInput | None
    include_history: bool | None
    detector: ConflictDetector | None
    use_recency_buffer: bool | None
    expand: int | None
    where: Filter | Mapping[str, Any] | None


OPTION_NAMES: tuple[str, ...] = tuple(field.name for field in fields(SearchOptions))
"""The names of the search options, in declaration order."""


def _check_count(name: str, value: object, *, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInputTypeError(
            name,
            f"is {value!r} of type {type(value).__name__}, not an int",
            f"pass an int >= {least}",
        )
    if value < least:
        raise InvalidInputError(name, f"{value!r} is out of range", f"pass an int >= {least}")
