"""The training generator shares no phrasing with the benchmark generator (issue 16): a model
trained on the benchmark's own sentences would be measured on its training data."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from temporal_rag_bench import generator_families as bench
from temporal_rag_training.datafiles import data_folder

_SLOT = re.compile(r"\{[^}]*\}")
_CHOICE = re.compile(r"\[([^|\]]*)\|([^\]]*)\]")


def skeleton(template: str) -> str:
    """A template with its slots as X, the third-person choice taken, lower case, no
    punctuation: "{S} [live|lives] in {v}" and "{name} lives in {value}." are the same."""
    text = _CHOICE.sub(r"\2", _SLOT.sub("X", template))
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


def training_strings() -> Iterator[str]:
    def walk(node: object) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key not in ("about", "note"):
                    yield from walk(value)

    for path in sorted(data_folder().iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".json"):
            continue
        yield from walk(json.loads(path.read_text(encoding="utf-8")))


def test_no_benchmark_template_or_affix_is_a_training_string() -> None:
    benchmark = [p for f in bench.FAMILIES for p in f.phrasings]
    benchmark += [*bench.DISTRACTOR_TEMPLATES, *bench.PREFIXES, *bench.SUFFIXES]
    skeletons = {skeleton(t) for t in benchmark} - {""}
    shared = sorted({s for s in training_strings() if skeleton(s) in skeletons})
    assert shared == []


def test_the_skeleton_sees_through_slots_and_verb_forms() -> None:
    assert skeleton("{S} [live|lives] in {v}") == skeleton("{name} lives in {value}.")
    assert skeleton(" (per the CRM)") == skeleton("Per the CRM,")
