"""The claim judge end to end on labelled pairs (temporal_rag_training.claims_eval), with a
fake frame reader and scorer so each verdict is known in advance."""

from __future__ import annotations

import re
from collections.abc import Sequence

from shared_core import HashingEmbedder
from shared_core.detectors.frames import Frame, FrameProfile
from shared_core.detectors.kappa import Verdict
from shared_core.judging.claims import ClaimJudge
from temporal_rag_training.claims_eval import claims_markdown, claims_report
from temporal_rag_training.labelled import LabelledPair

EMBEDDER = HashingEmbedder(dimension=32)
_CITY = re.compile(r"(?:lives in|moved to) (\w+)")


class CityFrames:
    """Statements naming a city are home_city; the rest have no frame."""

    def __init__(self) -> None:
        self.framed: set[tuple[float, ...]] = set()

    def frame(self, *texts: str) -> None:
        self.framed.update(tuple(v) for v in EMBEDDER.embed_documents(list(texts)))

    def profiles(self, vectors: Sequence[Sequence[float]]) -> list[FrameProfile]:
        framed = FrameProfile(0.99, Frame("home_city", 0.99), (1.0,))
        return [framed if tuple(v) in self.framed else FrameProfile(0.01, None, (1.0,))
                for v in vectors]  # fmt: skip


class CityScorer:
    def verdict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        out = []
        for older, newer in pairs:
            a, b = _CITY.search(older), _CITY.search(newer)
            same = a is not None and b is not None and a.group(1) == b.group(1)
            out.append(
                Verdict(ends=0.0 if same else 0.95, restates=0.95 if same else 0.0, neither=0)
            )
        return out


def pair(older: str, newer: str, label: int, kind: str) -> LabelledPair:
    return LabelledPair(older, newer, label, kind, "residence")


PAIRS = [
    pair("Ana lives in Braga.", "Ana moved to Porto.", 1, "explicit_change"),
    pair("Rui lives in Lyon.", "Rui is happy there.", 1, "implied_change"),  # second no state
    pair("Eva lives in Oslo.", "Eva moved to Oslo, as said.", 0, "paraphrase"),
    pair("Tom lives in Rome.", "Ida moved to Nice.", 0, "other_person"),
]


def test_each_pair_gets_what_the_memory_did_and_the_gate_says_where_changes_stop() -> None:
    frames = CityFrames()
    frames.frame(*(t for p in PAIRS for t in (p.older, p.newer) if _CITY.search(t)))
    judge = ClaimJudge(
        scorer=CityScorer(), frames=frames, name="fake", ends_threshold=0.9, restates_threshold=0.9
    )
    report = claims_report(PAIRS, judge, EMBEDDER)
    assert {kind: dict(counts) for kind, counts in report.verdicts.items()} == {
        "explicit_change": {"ends": 1},
        "implied_change": {"neither": 1},
        "paraphrase": {"restates": 1},
        "other_person": {"neither": 1},
    }
    assert (report.ends.precision, report.ends.recall) == (1.0, 0.5)
    assert (report.recognised, report.restating, report.false_restates) == (1, 1, 0)
    assert report.changes == 2
    assert report.gate == {
        "same subject": 2,
        "both likely states": 1,
        "likely one attribute": 1,
    }
    text = claims_markdown("fake on tiny", report)
    assert "recall 0.500" in text
    assert "| paraphrase | 0 | 1 | 0 |" in text
