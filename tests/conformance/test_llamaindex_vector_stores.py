"""The LlamaIndex vector-store suite, run on TemporalVectorStore and on LlamaIndex's own
SimpleVectorStore (which proves the suite's expectations right).

Where the two differ, the difference is documented behaviour of one of them:

- SimpleVectorStore keeps no text (``stores_text=False``: queries return ids, the index fetches
  nodes from its docstore), implements no ``get_nodes``, rejects nested ``MetadataFilters``,
  ignores ``VectorStoreQuery.doc_ids``, and supports operators and a NOT condition beyond the
  common eight operators, which TemporalVectorStore refuses by name (the core's filters have
  no array, text-match or emptiness operators).
- TemporalVectorStore retires instead of destroying: the suite checks what both share (deleted
  nodes are gone from the current state); tests/unit/test_llamaindex_vector_store.py checks
  that history stays queryable with ``known_at``.
- Both match a missing field with NE and NIN, and compare 2019 with 2019.0 as equal; ordering
  comparisons on strings and booleans-vs-numbers differ (the core never matches them, Simple
  compares Python values) and are left out of the shared cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore, FilterOperator

from llamaindex_temporal import TemporalVectorStore
from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.conformance.llamaindex_vector_store_suite import (
    DIM,
    EXTRA_OPERATOR_CASES,
    VectorStoreConformance,
)


class TestTemporalVectorStore(VectorStoreConformance):
    unsupported_operators = frozenset(EXTRA_OPERATOR_CASES)
    supports_not = False

    @contextmanager
    def make_store(self) -> Iterator[BasePydanticVectorStore]:
        clock = ManualClock(datetime(2024, 1, 1, tzinfo=UTC))
        with TemporalMemory(
            ledger=InMemoryLedger(clock=clock),
            index=NumpyIndex(),
            config=MemoryConfig(
                embedder=HashingEmbedder(DIM),  # the embedder the suite's vectors come from
                clock=clock,
            ),
        ) as memory:
            yield TemporalVectorStore(memory)


class TestSimpleVectorStore(VectorStoreConformance):
    returns_nodes = False
    supports_get_nodes = False
    supports_nested_filters = False
    honours_doc_ids = False
    unsupported_operators: frozenset[FilterOperator] = frozenset()

    @contextmanager
    def make_store(self) -> Iterator[BasePydanticVectorStore]:
        yield SimpleVectorStore()
