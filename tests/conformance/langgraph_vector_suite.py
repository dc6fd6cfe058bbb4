"""The vector-search half of LangGraph's store tests (see langgraph_store_suite.py for where
they come from and the ``max_pooled_vectors`` flag): a store built with ``vector_store(fields)``
embeds with LangGraph's ``CharacterEmbeddings``."""

from __future__ import annotations

import asyncio
import math
import random
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.base.batch import AsyncBatchedBaseStore

from tests.conformance.langgraph_store_suite import StoreConformance

DIMS = 500


class CharacterEmbeddings(Embeddings):
    """LangGraph's test embeddings: character frequencies through random projections
    (``libs/checkpoint/tests/embed_test_utils.py``)."""

    def __init__(self, dims: int = 50, seed: int = 42) -> None:
        self._rng = random.Random(seed)
        self.dims = dims
        self._char_projections: defaultdict[str, list[float]] = defaultdict(
            lambda: [self._rng.gauss(0, 1 / math.sqrt(self.dims)) for _ in range(self.dims)]
        )

    def _embed_one(self, text: str) -> list[float]:
        counts = Counter(text)
        total = sum(counts.values())
        if total == 0:
            return [0.0] * self.dims
        embedding = [0.0] * self.dims
        for char, count in counts.items():
            weight = count / total
            for i, proj in enumerate(self._char_projections[char]):
                embedding[i] += weight * proj
        norm = math.sqrt(sum(x * x for x in embedding))
        return [x / norm for x in embedding] if norm > 0 else embedding

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed_one(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharacterEmbeddings) and self.dims == other.dims

    __hash__ = None  # type: ignore[assignment]  # equal by value, as LangGraph's


def cosine(x: list[float], y: list[float]) -> float:
    dot = sum(a * b for a, b in zip(x, y, strict=True))
    return dot / (math.sqrt(sum(a * a for a in x)) * math.sqrt(sum(b * b for b in y)))


VectorStoreFactory = Callable[..., AbstractContextManager[BaseStore]]


class Batched(AsyncBatchedBaseStore):
    """LangGraph's batching wrapper (what its server puts in front of a store) over a store,
    as the ``MockAsyncBatchedStore`` of LangGraph's tests wraps InMemoryStore."""

    def __init__(self, store: BaseStore) -> None:
        super().__init__()
        self.store = store

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self.store.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self.store.abatch(ops)


class VectorSearchConformance(StoreConformance):
    """LangGraph's vector-search tests, beside the key-value ones of the base class."""

    @pytest.fixture
    def fake_embeddings(self) -> CharacterEmbeddings:
        return CharacterEmbeddings(dims=DIMS)

    @pytest.fixture
    def vector_store(self, fake_embeddings: CharacterEmbeddings) -> VectorStoreFactory:
        """``vector_store(fields=None)``: a store embedding ``fields`` with ``fake_embeddings``."""

        def make(fields: list[str] | None = None) -> AbstractContextManager[BaseStore]:
            index = {"dims": fake_embeddings.dims, "embed": fake_embeddings, "fields": fields}
            return self.open_store(index)

        return make

    def test_basic_store_operations(self, vector_store: VectorStoreFactory) -> None:
        with vector_store(["key0", "key1", "key3"]) as store:
            uid = uuid.uuid4().hex
            namespace, item_id = (uid, "test", "documents"), "doc1"
            assert store.search((uid,)) == []
            store.put(namespace, item_id, {"title": "Test Document", "content": "Hello!"})
            item = store.get(namespace, item_id)
            assert item is not None
            assert item.created_at is not None
            assert item.updated_at is not None
            store.put(namespace, item_id, {"title": "Updated", "content": "Hello, LangGraph!"})
            updated = store.get(namespace, item_id)
            assert updated is not None
            assert updated.value == {"title": "Updated", "content": "Hello, LangGraph!"}
            assert updated.updated_at >= item.updated_at
            assert store.get((uid, "test", "other_documents"), item_id) is None
            store.put(namespace, "doc2", {"title": "Another Document", "content": "Greetings!"})
            assert {i.key for i in store.search((uid, "test"), limit=10)} == {"doc1", "doc2"}
            assert (uid, "test", "documents") in store.list_namespaces(prefix=(uid, "test"))
            store.delete(namespace, item_id)
            store.delete(namespace, "doc2")
            assert store.get(namespace, item_id) is None
            assert store.get(namespace, "doc2") is None
            assert store.search((uid, "test"), limit=10) == []

    def test_search_items(self, vector_store: VectorStoreFactory) -> None:
        base = "test_search_items"
        namespaces = [
            (base, "documents", "user1"),
            (base, "documents", "user2"),
            (base, "reports", "department1"),
            (base, "reports", "department2"),
        ]
        values = [
            {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
            {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
            {"title": "Report A", "author": "John Doe", "tags": ["final"]},
            {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
        ]
        with vector_store(["key0", "key1", "key3"]) as store:
            for namespace, value in zip(namespaces, values, strict=True):
                store.put(namespace, f"item_{namespace[-1]}", value)
            docs = store.search((base, "documents"))
            assert len(docs) == 2
            assert all(item.namespace[1] == "documents" for item in docs)
            reports = store.search((base, "reports"))
            assert len(reports) == 2
            assert all(item.namespace[1] == "reports" for item in reports)
            first = {item.key for item in store.search((base,), limit=2, offset=0)}
            second = {item.key for item in store.search((base,), limit=2, offset=2)}
            assert len(first) == len(second) == 2
            assert first.isdisjoint(second)
            assert len(store.search((base,))) == 4
            john = store.search((base,), filter={"author": "John Doe"})
            assert len(john) == 2
            drafts = store.search((base,), filter={"tags": ["draft"]})
            assert len(drafts) == 2
            assert all("draft" in item.value["tags"] for item in drafts)

    def test_list_namespaces_operations(self, vector_store: VectorStoreFactory) -> None:
        with vector_store(["key0", "key1", "key3"]) as store:
            pre = str(uuid.uuid4())
            namespaces = [
                (pre, "test", "documents", "public", pre),
                (pre, "test", "documents", "private", pre),
                (pre, "test", "images", "public", pre),
                (pre, "test", "images", "private", pre),
                (pre, "prod", "documents", "public", pre),
                (pre, "prod", "documents", "some", "nesting", "public", pre),
                (pre, "prod", "documents", "private", pre),
            ]
            for namespace in namespaces:
                store.put(namespace, "dummy", {"content": "dummy"})
            found = store.list_namespaces(prefix=(pre, "test"))
            assert len(found) == 4
            assert all(ns[1] == "test" for ns in found)
            found = store.list_namespaces(prefix=(pre, "test", "documents"))
            assert len(found) == 2
            assert all(ns[1:3] == ("test", "documents") for ns in found)
            found = store.list_namespaces(suffix=("public", pre))
            assert len(found) == 4
            assert all(ns[-2] == "public" for ns in found)
            found = store.list_namespaces(prefix=(pre, "test"), suffix=("public", pre))
            assert len(found) == 2
            found = store.list_namespaces(prefix=(pre, "*", "documents"))
            assert len(found) == 5
            assert all(ns[2] == "documents" for ns in found)
            assert len(store.list_namespaces(suffix=("*", "public", pre))) == 4
            assert store.list_namespaces(suffix=("some", "*", "public", pre)) == [namespaces[5]]
            assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
            deep = store.list_namespaces(max_depth=4, prefix=(pre, "*", "documents"))
            assert len(set(deep)) == len(deep) == 5
            assert len(store.list_namespaces(prefix=(pre,), limit=3)) == 3
            assert len(store.list_namespaces(prefix=(pre,), offset=3)) == len(namespaces) - 3
            assert set(store.list_namespaces(prefix=(pre,))) == set(namespaces)

    def test_vector_insert_with_auto_embedding(self, vector_store: VectorStoreFactory) -> None:
        with vector_store() as store:
            for key, value in [
                ("doc1", {"text": "short text"}),
                ("doc2", {"text": "longer text document"}),
                ("doc3", {"text": "longest text document here"}),
                ("doc4", {"description": "text in description field"}),
                ("doc5", {"content": "text in content field"}),
                ("doc6", {"body": "text in body field"}),
            ]:
                store.put(("test",), key, value)
            keys = [r.key for r in store.search(("test",), query="long text")]
            assert "doc2" in keys
            assert "doc3" in keys

    async def test_async_vector_insert_with_auto_embedding(
        self, vector_store: VectorStoreFactory
    ) -> None:
        with vector_store() as store:
            for key, value in [
                ("doc1", {"text": "short text"}),
                ("doc2", {"text": "longer text document"}),
                ("doc3", {"text": "longest text document here"}),
                ("doc4", {"description": "text in description field"}),
            ]:
                await store.aput(("test",), key, value)
            keys = [r.key for r in await store.asearch(("test",), query="long text")]
            assert "doc2" in keys
            assert "doc3" in keys

    def test_vector_update_with_embedding(self, vector_store: VectorStoreFactory) -> None:
        with vector_store() as store:
            store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
            store.put(("test",), "doc2", {"text": "something about dogs"})
            store.put(("test",), "doc3", {"text": "text about birds"})
            initial = store.search(("test",), query="Zany Xerxes")
            assert initial[0].key == "doc1"
            initial_score = initial[0].score
            assert initial_score is not None
            store.put(("test",), "doc1", {"text": "new text about dogs"})
            after = store.search(("test",), query="Zany Xerxes")
            after_score = next((r.score for r in after if r.key == "doc1"), 0.0)
            assert after_score is not None
            assert after_score < initial_score
            for r in store.search(("test",), query="new text about dogs"):
                if r.key == "doc1":
                    assert r.score is not None
                    assert r.score > after_score
            store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
            results = store.search(("test",), query="new text about dogs", limit=3)
            assert not any(r.key == "doc4" for r in results)

    async def test_async_vector_update_with_embedding(
        self, vector_store: VectorStoreFactory
    ) -> None:
        with vector_store() as store:
            await store.aput(("test",), "doc1", {"text": "zany zebra Xerxes"})
            await store.aput(("test",), "doc2", {"text": "something about dogs"})
            await store.aput(("test",), "doc3", {"text": "text about birds"})
            initial = await store.asearch(("test",), query="Zany Xerxes")
            assert initial[0].key == "doc1"
            initial_score = initial[0].score
            assert initial_score is not None
            await store.aput(("test",), "doc1", {"text": "new text about dogs"})
            after = await store.asearch(("test",), query="Zany Xerxes")
            after_score = next((r.score for r in after if r.key == "doc1"), 0.0)
            assert after_score is not None
            assert after_score < initial_score
            await store.aput(("test",), "doc4", {"text": "new text about dogs"}, index=False)
            results = await store.asearch(("test",), query="new text about dogs", limit=3)
            assert not any(r.key == "doc4" for r in results)

    @pytest.mark.parametrize("use_async", [False, True])
    async def test_vector_search_with_filters(
        self, vector_store: VectorStoreFactory, use_async: bool
    ) -> None:
        with vector_store() as store:
            for key, value in [
                ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
                ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
                ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
                ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
            ]:
                store.put(("test",), key, value)

            async def search(query: str, condition: dict[str, Any]) -> list[str]:
                if use_async:
                    found = await store.asearch(("test",), query=query, filter=condition)
                else:
                    found = store.search(("test",), query=query, filter=condition)
                return [r.key for r in found]

            red_apples = await search("apple", {"color": "red"})
            assert len(red_apples) == 2
            assert red_apples[0] == "doc1"
            red_cars = await search("car", {"color": "red"})
            assert len(red_cars) == 2
            assert red_cars[0] == "doc2"
            high = await search("bbbbluuu", {"score": {"$gt": 3.2}})
            assert len(high) == 3
            assert high[0] == "doc4"
            assert {"doc1", "doc3"} <= set(high)
            assert await search("apple", {"score": {"$gte": 4.0}, "color": "green"}) == ["doc3"]

    @pytest.mark.parametrize("use_async", [False, True])
    async def test_vector_search_pagination(
        self, vector_store: VectorStoreFactory, use_async: bool
    ) -> None:
        with vector_store() as store:
            for i in range(5):
                store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})

            async def search(**page: int) -> list[Any]:
                if use_async:
                    return await store.asearch(("test",), query="test", **page)
                return store.search(("test",), query="test", **page)

            page1, page2 = await search(limit=2), await search(limit=2, offset=2)
            assert len(page1) == len(page2) == 2
            assert {r.key for r in page1}.isdisjoint({r.key for r in page2})
            assert page1[0].score >= page1[1].score
            assert page2[0].score >= page2[1].score
            everything = await search(limit=10)
            assert len(everything) == 5
            assert everything[0].score >= everything[2].score

    def test_vector_search_edge_cases(self, vector_store: VectorStoreFactory) -> None:
        with vector_store() as store:
            store.put(("test",), "doc1", {"text": "test document"})
            for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
                assert len(store.search(("test",), query=query)) == 1

    async def test_embed_with_path(self, vector_store: VectorStoreFactory) -> None:
        """InMemoryStore's test (with SqliteStore's "zzz" case). Per-path vectors: see
        ``max_pooled_vectors`` in the module docstring."""
        with vector_store(["key0", "key1", "key3"]) as store:
            doc1 = {"key1": "xxx", "key2": "yyy", "key3": "zzz"}  # key0 omitted on purpose
            doc2 = {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"}
            await store.aput(("test",), "doc1", doc1)
            await store.aput(("test",), "doc2", doc2)
            results = await store.asearch(("test",), query="xxx")
            assert len(results) == 2
            assert results[0].key != results[1].key
            ascore, bscore = results[0].score, results[1].score
            assert ascore is not None
            assert bscore is not None
            if self.max_pooled_vectors:  # both hold "xxx" in one field: one vector each
                assert ascore == pytest.approx(bscore, abs=1e-5)
            for query, best in [("uuu", "doc2"), ("zzz", "doc1")]:
                results = await store.asearch(("test",), query=query)
                assert len(results) == 2
                assert results[0].key == best
                assert results[0].score > results[1].score  # type: ignore[operator]
                if self.max_pooled_vectors:
                    assert ascore == pytest.approx(results[0].score, abs=1e-5)
            # Un-indexed: low for both, lower than a query an indexed field holds
            results = await store.asearch(("test",), query="www")
            assert len(results) == 2
            assert all(r.score < ascore for r in results)  # type: ignore[operator]

        with vector_store(["key17"]) as store:
            doc3 = {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}
            doc4 = {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}
            await store.aput(("test",), "doc3", doc3, index=["key0", "key1"])
            await store.aput(("test",), "doc4", doc4, index=["key1", "key3"])
            for query, best in [("aaa", "doc3"), ("ggg", "doc4")]:
                results = await store.asearch(("test",), query=query)
                assert len(results) == 2
                assert results[0].key == best
                assert results[0].score > results[1].score  # type: ignore[operator]
            results = await store.asearch(("test",), query="bbb")
            assert len(results) == 2
            assert results[0].key != results[1].key
            if self.max_pooled_vectors:
                assert results[0].score == results[1].score
            else:  # SqliteStore's own bound for this case
                assert abs(results[0].score - results[1].score) < 0.1  # type: ignore[operator]
            results = await store.asearch(("test",), query="ccc")
            assert len(results) == 2
            assert all(r.score < ascore for r in results)  # type: ignore[operator]
            await store.aput(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
            results = await store.asearch(("test",), query="hhh")
            assert len(results) == 3
            assert next(r for r in results if r.key == "doc5").score is None
            assert len(await store.asearch(("test",))) == 3

    @pytest.mark.parametrize("query", ["aaa", "bbb", "ccc", "abcd", "poisson"])
    def test_scores(
        self, vector_store: VectorStoreFactory, fake_embeddings: CharacterEmbeddings, query: str
    ) -> None:
        with vector_store(["key0"]) as store:
            store.put(("test",), "doc", {"key0": "aaa"}, index=["key0", "key1"])
            results = store.search((), query=query)
            expected = cosine(
                fake_embeddings.embed_query(query), fake_embeddings.embed_query("aaa")
            )
            assert len(results) == 1
            assert results[0].score == pytest.approx(expected, abs=1e-3)

    async def test_search_sorting(self, vector_store: VectorStoreFactory) -> None:
        """(Postgres's async test, with 8 items per namespace instead of 100.)"""
        with vector_store(["key1"]) as store:
            await store.aput(("test", "M"), "M", {"key1": "mmm"})
            for prefix in ("A", "Z"):
                for i in range(8):
                    await store.aput(("test", prefix), f"{prefix}{i}", {"key1": "no"})
            results = await store.asearch(("test",), query="mmm", limit=10)
            assert len(results) == 10
            assert len({r.key for r in results}) == 10
            assert results[0].key == "M"
            assert results[0].score > results[1].score  # type: ignore[operator]

    async def test_async_batched_vector_search_concurrent(
        self, vector_store: VectorStoreFactory
    ) -> None:
        """Concurrent puts, deletes and filtered searches through the batching wrapper."""
        colors = ["red", "blue", "green", "yellow", "purple"]
        things = ["apple", "car", "house", "book", "phone"]
        scores = [3.0, 3.5, 4.0, 4.5, 5.0]
        docs = [
            (
                f"doc{i}",
                {
                    "text": f"{colors[i % 5]} {things[i % 5]}",
                    "color": colors[i % 5],
                    "score": scores[i % 5],
                    "index": i,
                },
            )
            for i in range(50)
        ]
        queries: list[tuple[str, dict[str, Any]]] = [
            ("apple", {"color": "red"}),
            ("car", {"color": "blue"}),
            ("house", {"color": "green"}),
            ("phone", {"score": {"$gt": 4.99}}),
            ("book", {"score": {"$lte": 3.5}}),
            ("apple", {"score": {"$gte": 3.0}, "color": "red"}),
            ("car", {"score": {"$lt": 5.1}, "color": "blue"}),
            ("house", {"index": {"$gt": 25}}),
            ("phone", {"index": {"$lte": 10}}),
        ]
        checks: dict[str, Callable[[float, float], bool]] = {
            "$gt": float.__gt__,
            "$gte": float.__ge__,
            "$lt": float.__lt__,
            "$lte": float.__le__,
        }
        with vector_store() as inner:
            store = Batched(inner)
            await asyncio.gather(
                *[store.aput(("test",), key, value) for key, value in docs],
                *[store.adelete(("test",), key) for key, _ in docs],
                *[store.aput(("test",), key, value) for key, value in docs],
            )
            found = await asyncio.gather(
                *[store.asearch(("test",), query=q, filter=f) for q, f in queries]
            )
        for results, (query, condition) in zip(found, queries, strict=True):
            assert results, f"no results for {query!r} with {condition}"
            for result in results:
                if "color" in condition:
                    assert result.value["color"] == condition["color"]
                for name in ("score", "index"):
                    for op, bound in condition.get(name, {}).items():
                        assert checks[op](float(result.value[name]), float(bound))

    def test_non_ascii(self, vector_store: VectorStoreFactory) -> None:
        with vector_store() as store:
            texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
            for key, text in enumerate(texts, start=1):
                store.put(("user_123", "memories"), str(key), {"text": text})
            for key, text in enumerate(texts, start=1):
                assert store.search(("user_123", "memories"), query=text)[0].key == str(key)
