"""TemporalNodePostprocessor: Phi_T over any retriever's NodeWithScore lists."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from llamaindex_temporal import CoreEmbedding, TemporalNodePostprocessor, text_llm
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.phi_t import NeverConflicts


def d(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def scored(node_id: str, text: str, score: float = 0.5, **metadata: Any) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=node_id, text=text, metadata=metadata), score=score)


def lives(node_id: str, city: str, when: object, score: float = 0.5, **extra: Any) -> NodeWithScore:
    return scored(
        node_id, f"Maria lives in {city}.", score,
        subject="Maria", relation="lives in", object=city, valid_from=when, **extra,
    )  # fmt: skip


def ids(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


def moves() -> list[NodeWithScore]:
    """Rank order: Lisbon (2022), a fact that never changed, Berlin (2019), Porto (2024)."""
    return [
        lives("lisbon", "Lisbon", "2022-01-01T00:00:00Z", 0.9),
        scored("food", "Maria's favourite food is sardines.", 0.8, valid_from="2018-01-01T00:00Z"),
        lives("berlin", "Berlin", d(2019), 0.7),
        lives("porto", "Porto", d(2024).timestamp(), 0.6),
    ]


def test_stale_nodes_go_survivors_keep_rank_order_and_report_their_shadows() -> None:
    nodes = moves()
    out = TemporalNodePostprocessor().postprocess_nodes(nodes, query_str="where does Maria live")
    assert ids(out) == ["food", "porto"]
    assert [n.score for n in out] == [0.8, 0.6]
    shadows = out[1].node.metadata["shadows"]
    assert [(s["id"], s["dominated_by"], s["detector"]) for s in shadows] == [
        ("lisbon", "porto", "key"),
        ("berlin", "porto", "key"),
    ]
    assert shadows[0]["text"] == "Maria lives in Lisbon."
    assert shadows[0]["timestamp"] == "2022-01-01T00:00:00+00:00"
    json.dumps(shadows)  # JSON-ready


def test_inputs_are_never_mutated() -> None:
    nodes = moves()
    before = copy.deepcopy(nodes)
    out = TemporalNodePostprocessor().postprocess_nodes(nodes)
    assert nodes == before
    assert "shadows" not in nodes[3].node.metadata
    assert out[1] is not nodes[3]
    assert out[0] is nodes[1]  # untouched survivors are passed through as they are


def test_shadows_never_reach_the_llm() -> None:
    out = TemporalNodePostprocessor().postprocess_nodes(moves())
    porto = out[1].node
    assert "shadows" in porto.excluded_llm_metadata_keys
    assert "shadows" in porto.excluded_embed_metadata_keys
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        assert "Berlin" not in porto.get_content(metadata_mode=mode)


def test_applying_it_twice_changes_nothing() -> None:
    processor = TemporalNodePostprocessor()
    once = processor.postprocess_nodes(moves())
    assert processor.postprocess_nodes(once) == once


async def test_async_agrees_with_sync() -> None:
    processor = TemporalNodePostprocessor()
    bundle = QueryBundle("where does Maria live")
    assert await processor.apostprocess_nodes(moves(), bundle) == processor.postprocess_nodes(
        moves(), bundle
    )


def test_earlier_shadows_are_kept() -> None:
    earlier = {"id": "x", "text": "Maria lives in Rome.", "dominated_by": "porto"}
    nodes = [
        lives("berlin", "Berlin", d(2019)),
        lives("porto", "Porto", d(2024), shadows=[earlier]),
    ]
    (porto,) = TemporalNodePostprocessor().postprocess_nodes(nodes)
    assert [s["id"] for s in porto.node.metadata["shadows"]] == ["x", "berlin"]


@pytest.mark.parametrize(
    "when",
    [d(2024), "2024-01-01T00:00:00Z", "2024-01-01T02:00:00+02:00", d(2024).timestamp(), 1704067200],
)
def test_every_supported_time_form(when: object) -> None:
    nodes = [lives("old", "Berlin", d(2019)), lives("new", "Porto", when)]
    assert ids(TemporalNodePostprocessor().postprocess_nodes(nodes)) == ["new"]


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        (datetime(2024, 1, 1), "naive"),  # noqa: DTZ001 (the point of the case)
        ("2024-01-01T00:00:00", "no UTC offset"),
        ("last spring", "not an ISO-8601"),
        (True, "not a time"),
        ([2024], "not a time"),
    ],
)
def test_a_bad_time_is_an_error_naming_the_node(when: object, problem: str) -> None:
    nodes = [lives("old", "Berlin", d(2019)), lives("new", "Porto", when)]
    with pytest.raises(InvalidInputError, match=rf"nodes\[1\] \(id 'new'\).*valid_from.*{problem}"):
        TemporalNodePostprocessor().postprocess_nodes(nodes)


def test_undated_nodes_are_never_removed_and_never_remove() -> None:
    nodes = [lives("undated", "Rome", None), lives("old", "Berlin", d(2019)),
             lives("new", "Porto", d(2024))]  # fmt: skip
    assert ids(TemporalNodePostprocessor().postprocess_nodes(nodes)) == ["undated", "new"]


def test_a_partial_key_is_prose_as_in_langchain() -> None:
    """One policy in both adapters (shared_core.adapter_toolkit): an item with some but not all
    key fields is prose, so a node carrying an unrelated "subject" is never removed by the key
    rule and never breaks the pipeline."""
    nodes = [
        scored("half", "Maria ...", subject="Maria", relation="lives in", valid_from=d(2019)),
        lives("porto", "Porto", d(2024)),
    ]
    assert ids(TemporalNodePostprocessor().postprocess_nodes(nodes)) == ["half", "porto"]


def test_namespaces_are_never_compared() -> None:
    nodes = [lives("a", "Berlin", d(2019), namespace="alice"),
             lives("b", "Porto", d(2024), namespace="bob")]  # fmt: skip
    assert ids(TemporalNodePostprocessor().postprocess_nodes(nodes)) == ["a", "b"]
    one_namespace = TemporalNodePostprocessor(namespace_key=None)
    assert ids(one_namespace.postprocess_nodes(nodes)) == ["b"]


def test_field_names_are_options() -> None:
    nodes = [
        scored("old", "Acme HQ: Berlin", who="Acme", what="hq", value="Berlin", date=d(2019)),
        scored("new", "Acme HQ: Paris", who="Acme", what="hq", value="Paris", date=d(2023)),
    ]
    processor = TemporalNodePostprocessor(
        timestamp_key="date", subject_key="who", relation_key="what", object_key="value",
        shadows_key="removed",
    )  # fmt: skip
    (kept,) = processor.postprocess_nodes(nodes)
    assert [s["id"] for s in kept.node.metadata["removed"]] == ["old"]


def test_options_are_keyword_only_and_checked() -> None:
    with pytest.raises(ValueError, match="extra"):
        TemporalNodePostprocessor(timestamp="date")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="detector"):
        TemporalNodePostprocessor(detector="key")  # type: ignore[arg-type]


def test_duplicate_node_ids_are_fine() -> None:
    nodes = [lives("same", "Berlin", d(2019)), lives("same", "Porto", d(2024))]
    out = TemporalNodePostprocessor().postprocess_nodes(nodes)
    assert [n.node.metadata["object"] for n in out] == ["Porto"]


def test_the_detector_is_pluggable_and_sees_the_query() -> None:
    assert ids(TemporalNodePostprocessor(detector=NeverConflicts()).postprocess_nodes(moves())) == [
        "lisbon",
        "food",
        "berlin",
        "porto",
    ]
    llm = ScriptedLLM('{"conflicts": [[1, 2]]}')  # the older statement is listed first
    processor = TemporalNodePostprocessor(detector=LLMConflictDetector(text_llm(llm)))
    prose = [
        scored("old", "The office is in Berlin.", valid_from=d(2019)),
        scored("new", "We moved the office to Paris.", valid_from=d(2023)),
    ]
    (kept,) = processor.postprocess_nodes(prose, query_str="where is the office")
    assert kept.node.node_id == "new"
    assert kept.node.metadata["shadows"][0]["detector"] == "llm"
    assert "where is the office" in llm.prompts[0]


def test_over_any_retriever() -> None:
    """A plain LlamaIndex index (SimpleVectorStore): append-only RAG, filtered by Phi_T."""
    nodes = [n.node for n in moves()]
    index = VectorStoreIndex(nodes, embed_model=CoreEmbedding(HashingEmbedder(64)))
    retriever = index.as_retriever(similarity_top_k=4)
    retrieved = retriever.retrieve("where does Maria live")
    assert sorted(ids(retrieved)) == ["berlin", "food", "lisbon", "porto"]
    kept = TemporalNodePostprocessor().postprocess_nodes(retrieved)
    assert sorted(ids(kept)) == ["food", "porto"]


class ScriptedLLM(CustomLLM):
    """A completion LLM that always answers the same and records its prompts."""

    answer: str
    prompts: list[str]

    def __init__(self, answer: str) -> None:
        super().__init__(answer=answer, prompts=[])

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answer)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError
