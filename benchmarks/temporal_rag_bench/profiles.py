"""Bench profiles (how big a run is) and loading the datasets a run asks for.

``quick`` is what ``make bench`` runs (about seven minutes on 2 cores with MiniLM: every track,
the chat track's 451 statements among them, the external ones and the model-judged reads
sampled); ``full`` is ten times the synthetic
benchmark and every external item; ``tiny`` is for tests and smoke runs.
External datasets are read from the folder a run is given (``--data-dir`` or
``$TEMPORAL_RAG_DATA``) and skipped with a note when there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from temporal_rag_bench.chat import SIZES as CHAT_SIZES
from temporal_rag_bench.chat import ChatSize, generate_chat
from temporal_rag_bench.generator import Profile
from temporal_rag_bench.model import Dataset, Track

CHAT = "chat"
DATASETS = (
    "synthetic-keyed",
    "synthetic-prose",
    "situatedqa",
    "locomo",
    "locomo-observations",
    CHAT,
)
OPT_IN: tuple[str, ...] = ()
"""Selectable with ``--dataset`` but left out of the default run (none today)."""
KNOWN = DATASETS + OPT_IN
OBSERVATIONS = "locomo-observations"
"""Not a method dataset: write-time prose judging on LoCoMo's observations (observations.py)."""


@dataclass(frozen=True, slots=True)
class BenchProfile:
    """Synthetic entities (the generator scales everything with them), the caps on the
    external datasets (SituatedQA: time-dependent and static items each; LoCoMo and its
    observations: conversations; None: all) and how many questions of a prose dataset the
    methods that call a model on every read answer (``judge_sample``); ``chat``: the size of
    the chat track (:mod:`temporal_rag_bench.chat`)."""

    name: str
    entities: int
    situatedqa: int | None
    locomo: int | None
    observations: int | None
    judge_sample: int
    chat: ChatSize = field(default_factory=ChatSize)


PROFILES = {
    "tiny": BenchProfile(
        "tiny",
        entities=6,
        situatedqa=10,
        locomo=1,
        observations=1,
        judge_sample=40,
        chat=CHAT_SIZES["tiny"],
    ),
    "quick": BenchProfile(
        "quick",
        entities=60,
        situatedqa=50,
        locomo=2,
        observations=None,
        judge_sample=20,
        chat=CHAT_SIZES["quick"],
    ),
    "full": BenchProfile(
        "full",
        entities=600,
        situatedqa=None,
        locomo=None,
        observations=None,
        judge_sample=200,
        chat=CHAT_SIZES["full"],
    ),
}


def load_datasets(
    names: Sequence[str],
    *,
    profile: BenchProfile,
    seed: int,
    data_dir: Path | None,
    limit: int | None = None,
) -> tuple[list[Dataset], list[str]]:
    """The datasets named (in :data:`KNOWN` order) and notes on any that were skipped.
    ``limit`` caps the questions of every dataset (spread evenly over it). The observations
    track is not a dataset of the method matrix: :mod:`temporal_rag_bench.observations`."""
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"unknown dataset {', '.join(unknown)}; known: {', '.join(KNOWN)}")
    synthetic = Profile(profile.name, seed, profile.entities)
    found: list[Dataset] = []
    notes: list[str] = []
    for name in (n for n in KNOWN if n in names and n != OBSERVATIONS):
        if name == CHAT:
            found.append(generate_chat(seed=seed, size=profile.chat))
        elif name.startswith("synthetic-"):
            track = Track.KEYED if name == "synthetic-keyed" else Track.PROSE
            found.append(synthetic.generate(track))
        elif data_dir is None or not data_dir.is_dir():
            where = "no --data-dir" if data_dir is None else f"{data_dir} does not exist"
            notes.append(f"{name}: skipped ({where}; pass --data-dir with the shared data)")
        else:
            found.append(_external(name, data_dir, profile))
    return [_limited(d, limit) for d in found], notes


def _external(name: str, data_dir: Path, profile: BenchProfile) -> Dataset:
    from temporal_rag_bench.datasets import load_locomo, load_situatedqa

    if name == "situatedqa":
        return load_situatedqa(data_dir, limit=profile.situatedqa, keyed=True)
    return load_locomo(data_dir, limit=profile.locomo)


def _limited(dataset: Dataset, limit: int | None) -> Dataset:
    """At most ``limit`` questions, spread evenly over the dataset (so every cell keeps some)."""
    total = len(dataset.questions)
    if limit is None or total <= limit:
        return dataset
    picked = sorted({i * total // limit for i in range(limit)})
    return replace(dataset, questions=tuple(dataset.questions[i] for i in picked))
