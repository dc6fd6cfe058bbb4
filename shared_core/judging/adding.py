"""Values that add up: which relations hold several values at once, and which statements say
they add one. Both read ``cardinality_words.json`` (on first use) and only ever keep a fact
that might still hold: the LLM judge (:mod:`shared_core.judging.llm`) makes such a relation
multi-valued, and the claim judge (:mod:`shared_core.judging.claims`) lets no such reading
end a claim on its values alone.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from shared_core.facts import normalize_text

CARDINALITY_WORDS_FILE = Path(__file__).with_name("cardinality_words.json")


@functools.cache
def _cardinality_words() -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """The data file's relation words and additive cues (read once, on first use)."""
    raw = json.loads(CARDINALITY_WORDS_FILE.read_text(encoding="utf-8"))
    cues = tuple(
        re.compile(rf"(?<![\w]){re.escape(normalize_text(cue))}(?![\w])")
        for cue in raw["additive_cues"]
    )
    return frozenset(raw["many_relation_words"]), cues


def adds_up(relation: str) -> bool:
    """Whether a relation's words say its values add up (``allergic_to``, ``pet_name``)."""
    words, _ = _cardinality_words()
    return any(word in words for word in re.split(r"[\W_]+", relation.lower()) if word)


def says_it_adds(text: str) -> bool:
    """Whether a statement says it adds a value ("also", "too", "another", ...)."""
    _, cues = _cardinality_words()
    normalized = normalize_text(text)
    return any(cue.search(normalized) for cue in cues)
