"""Where the tests find the external evaluation data (SituatedQA, LoCoMo): ``$TEMPORAL_RAG_DATA``
(``make test`` sets it), else ``../shared/data`` beside the checkout. Tests that need a file
skip, naming it, when it is absent; nothing here is read by the packages themselves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "TEMPORAL_RAG_DATA"
BESIDE_THE_CHECKOUT = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def data_folder() -> Path:
    """The evaluation data folder (it may not exist)."""
    chosen = os.environ.get(ENV)
    return Path(chosen).resolve() if chosen else BESIDE_THE_CHECKOUT


def require(relative: str) -> Path:
    """The data folder, or a skip naming the missing file."""
    folder = data_folder()
    if not (folder / relative).is_file():
        pytest.skip(
            f"{folder / relative} is absent (set ${ENV} to the evaluation data folder, "
            "as make test does)"
        )
    return folder
