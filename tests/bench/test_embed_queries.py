"""Query embedding in the bench's shared store: batched when the embedder can."""

from __future__ import annotations

from collections.abc import Sequence

from shared_core import HashingEmbedder
from temporal_rag_bench.shared_collection import embed_queries


class Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.single = 0

    def embed_query(self, text: str) -> list[float]:
        self.single += 1
        return super().embed_query(text)


class Batching(Counting):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        return [HashingEmbedder.embed_query(self, text) for text in texts]


TEXTS = [f"where does person {i} live" for i in range(300)]


def test_an_embedder_with_embed_queries_is_asked_in_batches() -> None:
    batching = Batching()
    vectors = embed_queries(batching, TEXTS)
    assert batching.single == 0
    assert batching.batches == [256, 44]
    assert vectors == [HashingEmbedder(dimension=16).embed_query(t) for t in TEXTS]


def test_any_other_embedder_is_asked_one_query_at_a_time() -> None:
    counting = Counting()
    assert embed_queries(counting, TEXTS[:5]) == [counting.embed_query(t) for t in TEXTS[:5]]
    assert counting.single == 10
