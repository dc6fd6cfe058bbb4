"""Tenant isolation (issue 9, part 4): a fact written in namespace A never reaches namespace B.

A property test writes a random interleaving of keyed facts and prose into two namespaces that
share subjects, relations, objects and texts (the worst case for a key or text that forgets the
namespace), then reads namespace B through every read path: search (plain, with a detector,
with history, with the recency buffer, with a filter), as_of, history, select, explain, the
shadows Phi_T reports, and both adapters. Nothing of A may appear, not even as a shadow, and
nothing of A may remove anything of B.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from langchain_temporal import TemporalDocumentCompressor, TemporalRetriever
from llamaindex_temporal import TemporalNodePostprocessor, TemporalVectorStore
from shared_core.clock import ManualClock
from shared_core.detectors.key import KeyConflictDetector
from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Fact
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger
from shared_core.memory import Hit, MemoryConfig, TemporalMemory
from shared_core.phi_t import AnyConflict, Candidate, Conflict

A, B = "tenant-a", "tenant-b"
START = datetime(2024, 1, 1, tzinfo=UTC)
SUBJECTS = ["Maria", "maria", "Ana"]
RELATIONS = ["lives in", "works at"]
OBJECTS = ["Berlin", "Lisbon", "Porto"]
ISOLATION = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class EverythingConflicts:
    """A careless detector: every newer candidate contradicts every older one, namespaces be
    damned. Phi_T must still never let it compare across namespaces."""

    name = "everything"

    def find_conflicts(
        self, candidates: Sequence[Candidate], *, query: str | None = None
    ) -> list[Conflict]:
        return [
            Conflict(older, newer, self.name)
            for older, a in enumerate(candidates)
            for newer, b in enumerate(candidates)
            if older != newer and (a.timestamp or START) <= (b.timestamp or START)
        ]


@dataclass(frozen=True)
class Write:
    namespace: str
    subject: str | None  # None: prose
    relation: str
    obj: str
    year: int


writes = st.lists(
    st.builds(
        Write,
        st.sampled_from([A, B]),
        st.one_of(st.none(), st.sampled_from(SUBJECTS)),
        st.sampled_from(RELATIONS),
        st.sampled_from(OBJECTS),
        st.integers(2015, 2030),
    ),
    min_size=1,
    max_size=12,
)


def build(plan: list[Write]) -> tuple[TemporalMemory, dict[str, set[str]]]:
    clock = ManualClock(START)
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(32), clock=clock),
    )
    ids: dict[str, set[str]] = {A: set(), B: set()}
    for write in plan:
        clock.advance(timedelta(hours=1))
        since = datetime(write.year, 1, 1, tzinfo=UTC)
        if write.subject is None:
            text = f"Someone {write.relation} {write.obj}."
            added = memory.add(text, namespace=write.namespace, valid_from=since)
        else:
            text = f"{write.subject} {write.relation} {write.obj}."
            added = memory.add(
                text,
                subject=write.subject,
                relation=write.relation,
                object=write.obj,
                valid_from=since,
                namespace=write.namespace,
                metadata={"tenant": write.namespace, "object": write.obj},
            )
        ids[write.namespace].update(added.fact_ids)
    clock.advance(timedelta(hours=1))
    return memory, ids


def only_b(facts: Sequence[Fact], ids: dict[str, set[str]]) -> None:
    for fact in facts:
        assert fact.namespace == B
        assert fact.id not in ids[A]


def only_b_hits(hits: Sequence[Hit], ids: dict[str, set[str]]) -> None:
    only_b([hit.fact for hit in hits], ids)
    for hit in hits:
        for shadow in hit.shadows:
            assert shadow.candidate.namespace == B
            assert shadow.candidate.id not in ids[A]


def ids_of(hits: Sequence[Hit]) -> list[str]:
    return [hit.fact.id for hit in hits]


@ISOLATION
@given(plan=writes)
def test_no_memory_read_path_of_b_returns_anything_of_a(plan: list[Write]) -> None:
    memory, ids = build(plan)
    with memory:
        detectors = [
            None,
            KeyConflictDetector(),
            AnyConflict(KeyConflictDetector()),
            EverythingConflicts(),
        ]
        for detector in detectors:
            for history in (False, True):
                for buffer in (False, True):
                    hits = memory.search(
                        "Where does Maria live?",
                        k=50,
                        namespace=B,
                        detector=detector,
                        include_history=history,
                        use_recency_buffer=buffer,
                    )
                    only_b_hits(hits, ids)
        for valid_at in (None, datetime(2020, 6, 1, tzinfo=UTC)):
            only_b_hits(memory.search("Maria", k=50, namespace=B, valid_at=valid_at), ids)
            only_b(memory.as_of(valid_at=valid_at, namespace=B), ids)
        only_b_hits(memory.search("Maria", k=50, namespace=B, where={"tenant": A}), ids)
        assert memory.search("Maria", k=50, namespace=B, where={"tenant": A}) == []
        only_b(memory.select(namespace=B, include_history=True), ids)
        assert memory.select({"tenant": A}, namespace=B, include_history=True) == []
        for subject in SUBJECTS:
            for relation in RELATIONS:
                only_b(memory.history(subject, relation, namespace=B), ids)
                only_b(memory.as_of(namespace=B, subject=subject, relation=relation), ids)
        block = memory.context("Someone", namespace=B, use_recency_buffer=True, k=50)
        a_only = {w.obj for w in plan if w.namespace == A} - {
            w.obj for w in plan if w.namespace == B
        }
        assert not any(obj in block for obj in a_only)
        for fact_id in ids[A]:  # explain is by id: it tells the truth, namespace A
            explanation = memory.explain(fact_id)
            assert all(v.namespace == A for v in explanation.versions)
            assert all(s.namespace == A for s in explanation.statements)


@ISOLATION
@given(plan=writes)
def test_b_sees_the_same_whether_or_not_a_exists(plan: list[Write]) -> None:
    """Writes to A change nothing B reads: the results equal those of a memory without A."""
    with_a, _ = build(plan)
    without_a, _ = build([w for w in plan if w.namespace == B])
    with with_a, without_a:
        for detector in (None, EverythingConflicts()):
            for history in (False, True):
                mixed = with_a.search(
                    "Maria lives in", k=50, namespace=B, detector=detector, include_history=history
                )
                alone = without_a.search(
                    "Maria lives in", k=50, namespace=B, detector=detector, include_history=history
                )
                assert sorted(h.fact.text for h in mixed) == sorted(h.fact.text for h in alone)
                assert sorted(len(h.shadows) for h in mixed) == sorted(
                    len(h.shadows) for h in alone
                )
        assert [f.text for f in with_a.as_of(namespace=B)] == [
            f.text for f in without_a.as_of(namespace=B)
        ]


@ISOLATION
@given(plan=writes)
def test_the_adapters_keep_namespaces_apart(plan: list[Write]) -> None:
    memory, ids = build(plan)
    with memory:
        retriever = TemporalRetriever(memory=memory, k=50, namespace=B, use_recency_buffer=True)
        for docs in (
            retriever.invoke("Where does Maria live?"),
            retriever.invoke("Maria", include_history=True, detector=EverythingConflicts()),
        ):
            for doc in docs:
                assert doc.metadata["namespace"] == B
                assert doc.id not in ids[A]
                assert all(s["namespace"] == B for s in doc.metadata["shadows"])
        store = TemporalVectorStore(memory, namespace=B)
        for kwargs in ({}, {"include_history": True}, {"detector": EverythingConflicts()}):
            result = store.query(
                VectorStoreQuery(query_str="Where does Maria live?", similarity_top_k=50), **kwargs
            )
            for node in result.nodes or []:
                assert node.metadata["namespace"] == B
                assert node.metadata["fact_id"] not in ids[A]
        store_a = TemporalVectorStore(memory, namespace=A)
        result = store_a.query(
            VectorStoreQuery(query_str="Maria", similarity_top_k=50), namespace=B
        )  # the per-query namespace wins over the store's
        assert all(n.metadata["namespace"] == B for n in result.nodes or [])


stamped = st.lists(
    st.tuples(st.sampled_from([A, B, None]), st.sampled_from(OBJECTS), st.integers(2015, 2030)),
    min_size=1,
    max_size=10,
)


def _meta(namespace: str | None, obj: str, year: int) -> dict[str, object]:
    meta: dict[str, object] = {
        "subject": "Maria",
        "relation": "lives in",
        "object": obj,
        "valid_from": f"{year}-01-01T00:00:00Z",
        "timestamp": f"{year}-01-01T00:00:00Z",
    }
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _ns(meta: dict[str, object]) -> str:
    return str(meta.get("namespace") or "default")


@ISOLATION
@given(rows=stamped, careless=st.booleans())
def test_phi_t_filters_never_compare_across_namespaces(
    rows: list[tuple[str | None, str, int]], careless: bool
) -> None:
    """The compressor and the postprocessor: a document of A never removes one of B, and the
    survivors of B are those B alone would have."""
    detector = EverythingConflicts() if careless else KeyConflictDetector()
    docs = [
        Document(f"Maria lives in {o}.", id=str(i), metadata=_meta(n, o, y))
        for i, (n, o, y) in enumerate(rows)
    ]
    compressor = TemporalDocumentCompressor(detector=detector)
    kept = compressor.compress_documents(docs, "Where does Maria live?")
    for namespace in {_ns(d.metadata) for d in docs}:
        alone = compressor.compress_documents(
            [d for d in docs if _ns(d.metadata) == namespace], "Where does Maria live?"
        )
        mine = [d for d in kept if _ns(d.metadata) == namespace]
        assert [d.id for d in mine] == [d.id for d in alone]
        for doc in mine:
            assert all(s["namespace"] == namespace for s in doc.metadata.get("shadows", []))

    nodes = [
        NodeWithScore(
            node=TextNode(text=f"Maria lives in {o}.", id_=str(i), metadata=_meta(n, o, y)),
            score=1.0,
        )
        for i, (n, o, y) in enumerate(rows)
    ]
    post = TemporalNodePostprocessor(detector=detector)
    survivors = post.postprocess_nodes(nodes, query_str="Where does Maria live?")
    for namespace in {_ns(n.node.metadata) for n in nodes}:
        alone_nodes = post.postprocess_nodes(
            [n for n in nodes if _ns(n.node.metadata) == namespace], query_str="Where?"
        )
        mine_nodes = [n for n in survivors if _ns(n.node.metadata) == namespace]
        assert [n.node.node_id for n in mine_nodes] == [n.node.node_id for n in alone_nodes]
        for item in mine_nodes:
            assert all(s["namespace"] == namespace for s in item.node.metadata.get("shadows", []))
