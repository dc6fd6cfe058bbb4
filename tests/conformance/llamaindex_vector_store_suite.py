"""A conformance suite for LlamaIndex vector stores (LlamaIndex ships none).

Subclass :class:`VectorStoreConformance`, provide a ``store`` fixture yielding an empty store,
and set the class attributes that describe where a store's documented semantics differ. It
runs against ``TemporalVectorStore`` and against LlamaIndex's own ``SimpleVectorStore``, which
proves the expectations themselves right.

Every node carries an embedding made by ``HashingEmbedder(DIM)``, and every query carries both
its text and that embedding: a store may rank by either (a store embedding text itself must
use the same embedder). Expected rankings are computed here, by brute-force cosine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

import numpy as np
import pytest
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)

from shared_core.embedders.base import HashingEmbedder

DIM = 64
EMBEDDER = HashingEmbedder(DIM)
ALL = 10  # a top-k larger than the corpus: every match comes back

# node id, document id, text, metadata. Only "lisbon" lacks "lang" (checks NE / NIN on a
# missing field); "tags" is a list (for the array operators some stores support).
CORPUS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("berlin", "doc-travel", "Maria flew to Berlin for a conference",
     {"topic": "travel", "year": 2019, "rating": 3.5, "lang": "en", "tags": ["city", "trip"]}),
    ("lisbon", "doc-travel", "Maria took the night train to Lisbon",
     {"topic": "travel", "year": 2021, "rating": 4.5, "tags": ["city", "train"]}),
    ("report", "doc-work", "The quarterly report is due at the end of March",
     {"topic": "work", "year": 2022, "rating": 2.0, "lang": "en", "tags": ["deadline"]}),
    ("budget", "doc-work", "The budget review meeting moved to Friday",
     {"topic": "work", "year": 2023, "rating": 5.0, "lang": "de", "tags": ["meeting", "deadline"]}),
    ("garden", "doc-home", "The tomatoes in the garden need water every evening",
     {"topic": "home", "year": 2020, "rating": 1.0, "lang": "en", "tags": ["plants"]}),
]  # fmt: skip
IDS = [node_id for node_id, *_ in CORPUS]
DOC_OF = {node_id: doc for node_id, doc, *_ in CORPUS}
TEXT_OF = {node_id: text for node_id, _, text, _ in CORPUS}


def embed(text: str) -> list[float]:
    return EMBEDDER.embed_query(text)


def corpus_nodes() -> list[TextNode]:
    """Fresh nodes (stores may keep what they are given)."""
    return [
        TextNode(
            id_=node_id,
            text=text,
            metadata=dict(metadata),
            embedding=embed(text),
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc)},
        )
        for node_id, doc, text, metadata in CORPUS
    ]


def f(key: str, operator: FilterOperator, value: Any) -> MetadataFilter:
    return MetadataFilter(key=key, operator=operator, value=value)


def both(*filters: MetadataFilter | MetadataFilters, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=FilterCondition(condition))


def ask(text: str, k: int = ALL, **fields: Any) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_str=text, query_embedding=embed(text), similarity_top_k=k, **fields
    )


def brute_force(text: str, ids: Sequence[str] = IDS) -> list[tuple[str, float]]:
    """(node id, cosine) best first: the reference ranking."""
    query = np.asarray(embed(text))
    scored = [(i, float(np.dot(query, embed(TEXT_OF[i])))) for i in ids]
    return sorted(scored, key=lambda pair: -pair[1])


OPERATOR_CASES = [  # (filters, the node ids they match): the operators every store supports
    (f("topic", FilterOperator.EQ, "work"), {"report", "budget"}),
    (f("year", FilterOperator.EQ, 2019.0), {"berlin"}),  # ints and floats compare as numbers
    (f("topic", FilterOperator.NE, "work"), {"berlin", "lisbon", "garden"}),
    (f("lang", FilterOperator.NE, "en"), {"lisbon", "budget"}),  # a missing field matches NE
    (f("year", FilterOperator.GT, 2021), {"report", "budget"}),
    (f("year", FilterOperator.GTE, 2021), {"lisbon", "report", "budget"}),
    (f("rating", FilterOperator.LT, 3.5), {"report", "garden"}),
    (f("rating", FilterOperator.LTE, 3.5), {"berlin", "report", "garden"}),
    (f("topic", FilterOperator.IN, ["home", "travel"]), {"berlin", "lisbon", "garden"}),
    (f("year", FilterOperator.IN, [2019, 2023]), {"berlin", "budget"}),
    (f("topic", FilterOperator.NIN, ["home", "travel"]), {"report", "budget"}),
    (f("lang", FilterOperator.NIN, ["en"]), {"lisbon", "budget"}),  # missing matches NIN
]
COMBINED_CASES = [
    (both(f("topic", FilterOperator.EQ, "travel"), f("year", FilterOperator.GTE, 2020)),
     {"lisbon"}),
    (both(f("topic", FilterOperator.EQ, "home"), f("rating", FilterOperator.GTE, 5.0),
          condition="or"),
     {"garden", "budget"}),
]  # fmt: skip
NESTED = both(
    f("topic", FilterOperator.IN, ["work", "travel"]),
    both(f("year", FilterOperator.LT, 2020), f("rating", FilterOperator.GTE, 5.0), condition="or"),
)
NESTED_MATCHES = {"berlin", "budget"}
EXTRA_OPERATOR_CASES = {  # operators beyond the common eight, for stores that support them
    FilterOperator.CONTAINS: (f("tags", FilterOperator.CONTAINS, "deadline"), {"report", "budget"}),
    FilterOperator.ANY: (f("tags", FilterOperator.ANY, ["train", "plants"]), {"lisbon", "garden"}),
    FilterOperator.ALL: (f("tags", FilterOperator.ALL, ["city", "trip"]), {"berlin"}),
    FilterOperator.TEXT_MATCH: (f("topic", FilterOperator.TEXT_MATCH, "ork"), {"report", "budget"}),
    FilterOperator.TEXT_MATCH_INSENSITIVE: (
        f("topic", FilterOperator.TEXT_MATCH_INSENSITIVE, "WORK"),
        {"report", "budget"},
    ),
    FilterOperator.IS_EMPTY: (f("lang", FilterOperator.IS_EMPTY, None), {"lisbon"}),
}
NOT_WORK = both(f("topic", FilterOperator.EQ, "work"), condition="not")


class VectorStoreConformance:
    """The expectations; subclasses implement :meth:`make_store` (an empty store)."""

    #: query results carry the nodes (text, metadata), not only ids and similarities
    returns_nodes: ClassVar[bool] = True
    #: get_nodes is implemented (SimpleVectorStore keeps no nodes: NotImplementedError)
    supports_get_nodes: ClassVar[bool] = True
    #: MetadataFilters may nest inside MetadataFilters
    supports_nested_filters: ClassVar[bool] = True
    #: VectorStoreQuery.doc_ids restricts the search (SimpleVectorStore ignores it)
    honours_doc_ids: ClassVar[bool] = True
    #: operators beyond the common eight that the store refuses with a ValueError naming them
    unsupported_operators: ClassVar[frozenset[FilterOperator]] = frozenset()
    #: FilterCondition.NOT is supported
    supports_not: ClassVar[bool] = True

    def make_store(self) -> AbstractContextManager[BasePydanticVectorStore]:
        raise NotImplementedError

    @pytest.fixture
    def store(self) -> Iterator[BasePydanticVectorStore]:
        with self.make_store() as store:
            yield store

    @pytest.fixture
    def another_store(self) -> Iterator[BasePydanticVectorStore]:
        with self.make_store() as store:
            yield store

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def ids(result: VectorStoreQueryResult) -> list[str]:
        assert result.ids is not None
        return list(result.ids)

    def filled(self, store: BasePydanticVectorStore) -> BasePydanticVectorStore:
        assert store.add(corpus_nodes()) == IDS
        return store

    def remaining(self, store: BasePydanticVectorStore) -> set[str]:
        return set(self.ids(store.query(ask("anything at all"))))

    # ------------------------------------------------------------------ add and query
    def test_add_returns_the_node_ids(self, store: BasePydanticVectorStore) -> None:
        assert store.add(corpus_nodes()) == IDS

    def test_add_nothing_returns_nothing(self, store: BasePydanticVectorStore) -> None:
        assert store.add([]) == []

    def test_empty_store_returns_nothing(self, store: BasePydanticVectorStore) -> None:
        assert self.ids(store.query(ask("Maria"))) == []

    @pytest.mark.parametrize("k", [1, 2, 3])
    @pytest.mark.parametrize(
        "text", ["Maria flew to Berlin", "the budget review on Friday", "Maria took the train"]
    )
    def test_query_returns_the_top_k_by_cosine(
        self, store: BasePydanticVectorStore, text: str, k: int
    ) -> None:
        expected = brute_force(text)
        assert expected[k - 1][1] > expected[k][1] + 1e-9, "the case must have no tie at k"
        result = self.filled(store).query(ask(text, k))
        assert self.ids(result) == [node_id for node_id, _ in expected[:k]]
        assert result.similarities == pytest.approx([score for _, score in expected[:k]])

    def test_a_large_k_returns_everything(self, store: BasePydanticVectorStore) -> None:
        assert sorted(self.ids(self.filled(store).query(ask("Maria", k=ALL)))) == sorted(IDS)

    def test_returned_nodes_carry_text_metadata_and_source(
        self, store: BasePydanticVectorStore
    ) -> None:
        result = self.filled(store).query(ask("Maria took the night train to Lisbon", k=1))
        if not self.returns_nodes:
            assert not result.nodes  # the index fetches nodes from its docstore by id
            return
        assert result.nodes is not None
        (node,) = result.nodes
        assert (node.node_id, node.get_content()) == ("lisbon", TEXT_OF["lisbon"])
        assert node.metadata["topic"] == "travel"
        assert node.metadata["tags"] == ["city", "train"]
        assert node.source_node is not None
        assert node.source_node.node_id == "doc-travel"

    # ------------------------------------------------------------------ filters
    @pytest.mark.parametrize(("filters", "matches"), OPERATOR_CASES + COMBINED_CASES)
    def test_filters_keep_exactly_the_matching_nodes(
        self,
        store: BasePydanticVectorStore,
        filters: MetadataFilter | MetadataFilters,
        matches: set[str],
    ) -> None:
        group = filters if isinstance(filters, MetadataFilters) else both(filters)
        result = self.filled(store).query(ask("Maria report garden", filters=group))
        assert set(self.ids(result)) == matches

    def test_filters_apply_before_top_k(self, store: BasePydanticVectorStore) -> None:
        work = both(f("topic", FilterOperator.EQ, "work"))
        result = self.filled(store).query(ask("Maria flew to Berlin", k=1, filters=work))
        best = brute_force("Maria flew to Berlin", ["report", "budget"])[0][0]
        assert self.ids(result) == [best]

    def test_nested_filters(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        if not self.supports_nested_filters:
            with pytest.raises(ValueError, match=r"[Nn]ested"):
                store.query(ask("Maria", filters=NESTED))
            return
        assert set(self.ids(store.query(ask("Maria", filters=NESTED)))) == NESTED_MATCHES

    @pytest.mark.parametrize("operator", list(EXTRA_OPERATOR_CASES))
    def test_other_operators_work_or_are_refused_by_name(
        self, store: BasePydanticVectorStore, operator: FilterOperator
    ) -> None:
        condition, matches = EXTRA_OPERATOR_CASES[operator]
        store = self.filled(store)
        if operator in self.unsupported_operators:
            with pytest.raises(ValueError, match=operator.name) as refused:
                store.query(ask("Maria", filters=both(condition)))
            assert "EQ" in str(refused.value), "the error lists the supported operators"
            return
        assert set(self.ids(store.query(ask("Maria", filters=both(condition))))) == matches

    def test_not_condition_works_or_is_refused_by_name(
        self, store: BasePydanticVectorStore
    ) -> None:
        store = self.filled(store)
        if not self.supports_not:
            with pytest.raises(ValueError, match="NOT"):
                store.query(ask("Maria", filters=NOT_WORK))
            return
        assert set(self.ids(store.query(ask("Maria", filters=NOT_WORK)))) == {
            "berlin",
            "lisbon",
            "garden",
        }

    def test_node_ids_restrict_the_search(self, store: BasePydanticVectorStore) -> None:
        result = self.filled(store).query(ask("Maria", node_ids=["berlin", "garden"]))
        assert set(self.ids(result)) == {"berlin", "garden"}

    def test_doc_ids_restrict_the_search_where_honoured(
        self, store: BasePydanticVectorStore
    ) -> None:
        result = self.filled(store).query(ask("Maria", doc_ids=["doc-home", "doc-work"]))
        expected = {"garden", "report", "budget"} if self.honours_doc_ids else set(IDS)
        assert set(self.ids(result)) == expected

    def test_empty_doc_ids_match_nothing_where_honoured(
        self, store: BasePydanticVectorStore
    ) -> None:
        result = self.filled(store).query(ask("Maria", doc_ids=[]))
        assert set(self.ids(result)) == (set() if self.honours_doc_ids else set(IDS))

    # ------------------------------------------------------------------ delete, get, clear
    def test_delete_removes_the_documents_nodes_only(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        store.delete("doc-work")
        assert self.remaining(store) == {"berlin", "lisbon", "garden"}
        store.delete("no-such-document")  # nothing to do, no error
        assert self.remaining(store) == {"berlin", "lisbon", "garden"}
        if self.supports_get_nodes:
            assert {n.node_id for n in store.get_nodes()} == {"berlin", "lisbon", "garden"}

    def test_delete_nodes_by_id(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        store.delete_nodes(["berlin", "garden"])
        assert self.remaining(store) == {"lisbon", "report", "budget"}

    def test_delete_nodes_by_filter(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        store.delete_nodes(filters=both(f("year", FilterOperator.LT, 2021)))
        assert self.remaining(store) == {"lisbon", "report", "budget"}

    def test_delete_nodes_by_id_and_filter_needs_both(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        store.delete_nodes(
            ["berlin", "report"], filters=both(f("topic", FilterOperator.EQ, "work"))
        )
        assert self.remaining(store) == {"berlin", "lisbon", "budget", "garden"}

    def test_get_nodes_by_id_and_filter(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        if not self.supports_get_nodes:
            with pytest.raises(NotImplementedError):
                store.get_nodes(["berlin"])
            return
        by_id = store.get_nodes(["berlin", "garden", "no-such-node"])
        assert {(n.node_id, n.get_content()) for n in by_id} == {
            ("berlin", TEXT_OF["berlin"]),
            ("garden", TEXT_OF["garden"]),
        }
        work = store.get_nodes(filters=both(f("topic", FilterOperator.EQ, "work")))
        assert {n.node_id for n in work} == {"report", "budget"}
        both_ways = store.get_nodes(
            ["report", "garden"], both(f("topic", FilterOperator.EQ, "work"))
        )
        assert [n.node_id for n in both_ways] == ["report"]

    def test_clear_empties_the_store(self, store: BasePydanticVectorStore) -> None:
        store = self.filled(store)
        store.clear()
        assert self.remaining(store) == set()
        assert store.add(corpus_nodes()[:1]) == ["berlin"]  # still usable
        assert self.remaining(store) == {"berlin"}

    # ------------------------------------------------------------------ async parity
    async def test_async_methods_agree_with_the_sync_ones(
        self, store: BasePydanticVectorStore, another_store: BasePydanticVectorStore
    ) -> None:
        assert self.run_sync(store) == await self.run_async(another_store)

    def run_sync(self, store: BasePydanticVectorStore) -> list[Any]:
        seen: list[Any] = [store.add(corpus_nodes())]
        seen.append(_summary(store.query(ask("Maria flew to Berlin", k=3))))
        store.delete("doc-home")
        store.delete_nodes(["berlin"])
        seen.append(_summary(store.query(ask("Maria flew to Berlin"))))
        if self.supports_get_nodes:
            seen.append(_got(store.get_nodes(["lisbon", "report"])))
        store.clear()
        seen.append(_summary(store.query(ask("Maria"))))
        return seen

    async def run_async(self, store: BasePydanticVectorStore) -> list[Any]:
        seen: list[Any] = [await store.async_add(corpus_nodes())]
        seen.append(_summary(await store.aquery(ask("Maria flew to Berlin", k=3))))
        await store.adelete("doc-home")
        await store.adelete_nodes(["berlin"])
        seen.append(_summary(await store.aquery(ask("Maria flew to Berlin"))))
        if self.supports_get_nodes:
            seen.append(_got(await store.aget_nodes(["lisbon", "report"])))
        await store.aclear()
        seen.append(_summary(await store.aquery(ask("Maria"))))
        return seen


def _summary(result: VectorStoreQueryResult) -> tuple[list[str], list[float]]:
    return list(result.ids or []), [round(s, 9) for s in result.similarities or []]


def _got(nodes: Sequence[BaseNode]) -> list[tuple[str, str]]:
    return sorted((n.node_id, n.get_content()) for n in nodes)
