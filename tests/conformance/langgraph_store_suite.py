"""LangGraph's own store tests, as a suite any ``BaseStore`` runs: subclass and implement
``open_store``.

Ported from langchain-ai/langgraph (MIT licence, Copyright (c) 2024 LangChain, Inc.) at commit
f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f: ``libs/checkpoint/tests/test_store.py`` (the tests of
``InMemoryStore``, and ``embed_test_utils.CharacterEmbeddings``),
``libs/checkpoint-sqlite/tests/test_store.py`` and ``libs/checkpoint-postgres/tests/
test_store.py`` / ``test_async_store.py`` (the tests every SQL store repeats). Test names are
LangGraph's; bodies are LangGraph's except where a comment says why. LangGraph ships no
conformance suite for stores (``langgraph-checkpoint-conformance`` covers checkpointers only).

Left out: tests of LangGraph's own utilities and wrappers (``get_text_at_path``, the
``AsyncBatchedBaseStore`` batching and cancellation tests), of SQL internals (migrations, glob
and LIKE escaping helpers, pool checkouts) and of TTL (a store without ``supports_ttl`` refuses
a ``ttl``, which :meth:`StoreConformance.test_ttl_is_refused_without_support` checks).

One behaviour differs by design and is a capability flag, not a silent edit:
``max_pooled_vectors``: LangGraph's stores embed each text path of an item separately and rank
the item by its best vector, so two items that each hold the query in one field score exactly
alike. A store with one vector per item (TemporalStore: one fact, one text, one vector) scores
the texts together; the assertions that need per-path vectors run only where the flag is set,
and the ones that hold for both (which item ranks first, unindexed fields score low) run for all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)


class StoreConformance:
    """What every LangGraph store does (see the module docstring for the source of each)."""

    max_pooled_vectors = True

    def open_store(self, index: dict[str, Any] | None) -> AbstractContextManager[BaseStore]:
        raise NotImplementedError

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        with self.open_store(None) as store:
            yield store

    # ------------------------------------------------------------ batches (sqlite, postgres)
    def test_batch_order(self, store: BaseStore) -> None:
        store.put(("test", "foo"), "key1", {"data": "value1"})
        store.put(("test", "bar"), "key2", {"data": "value2"})
        results = store.batch(
            [
                GetOp(namespace=("test", "foo"), key="key1"),
                PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
                SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10),
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
                GetOp(namespace=("test",), key="key3"),
            ]
        )
        assert len(results) == 5
        assert isinstance(results[0], Item)
        assert results[0].value == {"data": "value1"}
        assert (results[0].key, results[0].namespace) == ("key1", ("test", "foo"))
        assert results[1] is None
        assert isinstance(results[2], list)
        assert [(r.key, r.value) for r in results[2]] == [("key1", {"data": "value1"})]
        assert isinstance(results[3], list)
        assert ("test", "foo") in results[3]
        assert ("test", "bar") in results[3]
        assert results[4] is None

        reordered = store.batch(
            [
                SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
                GetOp(namespace=("test", "bar"), key="key2"),
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
                PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
                GetOp(namespace=("test", "foo"), key="key1"),
            ]
        )
        assert isinstance(reordered[0], list)
        assert len(reordered[0]) >= 2
        assert isinstance(reordered[1], Item)
        assert (reordered[1].key, reordered[1].value) == ("key2", {"data": "value2"})
        assert isinstance(reordered[2], list)
        assert len(reordered[2]) > 0
        assert reordered[3] is None
        assert isinstance(reordered[4], Item)
        assert reordered[4].value == {"data": "value1"}
        item3 = store.get(("test",), "key3")
        assert item3 is not None
        assert item3.value == {"data": "value3"}

    async def test_abatch_order(self, store: BaseStore) -> None:
        await store.aput(("test", "foo"), "key1", {"data": "value1"})
        await store.aput(("test", "bar"), "key2", {"data": "value2"})
        results = await store.abatch(
            [
                GetOp(namespace=("test", "foo"), key="key1"),
                PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
                SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10),
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
                GetOp(namespace=("test",), key="key3"),
            ]
        )
        assert isinstance(results[0], Item)
        assert results[0].value == {"data": "value1"}
        assert results[1] is None
        assert [r.key for r in results[2]] == ["key1"]  # type: ignore[union-attr]
        assert ("test", "bar") in results[3]  # type: ignore[operator]
        assert results[4] is None

    def test_batch_get_ops(self, store: BaseStore) -> None:
        store.put(("test",), "key1", {"data": "value1"})
        store.put(("test",), "key2", {"data": "value2"})
        results = store.batch(
            [
                GetOp(namespace=("test",), key="key1"),
                GetOp(namespace=("test",), key="key2"),
                GetOp(namespace=("test",), key="key3"),
            ]
        )
        assert [getattr(r, "key", None) for r in results] == ["key1", "key2", None]

    def test_batch_put_ops(self, store: BaseStore) -> None:
        results = store.batch(
            [
                PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
                PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
                PutOp(namespace=("test",), key="key3", value=None),
            ]
        )
        assert results == [None, None, None]
        item1, item2 = store.get(("test",), "key1"), store.get(("test",), "key2")
        assert item1 is not None
        assert item1.value == {"data": "value1"}
        assert item2 is not None
        assert item2.value == {"data": "value2"}
        assert store.get(("test",), "key3") is None

    def test_batch_search_ops(self, store: BaseStore) -> None:
        for namespace, key, value in [
            (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
            (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
            (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
        ]:
            store.put(namespace, key, value)
        results = store.batch(
            [
                SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
                SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
                SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
            ]
        )
        tagged, two, foo = (list(r) for r in results)  # type: ignore[arg-type]
        assert len(tagged) == 2
        assert all(item.value["tag"] == "a" for item in tagged)
        assert len(two) == 2
        assert [item.namespace for item in foo] == [("test", "foo")]

    def test_batch_list_namespaces_ops(self, store: BaseStore) -> None:
        data = [
            (("test", "documents", "public"), "doc1", {"content": "public doc"}),
            (("test", "documents", "private"), "doc2", {"content": "private doc"}),
            (("test", "images", "public"), "img1", {"content": "public image"}),
            (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
        ]
        for namespace, key, value in data:
            store.put(namespace, key, value)
        everything, shallow, public = store.batch(
            [
                ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
                ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
                ListNamespacesOp(
                    match_conditions=(MatchCondition("suffix", ("public",)),),
                    max_depth=None,
                    limit=10,
                    offset=0,
                ),
            ]
        )
        assert len(everything) == len(data)  # type: ignore[arg-type]
        assert all(len(ns) <= 2 for ns in shallow)  # type: ignore[union-attr]
        assert all(ns[-1] == "public" for ns in public)  # type: ignore[union-attr]

    # ------------------------------------------------------------ basic operations
    def test_basic_store_ops(self, store: BaseStore) -> None:
        namespace, item_id = ("test", "documents"), "doc1"
        item_value = {"title": "Test Document", "content": "Hello, World!"}
        store.put(namespace, item_id, item_value)
        item = store.get(namespace, item_id)
        assert item is not None
        assert (item.namespace, item.key, item.value) == (namespace, item_id, item_value)
        updated_value = {"title": "Updated Document", "content": "Hello, Updated!"}
        store.put(namespace, item_id, updated_value)
        updated = store.get(namespace, item_id)
        assert updated is not None
        assert updated.value == updated_value
        assert updated.updated_at >= item.updated_at
        assert store.get(("test", "other_documents"), item_id) is None
        store.delete(namespace, item_id)
        assert store.get(namespace, item_id) is None

    async def test_cannot_put_empty_namespace(self, store: BaseStore) -> None:
        doc = {"foo": "bar"}
        for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
            with pytest.raises(InvalidNamespaceError):
                store.put(bad, "foo", doc)
            with pytest.raises(InvalidNamespaceError):
                await store.aput(bad, "foo", doc)
        namespace = ("foo", "langgraph", "foo")
        await store.aput(namespace, "bar", doc)
        assert (await store.aget(namespace, "bar")).value == doc  # type: ignore[union-attr]
        assert (await store.asearch(namespace, query="bar"))[0].value == doc
        await store.adelete(namespace, "bar")
        assert (await store.aget(namespace, "bar")) is None
        store.put(namespace, "bar", doc)
        assert store.get(namespace, "bar").value == doc  # type: ignore[union-attr]
        assert store.search(namespace, query="bar")[0].value == doc
        store.delete(namespace, "bar")
        assert store.get(namespace, "bar") is None
        # Past the public put api: batch ops are checked for labels, not for the root
        await store.abatch([PutOp(("langgraph", "foo"), "bar", doc)])
        assert (await store.aget(("langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
        assert (await store.asearch(("langgraph", "foo")))[0].value == doc
        await store.adelete(("langgraph", "foo"), "bar")
        assert (await store.aget(("langgraph", "foo"), "bar")) is None
        store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
        assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
        assert store.search(("langgraph", "foo"))[0].value == doc
        store.delete(("langgraph", "foo"), "bar")
        assert store.get(("langgraph", "foo"), "bar") is None

    def test_search(self, store: BaseStore) -> None:
        data = [
            (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["a"]}),
            (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["b"]}),
            (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["c"]}),
        ]
        for namespace, key, value in data:
            store.put(namespace, key, value)
        # The SQL stores' test passes lists; InMemoryStore compares prefixes as tuples
        assert len(store.search(("test",))) == 3
        docs = store.search(("test", "docs"))
        assert len(docs) == 2
        assert all(item.namespace == ("test", "docs") for item in docs)
        alice = store.search(("test",), filter={"author": "Alice"})
        assert len(alice) == 2
        assert all(item.value["author"] == "Alice" for item in alice)
        assert len(store.search(("test",), limit=2)) == 2
        assert len(store.search(("test",), offset=2)) == 1
        for namespace, key, _ in data:
            store.delete(namespace, key)

    def test_ttl_is_refused_without_support(self, store: BaseStore) -> None:
        """(BaseStore.put's own rule; LangGraph's TTL tests need ``supports_ttl``.)"""
        if store.supports_ttl:
            pytest.skip("this store supports TTL")
        with pytest.raises(NotImplementedError):
            store.put(("a",), "b", {"c": 1}, ttl=5)

    # ------------------------------------------------------------ namespaces
    def test_list_namespaces_basic(self, store: BaseStore) -> None:
        namespaces = [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
            ("users", "456", "settings"),
            ("admin", "users", "789"),
        ]
        for i, ns in enumerate(namespaces):
            store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
        ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
        assert sorted(store.list_namespaces(prefix=("a", "b"))) == ab
        assert sorted(store.list_namespaces(suffix=("f",))) == [
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
        ]
        assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [
            ("a", "b", "f"),
            ("a", "c", "f"),
        ]
        assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
            ("a", "b", "c"),
            ("a", "b", "d"),
            ("a", "b", "f"),
        ]
        assert store.list_namespaces(prefix=("a", "b"), limit=2) == ab[:2]
        assert store.list_namespaces(prefix=("a", "b"), offset=2) == ab[2:]
        assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [
            ("a", "b", "f"),
            ("a", "c", "f"),
        ]
        assert sorted(store.list_namespaces(suffix=("*", "f"))) == [
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
        ]
        assert store.list_namespaces(prefix=("nonexistent",)) == []
        assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]

    def test_list_namespaces_with_wildcards(self, store: BaseStore) -> None:
        namespaces = [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ]
        for i, ns in enumerate(namespaces):
            store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
        assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
        ]
        assert store.list_namespaces(suffix=("*", "preferences")) == [
            ("guests", "456", "preferences")
        ]
        assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []

    def test_list_namespaces_pagination(self, store: BaseStore) -> None:
        for i in range(20):
            store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": f"value_{i:02d}"})
        for offset in (0, 5, 15):
            assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == [
                ("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)
            ]

    def test_list_namespaces_max_depth(self, store: BaseStore) -> None:
        for i, ns in enumerate(
            [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i")]
        ):
            store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
        assert sorted(store.list_namespaces(max_depth=2)) == [("a", "b"), ("a", "g"), ("h", "i")]

    def test_list_namespaces_no_conditions(self, store: BaseStore) -> None:
        namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
        for i, ns in enumerate(namespaces):
            store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
        assert sorted(store.list_namespaces()) == namespaces

    def test_list_namespaces_empty_store(self, store: BaseStore) -> None:
        assert store.list_namespaces() == []

    def test_list_namespaces(self, store: BaseStore) -> None:
        namespaces = [
            ("test", "documents", "public"),
            ("test", "documents", "private"),
            ("test", "images", "public"),
            ("test", "images", "private"),
            ("prod", "documents", "public"),
            ("prod", "documents", "private"),
        ]
        for namespace in namespaces:
            store.put(namespace, "dummy", {"content": "dummy"})
        assert len(store.list_namespaces()) == len(namespaces)
        tests = store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]
        assert len(tests) == 4
        assert all(ns[0] == "test" for ns in tests)
        public = store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
        assert len(public) == 3
        assert all(ns[-1] == "public" for ns in public)
        assert all(len(ns) <= 2 for ns in store.list_namespaces(max_depth=2))
        assert len(store.list_namespaces(limit=3)) == 3
        for namespace in namespaces:
            store.delete(namespace, "dummy")

    def test_search_namespace_segment_boundary(self, store: BaseStore) -> None:
        for namespace in [
            ("foo",),
            ("foo", "child"),
            ("foo", "child", "deep"),
            ("foobar",),
            ("foobar", "baz"),
            ("foo2",),
        ]:
            store.put(namespace, "k", {"v": 1})

        def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
            return {item.namespace for item in store.search(prefix, limit=100)}

        assert found(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
        assert found(("foobar",)) == {("foobar",), ("foobar", "baz")}
        assert found(("foo", "child")) == {("foo", "child"), ("foo", "child", "deep")}
        assert found(("foo2",)) == {("foo2",)}
        assert found(("fo",)) == set()

    def test_search_namespace_wildcard_chars_are_literal(self, store: BaseStore) -> None:
        for namespace in [
            ("user_1",),
            ("user_1", "child"),
            ("userX1",),
            ("a%b",),
            ("axxb",),
            ("star*",),
            ("starX",),
        ]:
            store.put(namespace, "k", {"v": 1})

        def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
            return {item.namespace for item in store.search(prefix, limit=100)}

        assert found(("user_1",)) == {("user_1",), ("user_1", "child")}
        assert found(("a%b",)) == {("a%b",)}
        assert found(("star*",)) == {("star*",)}

    def test_search_namespace_is_case_sensitive(self, store: BaseStore) -> None:
        store.put(("Foo",), "k", {"v": "upper"})
        store.put(("foo",), "k", {"v": "lower"})
        assert {item.namespace for item in store.search(("foo",), limit=100)} == {("foo",)}
        assert {item.namespace for item in store.search(("Foo",), limit=100)} == {("Foo",)}

    def test_list_namespaces_segment_boundary(self, store: BaseStore) -> None:
        for namespace in [
            ("foo",),
            ("foo", "child"),
            ("foobar",),
            ("foobar", "baz"),
            ("uid", "users", "alice"),
            ("uid", "users", "malice"),
            ("uid", "a", "b", "alice"),
        ]:
            store.put(namespace, "k", {"v": 1})
        listed = store.list_namespaces
        assert set(listed(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}  # type: ignore[arg-type]
        assert set(listed(suffix=["alice"], limit=100)) == {  # type: ignore[arg-type]
            ("uid", "users", "alice"),
            ("uid", "a", "b", "alice"),
        }
        assert set(listed(prefix=["uid", "*", "alice"], limit=100)) == {  # type: ignore[arg-type]
            ("uid", "users", "alice")
        }
        assert set(listed(prefix=["uid"], limit=100)) == {  # type: ignore[arg-type]
            ("uid", "users", "alice"),
            ("uid", "users", "malice"),
            ("uid", "a", "b", "alice"),
        }

    def test_search_empty_prefix_is_unconstrained(self, store: BaseStore) -> None:
        for namespace in [("a",), ("b", "c"), ("d", "e", "f")]:
            store.put(namespace, "k", {"v": 1})
        assert {item.namespace for item in store.search((), limit=100)} == {
            ("a",),
            ("b", "c"),
            ("d", "e", "f"),
        }

    def test_namespace_labels_with_trailing_newline(self, store: BaseStore) -> None:
        store.put(("users", "alice"), "k", {"v": 1})
        store.put(("users", "alice\n"), "k", {"v": 2})
        listed = store.list_namespaces
        assert set(listed(suffix=["alice"], limit=100)) == {("users", "alice")}  # type: ignore[arg-type]
        assert set(listed(prefix=["users", "alice"], limit=100)) == {("users", "alice")}  # type: ignore[arg-type]

    def test_list_namespaces_metacharacter_labels(self, store: BaseStore) -> None:
        pairs = [
            ("star*", "starX"),
            ("q?m", "qXm"),
            ("br[ack]et", "brXacXket"),
            ("user_1", "userX1"),
            ("a%b", "axxb"),
            ("plus+", "plusX"),
        ]
        for label, decoy in pairs:
            store.put((label,), "k", {"v": 1})
            store.put((decoy,), "k", {"v": 1})
            store.put((label, "child"), "k", {"v": 1})
        for label, decoy in pairs:
            found = set(store.list_namespaces(prefix=[label], limit=100))  # type: ignore[arg-type]
            assert found == {(label,), (label, "child")}
            assert (decoy,) not in found
            assert set(store.list_namespaces(prefix=[label, "child"], limit=100)) == {  # type: ignore[arg-type]
                (label, "child")
            }

    # ------------------------------------------------------------ filters (sqlite)
    def test_sql_injection_filter_values(self, store: BaseStore) -> None:
        store.put(("docs",), "doc1", {"access": "public", "title": "Public Document"})
        store.put(("docs",), "doc2", {"access": "private", "title": "Private Document"})
        store.put(("docs",), "doc3", {"access": "secret", "title": "Secret Document"})
        for malicious in [
            "public' OR '1'='1",
            "public'; --",
            "public' UNION SELECT * FROM store --",
            "public\x00' OR '1'='1",
            "''''",
            "public' OR 'א'='א",
        ]:
            assert store.search(("docs",), filter={"access": malicious}) == []
        store.put(("docs",), "doc4", {"title": "O'Brien's Document", "access": "public"})
        results = store.search(("docs",), filter={"title": "O'Brien's Document"})
        assert [r.value["title"] for r in results] == ["O'Brien's Document"]

    def test_numeric_filter_safety(self, store: BaseStore) -> None:
        store.put(("items",), "item1", {"price": 10, "quantity": 5})
        store.put(("items",), "item2", {"price": 20, "quantity": 3})
        store.put(("items",), "item3", {"price": 30, "quantity": 1})
        results = store.search(("items",), filter={"price": {"$gt": 15}})
        assert len(results) == 2
        assert all(r.value["price"] > 15 for r in results)
        assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
        assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
        assert store.search(("items",), filter={"price": {"$eq": float("nan")}}) == []
        assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3
        store.put(("items",), "item4", {"price": -10, "quantity": 0})
        assert [r.key for r in store.search(("items",), filter={"price": {"$lt": 0}})] == ["item4"]

    def test_boolean_filter_safety(self, store: BaseStore) -> None:
        store.put(("flags",), "flag1", {"active": True, "name": "Feature A"})
        store.put(("flags",), "flag2", {"active": False, "name": "Feature B"})
        store.put(("flags",), "flag3", {"active": True, "name": "Feature C"})
        active = store.search(("flags",), filter={"active": True})
        assert len(active) == 2
        assert all(r.value["active"] is True for r in active)
        inactive = store.search(("flags",), filter={"active": False})
        assert [r.value["active"] for r in inactive] == [False]

    def test_filter_keys_with_hyphens_and_digits(self, store: BaseStore) -> None:
        """The top-level half of SqliteStore's test: its dotted paths into nested values
        ("user.access-level") are an extension of the SQL stores that InMemoryStore, the
        reference, does not have."""
        store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "n"}})
        store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
        assert [r.key for r in store.search(("docs",), filter={"access-level": "public"})] == [
            "hyphen"
        ]
        assert [r.key for r in store.search(("docs",), filter={"123abc": "ok"})] == ["digit"]
        nested = store.search(("docs",), filter={"user": {"123abc": "ok2"}})
        assert [r.key for r in nested] == ["digit"]

    # ------------------------------------------------------------ concurrency (postgres)
    async def test_large_batches(self, store: BaseStore) -> None:
        """(Postgres's test at N=5, M=3: threads putting, reading, listing and deleting.)"""
        n, m = 5, 3
        with ThreadPoolExecutor(max_workers=4) as executor:
            futures = []
            for j in range(m):
                for i in range(n):
                    namespace = ("test", "foo", "bar", "baz", str(j % 2))
                    futures += [
                        executor.submit(store.put, namespace, f"key{i}", {"foo": f"bar{i}"}),
                        executor.submit(store.get, namespace, f"key{i}"),
                        executor.submit(store.list_namespaces, prefix=None, max_depth=j + 1),
                        executor.submit(store.search, ("test",)),
                        executor.submit(store.put, namespace, f"key{i}", {"foo": f"bar{i}"}),
                        executor.submit(store.put, namespace, f"key{i}", None),
                    ]
            results = await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
        assert len(results) == m * n * 6

    async def test_large_batches_async(self, store: BaseStore) -> None:
        """(Postgres's test at N=5, M=3.)"""
        n, m = 5, 3
        coros: list[Any] = []
        for j in range(m):
            for i in range(n):
                namespace = ("test", "foo", "bar", "baz", str(j % 2))
                coros += [
                    store.aput(namespace, f"key{i}", value={"foo": f"bar{i}"}),
                    store.aget(namespace, f"key{i}"),
                    store.alist_namespaces(prefix=None, max_depth=j + 1),
                    store.asearch(("test",)),
                    store.aput(namespace, f"key{i}", value={"foo": f"bar{i}"}),
                    store.adelete(namespace, f"key{i}"),
                ]
        assert len(await asyncio.gather(*coros)) == m * n * 6
