"""The adapter toolkit of the core: one set of rules that both adapters call, so LangChain's
Documents and LlamaIndex's nodes are read, reported and written the same way."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from langchain_temporal import TemporalDocumentCompressor, TemporalRetriever
from llamaindex_temporal import TemporalNodePostprocessor, TemporalVectorStore
from shared_core.adapter_toolkit import (
    DEFAULT_TIMESTAMP_FIELD,
    FACT_FIELDS,
    HIT_FIELDS,
    MetadataFields,
    candidate_from_metadata,
    fact_metadata,
    shadow_record,
    survivors,
)
from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.facts import FactKey
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory
from shared_core.phi_t import temporal_dominance

QUERY = "Where does Maria live?"
RECORD_FIELDS = [
    "id", "fact_id", "position", "text", "timestamp", "namespace", "dominated_by", "detector",
    "score",
]  # fmt: skip


def d(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def lives(city: str, year: int, **extra: Any) -> dict[str, Any]:
    return {"subject": "Maria", "relation": "lives in", "object": city, "valid_from": d(year),
            **extra}  # fmt: skip


TIMELINE = [
    ("b", "Maria lives in Berlin.", lives("Berlin", 2019)),
    ("x", "Maria's favourite food is sardines.", {"subject": "Maria", "valid_from": d(2020)}),
    ("l", "Maria lives in Lisbon.", lives("Lisbon", 2022, shadows=[{"id": "r", "text": "Rome"}])),
    ("p", "Maria lives in Porto.", lives("Porto", 2024)),
]


@pytest.fixture
def memory() -> Iterator[TemporalMemory]:
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    with TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(64), clock=clock),
    ) as memory:  # fmt: skip
        yield memory


def test_both_postprocessors_read_and_report_the_same_way() -> None:
    """Same inputs, same survivors and the same shadow records in LangChain and LlamaIndex:
    tau from valid_from, a partial key is prose, the removed item's shadows move on."""
    documents = [Document(text, id=i, metadata=meta) for i, text, meta in TIMELINE]
    nodes = [NodeWithScore(node=TextNode(id_=i, text=text, metadata=meta), score=None)
             for i, text, meta in TIMELINE]  # fmt: skip
    kept_documents = TemporalDocumentCompressor().compress_documents(documents, QUERY)
    kept_nodes = TemporalNodePostprocessor().postprocess_nodes(nodes)
    assert [doc.id for doc in kept_documents] == [n.node.node_id for n in kept_nodes] == ["x", "p"]
    langchain_shadows = kept_documents[1].metadata["shadows"]
    llamaindex_shadows = kept_nodes[1].node.metadata["shadows"]
    assert langchain_shadows == llamaindex_shadows
    assert [s.get("id") for s in langchain_shadows] == ["b", "l", "r"]
    assert list(langchain_shadows[0]) == RECORD_FIELDS


def test_both_memory_adapters_return_the_same_metadata(memory: TemporalMemory) -> None:
    for city, year in (("Berlin", 2019), ("Porto", 2024)):
        memory.add(f"Maria lives in {city}.", subject="Maria", relation="lives in", object=city,
                   valid_from=d(year), metadata={"source": "chat"})  # fmt: skip
    detector = KeyConflictDetector()
    (document,) = TemporalRetriever(memory=memory, k=1, include_history=True,
                                    detector=detector).invoke(QUERY)  # fmt: skip
    store = TemporalVectorStore(memory)
    (node,) = store.query(
        VectorStoreQuery(query_str=QUERY, similarity_top_k=1),
        include_history=True,
        detector=detector,
    ).nodes
    node_metadata = dict(node.metadata)
    assert node_metadata.pop("node_id") == node_metadata["fact_id"]  # written without the store
    assert node_metadata.pop("ref_doc_id") is None
    assert node_metadata == document.metadata
    assert set(FACT_FIELDS) | set(HIT_FIELDS) | {"source"} == set(document.metadata)


def test_fact_metadata_times_are_iso_and_the_fact_wins_on_a_clash(memory: TemporalMemory) -> None:
    (write,) = memory.add("Maria lives in Porto.", subject="Maria", relation="lives in",
                          object="Porto", valid_from=d(2024),
                          metadata={"status": "mine", "topic": "home"}).writes  # fmt: skip
    assert write.fact is not None
    metadata = fact_metadata(write.fact)
    assert metadata["valid_from"] == "2024-01-01T00:00:00+00:00"
    assert metadata["valid_to"] is None
    assert metadata["status"] == "current"
    assert metadata["topic"] == "home"


def test_a_candidate_reads_tau_and_the_key_from_the_default_fields() -> None:
    fields = MetadataFields()
    assert fields.timestamp == DEFAULT_TIMESTAMP_FIELD == "valid_from"
    keyed = candidate_from_metadata(position=3, text="t", metadata=lives("Porto", 2024),
                                    fields=fields, label="documents[3]")  # fmt: skip
    assert keyed.id == "3"
    assert keyed.timestamp == d(2024)
    assert keyed.key == FactKey("default", "maria", "lives_in")
    partial = candidate_from_metadata(position=0, text="t", metadata={"subject": "Re: lunch"},
                                      fields=fields, label="documents[0]")  # fmt: skip
    assert (partial.key, partial.timestamp) == (None, None)


def test_a_candidate_carries_the_speaker_and_other_scalar_metadata_never_failing_on_the_rest() -> (
    None
):
    # the group detector keeps speakers apart by metadata["user_id"]: adapters dropped it
    metadata = {
        "user_id": "ana",
        "turn": 3,
        "score": 0.5,
        "pinned": True,
        "note": None,
        "valid_from": d(2024),  # a datetime: read as tau, left out of the metadata
        "tags": ["a"],
        "extra": {"b": 1},
        "nan": float("nan"),
        "broken": "\ud800",
    }
    candidate = candidate_from_metadata(position=0, text="t", metadata=metadata,
                                        fields=MetadataFields(), label="documents[0]")  # fmt: skip
    assert dict(candidate.metadata) == {
        "user_id": "ana", "turn": 3, "score": 0.5, "pinned": True, "note": None
    }  # fmt: skip
    assert candidate.timestamp == d(2024)


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"valid_from": "2024-01-01"}, "valid_from"),  # no offset
        ({"namespace": ""}, "namespace"),
        ({"subject": "Maria", "relation": "r", "object": {"city": "Porto"}}, "object"),
    ],
)
def test_bad_metadata_names_the_item_and_the_field(metadata: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        candidate_from_metadata(position=0, text="t", metadata=metadata, fields=MetadataFields(),
                                label="nodes[0] (id 'n')")  # fmt: skip
    assert caught.value.field == f"nodes[0] (id 'n').metadata[{field!r}]"


def test_survivors_list_earlier_shadows_first_and_carry_the_removed_ones_over() -> None:
    metadatas = [lives("Berlin", 2019, shadows=[{"id": "r"}]),
                 lives("Porto", 2024, shadows=[{"id": "q"}], fact_id="f-p")]  # fmt: skip
    candidates = [
        candidate_from_metadata(position=i, text=str(i), metadata=m, fields=MetadataFields(),
                                label=f"items[{i}]")
        for i, m in enumerate(metadatas)
    ]  # fmt: skip
    result = temporal_dominance(candidates, KeyConflictDetector())
    (survivor,) = survivors(result, ids=["berlin", "porto"], metadatas=metadatas)
    assert survivor.position == 1
    assert survivor.added
    assert [s["id"] for s in survivor.shadows] == ["q", "berlin", "r"]
    record = survivor.shadows[1]
    assert record == shadow_record(result.shadows[0], id="berlin", dominated_by="porto",
                                   position=0)  # fmt: skip
    assert (record["fact_id"], record["position"], record["dominated_by"]) == (None, 0, "porto")
