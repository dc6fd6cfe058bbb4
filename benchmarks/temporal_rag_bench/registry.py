"""Which methods a bench run compares: the built-in ones and those the adapters provide.

The adapters (``langchain_temporal``, ``llamaindex_temporal``) run the frameworks' real classes;
the core never imports them: they are found through the entry point group
``temporal_rag.bench_methods``, each naming a function that returns a list of methods. An
adapter whose framework is not installed is skipped with a note.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from temporal_rag_bench.methods_temporal import BUFFER_SIZE, Judge, core_methods

ENTRY_POINT_GROUP = "temporal_rag.bench_methods"
OURS = "supersession+phi-t"


@dataclass(slots=True)
class Selection:
    """The methods of a run and notes on what was left out (e.g. a framework not installed)."""

    methods: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def discover(
    entry_points: Iterable[Any] | None = None,
) -> Selection:
    """Methods from every ``temporal_rag.bench_methods`` entry point that loads."""
    found = Selection()
    points = (
        importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        if entry_points is None
        else entry_points
    )
    for point in sorted(points, key=lambda p: str(p.name)):
        try:
            factory: Callable[[], Sequence[Any]] = point.load()
            methods = list(factory())
        except ImportError as exc:
            found.notes.append(f"{point.name}: not run, its framework is not installed ({exc})")
            continue
        found.methods.extend(methods)
    return found


def select_methods(
    wanted: Sequence[str] | None = None,
    *,
    judge: Judge | None = None,
    buffer: int = BUFFER_SIZE,
    frameworks: bool = True,
) -> Selection:
    """The built-in methods (buffer off and on) and the adapters', narrowed to ``wanted``:
    exact names (``plain+buffer``) or families (``plain`` selects both buffer variants)."""
    selection = Selection(methods=list(core_methods(judge=judge, buffer=buffer)))
    if frameworks:
        found = discover()
        selection.methods.extend(found.methods)
        selection.notes.extend(found.notes)
    if wanted:
        selection.methods = narrow(selection.methods, wanted)
    return selection


def method_names(methods: Iterable[Any]) -> set[str]:
    """The names and families ``--methods`` may select among ``methods``."""
    return {n for m in methods for n in (m.name, family_of(m))}


def narrow(methods: Sequence[Any], wanted: Sequence[str], *, strict: bool = True) -> list[Any]:
    """The methods named in ``wanted`` (exact name or family), in their original order;
    unknown names raise ValueError listing the known ones (``strict=False``: ignored, for a
    dataset that runs only some of the methods)."""
    names = method_names(methods)
    unknown = [w for w in wanted if w not in names]
    if unknown and strict:
        raise ValueError(f"unknown method {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    keep = set(wanted)
    return [m for m in methods if m.name in keep or family_of(m) in keep]


def family_of(method: Any) -> str:
    """A method's family (its name without ``+buffer``)."""
    return str(getattr(method, "family", method.name.removesuffix("+buffer")))
