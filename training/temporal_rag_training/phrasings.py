"""More ways of plainly stating each single-valued attribute, and news that states none.

The data file ``families/frame_phrasings.json`` holds, per family, a dozen phrasings of a plain
statement of its value beside the family's own templates (``phrasings``), and news about a
subject that states no attribute (``news``: feelings, plans, things that happened). The frame
head draws them for half its plain statements (:mod:`temporal_rag_training.frames`); the pair
generator, when asked (``phrasing_share``), says a share of its plain statements with them
and pairs a value with such news, so kappa learns the attribute and the value rather than one
family's six templates.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from temporal_rag_training.datafiles import read

PHRASINGS_FILE = "frame_phrasings.json"


@dataclass(frozen=True, slots=True)
class Phrasings:
    """The extra phrasings: per family, and news stating no attribute."""

    by_family: Mapping[str, tuple[str, ...]]
    news: tuple[str, ...]


@functools.cache
def phrasings() -> Phrasings:
    """The contents of :data:`PHRASINGS_FILE`, read once."""
    node = read(PHRASINGS_FILE)
    entries = node.entries(["about", "phrasings", "news"])
    by_family = {
        str(name): tuple(str(t) for t in templates)
        for name, templates in entries["phrasings"].items()
    }
    return Phrasings(by_family, tuple(str(t) for t in entries["news"]))
