"""TemporalDocumentCompressor: Phi_T over plain LangChain Documents, alone and inside LangChain's
compression retriever and pipeline, sync and async."""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_core.documents import BaseDocumentTransformer, Document
from langchain_core.runnables import RunnableLambda
from pydantic import ValidationError

from langchain_temporal import TemporalDocumentCompressor
from shared_core.detectors.key import KeyConflictDetector
from shared_core.errors import InvalidInputError
from shared_core.phi_t import Candidate, Conflict

QUERY = "Where does Maria live?"


def lives(city: str, when: object, *, id: str | None = None, **extra: Any) -> Document:
    metadata = {"subject": "Maria", "relation": "lives in", "object": city, "valid_from": when}
    return Document(f"Maria lives in {city}.", metadata={**metadata, **extra}, id=id)


def prose(text: str, when: object = None, **extra: Any) -> Document:
    metadata = {"valid_from": when, **extra} if when is not None else dict(extra)
    return Document(text, metadata=metadata)


def texts(documents: Sequence[Document]) -> list[str]:
    return [document.page_content for document in documents]


def timeline() -> list[Document]:
    """What a vector store returns: two stale versions ranked above the current one."""
    return [
        lives("Berlin", "2019-01-01T00:00:00Z", id="b"),
        lives("Lisbon", datetime(2022, 5, 1, tzinfo=UTC), id="l"),
        prose("Maria's favourite food is grilled sardines."),
        lives("Porto", datetime(2024, 1, 1, tzinfo=UTC).timestamp(), id="p"),
    ]


# ---------------------------------------------------------------- Phi_T on Documents
def test_newer_documents_about_the_same_key_remove_older_ones() -> None:
    kept = TemporalDocumentCompressor().compress_documents(timeline(), QUERY)
    assert texts(kept) == ["Maria's favourite food is grilled sardines.", "Maria lives in Porto."]
    assert [doc.id for doc in kept] == [None, "p"]
    assert kept[0].metadata["shadows"] == []
    assert kept[1].metadata["shadows"] == [
        {
            "id": "b",
            "fact_id": None,
            "position": 0,
            "text": "Maria lives in Berlin.",
            "timestamp": "2019-01-01T00:00:00+00:00",
            "namespace": "default",
            "dominated_by": "p",
            "detector": "key",
            "score": 1.0,
        },
        {
            "id": "l",
            "fact_id": None,
            "position": 1,
            "text": "Maria lives in Lisbon.",
            "timestamp": "2022-05-01T00:00:00+00:00",
            "namespace": "default",
            "dominated_by": "p",
            "detector": "key",
            "score": 1.0,
        },
    ]


def test_inputs_are_never_changed_and_outputs_are_copies() -> None:
    documents = timeline()
    before = copy.deepcopy(documents)
    kept = TemporalDocumentCompressor().compress_documents(documents, QUERY)
    assert documents == before
    assert all(k.metadata is not d.metadata for k in kept for d in documents)


def test_applying_it_twice_changes_nothing_and_keeps_the_reported_shadows() -> None:
    compressor = TemporalDocumentCompressor()
    once = compressor.compress_documents(timeline(), QUERY)
    assert compressor.compress_documents(once, QUERY) == once


def test_shadows_of_a_removed_document_move_to_its_dominator() -> None:
    earlier = {"id": "b", "text": "Maria lives in Berlin."}  # what an earlier stage removed
    documents = [lives("Lisbon", 1, id="l", shadows=[earlier]), lives("Porto", 2, id="p")]
    (porto,) = TemporalDocumentCompressor().compress_documents(documents, QUERY)
    assert [s["id"] for s in porto.metadata["shadows"]] == ["l", "b"]


@pytest.mark.parametrize(
    "when",
    [
        datetime(2024, 1, 1, tzinfo=UTC),
        datetime(2024, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))),  # the same instant
        "2024-01-01T00:00:00Z",
        "2024-01-01T01:00:00+01:00",
        1_704_067_200,  # epoch seconds, int
        1_704_067_200.0,  # and float
    ],
)
def test_every_timestamp_form_means_the_same_instant(when: object) -> None:
    older = lives("Lisbon", "2023-12-31T23:59:59Z")
    newer = lives("Porto", when)
    kept = TemporalDocumentCompressor().compress_documents([older, newer], QUERY)
    assert texts(kept) == ["Maria lives in Porto."]
    (shadow,) = kept[0].metadata["shadows"]
    assert shadow["timestamp"] == "2023-12-31T23:59:59+00:00"


def test_undated_documents_are_never_removed_and_never_remove() -> None:
    undated = Document("Maria lives in Faro.", metadata={"subject": "Maria", "relation": "lives in", "object": "Faro"})  # noqa: E501  # fmt: skip
    documents = [lives("Lisbon", "2022-01-01T00:00Z"), undated]
    assert texts(TemporalDocumentCompressor().compress_documents(documents, QUERY)) == texts(
        documents
    )


def test_equal_timestamps_never_dominate() -> None:
    documents = [lives("Lisbon", 1_700_000_000), lives("Porto", 1_700_000_000)]
    assert len(TemporalDocumentCompressor().compress_documents(documents, QUERY)) == 2


def test_namespaces_are_never_compared() -> None:
    documents = [lives("Lisbon", 1, namespace="alice"), lives("Porto", 2, namespace="bob")]
    assert len(TemporalDocumentCompressor().compress_documents(documents, QUERY)) == 2
    same = [lives("Lisbon", 1, namespace="alice"), lives("Porto", 2, namespace="alice")]
    assert texts(TemporalDocumentCompressor().compress_documents(same, QUERY)) == [
        "Maria lives in Porto."
    ]


def test_a_partial_key_is_prose_and_many_relations_accumulate() -> None:
    partial = Document("Maria: Lisbon", metadata={"subject": "Maria", "valid_from": 1})
    assert len(TemporalDocumentCompressor().compress_documents([partial, lives("Porto", 2)], QUERY)) == 2  # noqa: E501  # fmt: skip
    speaks = [
        Document("Maria speaks Portuguese.", metadata={"subject": "Maria", "relation": "speaks", "object": "pt", "valid_from": 1}),  # noqa: E501
        Document("Maria speaks German.", metadata={"subject": "Maria", "relation": "speaks", "object": "de", "valid_from": 2}),  # noqa: E501
    ]  # fmt: skip
    many = TemporalDocumentCompressor(detector=KeyConflictDetector({"speaks": "many"}))
    assert len(many.compress_documents(speaks, QUERY)) == 2
    assert len(TemporalDocumentCompressor().compress_documents(speaks, QUERY)) == 1


def test_metadata_keys_are_configurable() -> None:
    compressor = TemporalDocumentCompressor(
        timestamp_key="date", subject_key="who", relation_key="what", object_key="value",
        namespace_key="tenant",
    )  # fmt: skip
    documents = [
        Document("old", metadata={"who": "Ana", "what": "role", "value": "dev", "date": 1, "tenant": "t"}),  # noqa: E501
        Document("new", metadata={"who": "ana ", "what": "Role", "value": "lead", "date": 2, "tenant": "t"}),  # noqa: E501
    ]  # fmt: skip
    assert texts(compressor.compress_documents(documents, QUERY)) == ["new"]


def test_repeated_or_missing_document_ids_are_fine() -> None:
    documents = [lives("Berlin", 1, id="same"), lives("Porto", 2, id="same"), lives("Faro", 0)]
    kept = TemporalDocumentCompressor().compress_documents(documents, QUERY)
    assert texts(kept) == ["Maria lives in Porto."]
    assert [(s["id"], s["position"]) for s in kept[0].metadata["shadows"]] == [
        ("same", 0),
        (None, 2),
    ]


def test_nothing_in_nothing_out() -> None:
    assert TemporalDocumentCompressor().compress_documents([], QUERY) == []


# ---------------------------------------------------------------- bad input
NAIVE = datetime(2024, 1, 1)  # noqa: DTZ001 - the point of these tests


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        (NAIVE, "naive datetime"),
        ("2024-01-01T00:00:00", "has no UTC offset"),
        ("last tuesday", "is not an ISO-8601 datetime"),
        (True, "type bool is not a time"),
        ([2024, 1, 1], "type list is not a time"),
        (float("nan"), "not a usable epoch time"),
    ],
)
def test_a_bad_timestamp_names_the_document_and_the_key(when: object, problem: str) -> None:
    documents = [lives("Lisbon", 1, id="fine"), lives("Porto", when, id="doc-7")]
    with pytest.raises(InvalidInputError) as caught:
        TemporalDocumentCompressor().compress_documents(documents, QUERY)
    assert caught.value.field == "documents[1] (doc-7).metadata['valid_from']"
    assert problem in caught.value.problem


def test_a_document_without_id_is_named_by_position() -> None:
    with pytest.raises(InvalidInputError, match=r"^documents\[0\]\.metadata\['when'\]: naive"):
        TemporalDocumentCompressor(timestamp_key="when").compress_documents(
            [Document("x", metadata={"when": NAIVE})], QUERY
        )


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"namespace": 3}, "namespace"),
        ({"subject": "Maria", "relation": "lives in", "object": ["a list"]}, "object"),
        ({"subject": "  ", "relation": "lives in", "object": "Porto"}, "subject"),
    ],
)
def test_bad_key_metadata_names_the_document(metadata: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError, match=rf"documents\[0\]\.metadata\['{field}'\]"):
        TemporalDocumentCompressor().compress_documents([Document("x", metadata=metadata)], QUERY)


async def test_what_is_not_a_document_is_refused() -> None:
    compressor = TemporalDocumentCompressor()
    with pytest.raises(InvalidInputError, match=r"documents\[1\]: is a str"):
        compressor.compress_documents([Document("x"), "y"], QUERY)  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match=r"documents\[1\]: is a str"):
        await compressor.acompress_documents([Document("x"), "y"], QUERY)  # type: ignore[list-item]


def test_options_are_checked() -> None:
    with pytest.raises(ValidationError, match="detector"):
        TemporalDocumentCompressor(detector="key")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="timestamp"):
        TemporalDocumentCompressor(timestamp="ts")  # type: ignore[call-arg]


# ---------------------------------------------------------------- async
async def test_acompress_returns_what_compress_returns() -> None:
    compressor = TemporalDocumentCompressor()
    expected = compressor.compress_documents(timeline(), QUERY)
    assert await compressor.acompress_documents(timeline(), QUERY) == expected


class ThreadRecorder:
    """A detector that never fires and records the thread it ran on."""

    name = "recorder"

    def __init__(self) -> None:
        self.threads: list[int] = []

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        self.threads.append(threading.get_ident())
        return []


async def test_a_model_detector_runs_off_the_event_loop() -> None:
    recorder = ThreadRecorder()
    await TemporalDocumentCompressor(detector=recorder).acompress_documents(timeline(), QUERY)
    assert recorder.threads
    assert recorder.threads != [threading.get_ident()]


# ---------------------------------------------------------------- inside LangChain
def fixed_retriever(documents: list[Document]) -> RunnableLambda[str, list[Document]]:
    return RunnableLambda(lambda query: list(documents))


async def test_inside_a_contextual_compression_retriever() -> None:
    retriever = ContextualCompressionRetriever(
        base_compressor=TemporalDocumentCompressor(), base_retriever=fixed_retriever(timeline())
    )
    expected = ["Maria's favourite food is grilled sardines.", "Maria lives in Porto."]
    assert texts(retriever.invoke(QUERY)) == expected
    assert texts(await retriever.ainvoke(QUERY)) == expected
    empty = ContextualCompressionRetriever(
        base_compressor=TemporalDocumentCompressor(), base_retriever=fixed_retriever([])
    )
    assert empty.invoke(QUERY) == []


class FirstN(BaseDocumentTransformer):
    """A plain (non-compressor) stage: keeps the first ``n`` documents."""

    def __init__(self, n: int) -> None:
        self.n = n

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        return list(documents)[: self.n]


async def test_inside_a_document_compressor_pipeline() -> None:
    pipeline = DocumentCompressorPipeline(transformers=[FirstN(3), TemporalDocumentCompressor()])
    sync = pipeline.compress_documents(timeline(), QUERY)
    assert texts(sync) == ["Maria lives in Lisbon.", "Maria's favourite food is grilled sardines."]
    assert [s["id"] for s in sync[0].metadata["shadows"]] == ["b"]
    assert await pipeline.acompress_documents(timeline(), QUERY) == sync
