"""The frame head's training script (``make train-frames``): a seeded run is reproduced, and what
it writes is a head the runtime reads, carrying the claim judge's gates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from shared_core.detectors.frames import FRAMES_CARD, FRAMES_WEIGHTS, FrameHead
from shared_core.embedders.minilm import MiniLMEmbedder


def train(out: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "temporal_rag_training.frame_head",
            "--count=400",
            "--hidden=16",
            "--epochs=2",
            "--seed=5",
            "--threads=1",
            f"--out={out}",
        ],
        check=True,
        capture_output=True,
        cwd=out.parent,
    )


def test_a_seeded_run_is_reproduced_and_the_runtime_reads_it(tmp_path: Path) -> None:
    train(tmp_path / "a")
    train(tmp_path / "b")
    first, second = (tmp_path / run / FRAMES_WEIGHTS for run in ("a", "b"))
    with np.load(first) as a, np.load(second) as b:
        assert sorted(a.files) == ["bias", "hidden_bias", "hidden_weights", "weights"]
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
        assert a["hidden_weights"].shape == (16, 384)
    card = json.loads((tmp_path / "a" / FRAMES_CARD).read_text())
    assert (card["state_threshold"], card["agreement_threshold"]) == (0.5, 0.9)
    assert card["static_labels"] == ["hometown", "native_language"]
    assert card["facts"]["hidden"] == 16
    head = FrameHead(folder=tmp_path / "a")
    profiles = head.profiles(MiniLMEmbedder().embed_documents(["I live in Lisbon.", "Hi!"]))
    assert all(0.0 <= p.state <= 1.0 for p in profiles)
    assert len(profiles[0].attributes) == len(card["labels"]) - 1
