"""Hostile metadata through the LangChain and LlamaIndex adapters (issue 9, part 3).

The adapters document :class:`~shared_core.errors.InvalidInputError` (naming the document or node
and the field) for unreadable metadata, and pydantic's ``ValidationError`` for bad constructor
fields. Properties: nothing else escapes; inputs are never mutated; a failed write stores
nothing (ledger export and index unchanged).
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from pydantic import ValidationError

from langchain_temporal import TemporalDocumentCompressor, TemporalRetriever
from llamaindex_temporal import TemporalNodePostprocessor, TemporalVectorStore
from shared_core.errors import TemporalRagError
from tests.unit.test_fuzz_memory import (
    FUZZ,
    hostile_datetimes,
    hostile_floats,
    hostile_metadata,
    hostile_strings,
    make_memory,
    metadata_values,
    snapshot,
)

ADAPTERS = settings(FUZZ, max_examples=30, suppress_health_check=list(HealthCheck))
timestamps = st.one_of(
    hostile_datetimes,
    hostile_strings,
    hostile_floats,
    st.integers(-(2**70), 2**70),
    st.floats(-1e12, 1e12),
    st.sampled_from(
        [
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-13-45T99:99:99Z",
            "-2024-01-01T00:00:00Z",
            "9999-12-31T23:59:59+14:00",
            "0001-01-01T00:00:00-14:00",
            "1e400",
            "nan",
        ]
    ),
    metadata_values,
)
field_values = st.one_of(
    hostile_strings, st.sampled_from(["Maria", "lives in", "Lisbon"]), metadata_values
)
KEYS = [
    "subject",
    "relation",
    "object",
    "valid_from",
    "timestamp",
    "namespace",
    "shadows",
    "valid_to",
]


@st.composite
def hostile_meta(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = draw(hostile_metadata)
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=len(KEYS))):
        meta[key] = draw(
            timestamps if key in {"valid_from", "timestamp", "valid_to"} else field_values
        )
    return meta


metas = st.lists(hostile_meta(), min_size=1, max_size=5)


# --------------------------------------------------------------------------- Phi_T filters
@ADAPTERS
@given(metas=metas, text=hostile_strings)
def test_compressor_takes_any_metadata_or_names_the_bad_document(
    metas: list[dict[str, Any]], text: str
) -> None:
    docs = [Document(page_content=f"{text} {i}", metadata=meta) for i, meta in enumerate(metas)]
    pristine = copy.deepcopy(docs)
    for compressor in (
        TemporalDocumentCompressor(),
        TemporalDocumentCompressor(timestamp_key="valid_from"),
    ):
        kept, error = _attempt(partial(compressor.compress_documents, docs, "Where is Maria?"))
        assert error is None or "document" in str(error)  # it names the document
        assert len(kept) <= len(docs)
        assert repr(docs) == repr(pristine), "inputs must not be mutated"  # repr: NaN != NaN


def _attempt(operation: Callable[[], list[Any]]) -> tuple[list[Any], TemporalRagError | None]:
    try:
        return operation(), None
    except TemporalRagError as exc:
        return [], exc


@ADAPTERS
@given(metas=metas, text=hostile_strings, namespace_key=st.sampled_from(["namespace", None]))
def test_postprocessor_takes_any_metadata_or_names_the_bad_node(
    metas: list[dict[str, Any]], text: str, namespace_key: str | None
) -> None:
    nodes = [
        NodeWithScore(node=TextNode(text=f"{text} {i}", metadata=meta), score=0.5)
        for i, meta in enumerate(metas)
    ]
    before = repr([n.node.metadata for n in nodes])
    post = TemporalNodePostprocessor(namespace_key=namespace_key)
    kept, error = _attempt(lambda: post.postprocess_nodes(nodes, query_str="Where is Maria?"))
    assert error is None or "node" in str(error)  # it names the node
    assert len(kept) <= len(nodes)
    assert repr([n.node.metadata for n in nodes]) == before, "inputs must not be mutated"


@pytest.mark.parametrize(
    "fields",
    [
        {"timestamp_key": 3},
        {"namespace_key": ["x"]},
        {"detector": "not a detector"},
        {"bogus": True},
    ],
)
def test_bad_filter_fields_are_validation_errors(fields: dict[str, Any]) -> None:
    with pytest.raises((ValidationError, TemporalRagError)):
        TemporalDocumentCompressor(**fields)
    with pytest.raises((ValidationError, TemporalRagError)):
        TemporalNodePostprocessor(**fields)


# --------------------------------------------------------------------------- writes
@ADAPTERS
@given(metas=metas, text=hostile_strings, namespace=st.one_of(st.none(), hostile_strings))
def test_retriever_add_documents_is_all_or_nothing(
    metas: list[dict[str, Any]], text: str, namespace: str | None
) -> None:
    with make_memory() as memory:
        retriever = TemporalRetriever(memory=memory, k=3)
        docs = [Document(page_content=f"{text} {i}", metadata=meta) for i, meta in enumerate(metas)]
        before = snapshot(memory)
        try:
            ids = retriever.add_documents(docs, namespace=namespace)
        except TemporalRagError:
            assert snapshot(memory) == before
        else:
            assert all(memory.ledger.get(fact_id) for fact_id in ids)
        retriever.invoke("Where does Maria live?")


@ADAPTERS
@given(metas=metas, text=hostile_strings, node_id=st.one_of(st.none(), hostile_strings))
def test_vector_store_add_is_all_or_nothing(
    metas: list[dict[str, Any]], text: str, node_id: str | None
) -> None:
    with make_memory() as memory:
        store = TemporalVectorStore(memory)
        nodes = []
        for i, meta in enumerate(metas):
            try:
                nodes.append(
                    TextNode(text=f"{text} {i}", metadata=meta, id_=node_id or f"node-{i}")
                )
            except ValidationError:  # llama-index's own model refused the node
                return
        before = snapshot(memory)
        try:
            store.add(nodes)
        except TemporalRagError:
            assert snapshot(memory) == before
        store.query(VectorStoreQuery(query_str="Maria", similarity_top_k=3))


# --------------------------------------------------------------------------- reads
filter_values = st.one_of(
    hostile_strings,
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.booleans(),
    st.lists(st.one_of(hostile_strings, st.integers(), st.floats()), max_size=3),
)


def _metadata_filter(key: str, value: Any, operator: FilterOperator) -> MetadataFilter | None:
    try:
        return MetadataFilter(key=key, value=value, operator=operator)
    except ValidationError:  # llama-index's own model refuses it: never reaches the store
        return None


metadata_filters = st.recursive(
    st.builds(
        _metadata_filter,
        key=st.one_of(hostile_strings, st.sampled_from(["subject", "year", "node_id", "source"])),
        value=filter_values,
        operator=st.sampled_from(list(FilterOperator)),
    ).filter(lambda f: f is not None),
    lambda inner: st.builds(
        MetadataFilters,
        filters=st.lists(inner, max_size=3),
        condition=st.sampled_from(list(FilterCondition)),
    ),
    max_leaves=5,
).map(lambda f: f if isinstance(f, MetadataFilters) else MetadataFilters(filters=[f]))


@ADAPTERS
@given(
    filters=st.one_of(st.none(), metadata_filters),
    doc_ids=st.one_of(st.none(), st.lists(hostile_strings, max_size=3)),
    node_ids=st.one_of(st.none(), st.lists(hostile_strings, max_size=3)),
    top_k=st.one_of(st.integers(-2, 20), st.none()),
    kwargs=st.dictionaries(
        st.sampled_from(["valid_at", "known_at", "namespace", "include_history", "bogus"]),
        st.one_of(timestamps, hostile_strings, st.booleans()),
        max_size=3,
    ),
)
def test_vector_store_query_refuses_cleanly(
    filters: MetadataFilters | None,
    doc_ids: list[str] | None,
    node_ids: list[str] | None,
    top_k: int | None,
    kwargs: dict[str, Any],
) -> None:
    with make_memory() as memory:
        store = TemporalVectorStore(memory)
        before = snapshot(memory)
        query = VectorStoreQuery(
            query_str="Where does Maria live?",
            similarity_top_k=top_k,
            filters=filters,
            doc_ids=doc_ids,
            node_ids=node_ids,
        )
        with contextlib.suppress(TemporalRagError):
            store.query(query, **kwargs)
        assert snapshot(memory)[0] == before[0]


@ADAPTERS
@given(
    overrides=st.dictionaries(
        st.sampled_from(
            ["k", "valid_at", "known_at", "namespace", "include_history", "where", "expand"]
        ),
        st.one_of(timestamps, hostile_strings, st.integers(-3, 5), hostile_metadata),
        max_size=3,
    )
)
def test_retriever_invoke_overrides_refuse_cleanly(overrides: dict[str, Any]) -> None:
    with make_memory() as memory:
        retriever = TemporalRetriever(memory=memory, k=3)
        with contextlib.suppress(TemporalRagError, ValidationError):
            retriever.invoke("Where does Maria live?", **overrides)


def test_nan_in_document_metadata_is_kept_or_refused_never_stored_half() -> None:
    with make_memory() as memory:
        retriever = TemporalRetriever(memory=memory, k=3)
        before = snapshot(memory)
        docs = [
            Document(page_content="fine", metadata={"score": 1.0}),
            Document(
                page_content="Maria",
                metadata={"subject": "Maria", "relation": "r", "object": math.nan},
            ),
        ]
        with pytest.raises(TemporalRagError):
            retriever.add_documents(docs)
        assert snapshot(memory) == before
        assert datetime.now(UTC)  # the memory is still usable
        retriever.invoke("Maria")
