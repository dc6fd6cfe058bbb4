"""The LoCoMo-observations track on a small file in LoCoMo's format (no real data needed)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from shared_core.embedders.base import HashingEmbedder
from shared_core.judging.pairwise import ProseJudge
from temporal_rag_bench.observations import load_observations, run_observations
from temporal_rag_bench.report import markdown
from temporal_rag_bench.results import observation_targets

MOVED = "Ana moved to Porto."
LIVES = "Ana lives in Braga."


class MovedScorer:
    """Says the moving statement ends the living one; nothing else ends anything."""

    def contradiction_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [1.0 if (older, newer) == (LIVES, MOVED) else 0.0 for older, newer in pairs]


def _sample() -> dict[str, Any]:
    return {
        "sample_id": "conv-1",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2_date_time": "10:00 am on 3 June, 2023",
            "session_1": [],
            "session_2": [],
        },
        "observation": {
            "session_2_observation": {"Ana": [[MOVED, "D2:1"], ["Ana adopted a cat.", "D2:04"]]},
            "session_1_observation": {
                "Ana": [[LIVES, "D1:3"]],
                "Ben": [["Ben plays the violin.", ["D1:5", "D1:6"]]],
            },
        },
        "qa": [
            {"question": "Where does Ana live?", "evidence": ["D2:1"], "category": 1},
            {"question": "What does Ben play?", "evidence": ["D1:5; D1:6"], "category": 4},
            {"question": "Where did Ana live in May?", "evidence": ["D1:3"], "category": 2},
            {"question": "Unanswerable?", "evidence": ["D1:3"], "category": 5},
            {"question": "No evidence?", "evidence": [], "category": 2},
        ],
    }


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    (folder / "locomo").mkdir(parents=True)
    (folder / "locomo" / "locomo10.json").write_text(json.dumps([_sample()]), encoding="utf-8")
    return folder


def test_observations_load_by_session_date_with_repaired_evidence(data_dir: Path) -> None:
    (conversation,) = load_observations(data_dir)
    assert [s.date.isoformat() for s in conversation.sessions] == [
        "2023-05-08T13:56:00+00:00",
        "2023-06-03T10:00:00+00:00",
    ]
    first, second = conversation.sessions
    assert [(o.text, o.evidence) for o in first.observations] == [
        (LIVES, ("conv-1:D1:3",)),
        ("Ben plays the violin.", ("conv-1:D1:5", "conv-1:D1:6")),
    ]
    assert second.observations[1].evidence == ("conv-1:D2:4",)
    assert conversation.questions == (
        ("Where does Ana live?", ("conv-1:D2:1",)),
        ("What does Ben play?", ("conv-1:D1:5", "conv-1:D1:6")),
        ("Where did Ana live in May?", ("conv-1:D1:3",)),
    )


def test_observations_track_counts_closings_and_recall_with_the_judge_on_and_off(
    data_dir: Path,
) -> None:
    judge = ProseJudge(scorer=MovedScorer(), threshold=0.5, name="moved", min_cosine=-1.0)
    results = run_observations(data_dir, HashingEmbedder(dimension=64), judge=judge, k=4)
    assert (results["statements"], results["questions"], results["closed"]) == (4, 3, 1)
    assert results["closed_share"] == pytest.approx(0.25)
    assert results["samples"] == [
        {"conversation": "conv-1", "closed": LIVES, "by": MOVED, "score": 1.0}
    ]
    # k = 4 retrieves every current statement: off finds all evidence; on, the closed one
    # (the May residence) is gone
    assert results["recall_off"] == 1.0
    assert results["recall_on"] == pytest.approx(2 / 3)
    checks = {c["target"]: c["met"] for c in observation_targets(results)}
    assert checks == {
        "observations: share of statements closed": False,
        "observations: recall@4 judge on vs off (points)": False,
    }


def test_observations_section_lists_the_closed_pairs(data_dir: Path) -> None:
    judge = ProseJudge(scorer=MovedScorer(), threshold=0.5, name="moved", min_cosine=-1.0)
    observations = run_observations(data_dir, HashingEmbedder(dimension=64), judge=judge, k=4)
    meta = {
        "command": "bench",
        "environment": {"date": "d", "platform": "p", "cores": 2, "versions": {}},
        "seconds": 1.0,
        "profile": "tiny",
        "seed": 0,
        "k": 5,
        "notes": [],
    }
    text = markdown({"meta": meta, "datasets": [], "targets": [], "observations": observations}, [])
    assert "## locomo-observations (write-time prose judging)" in text
    assert f"| {LIVES} | {MOVED} | 1.000 |" in text
    assert "| statements closed | 1 of 4 (25.0%) |" in text
