"""The benchmark's methods on tiny hand-made datasets (hashing embedder, in-process Chroma):
each ordering rule is checked on a case where it decides the answer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared_core import HashingEmbedder
from temporal_rag_bench import methods_temporal
from temporal_rag_bench.methods import (
    EmbeddingRecency,
    MultiFactor,
    NewestFirst,
    PlainTopK,
    StoreMethod,
    TimeDecay,
    top_with_buffer,
)
from temporal_rag_bench.methods_temporal import (
    NO_PROSE_DETECTOR,
    PhiTOnly,
    Supersession,
    core_methods,
    kappa_missing,
)
from temporal_rag_bench.model import (
    Chunk,
    ChunkKind,
    Dataset,
    Question,
    QuestionKind,
    Retrieved,
    Track,
)
from temporal_rag_bench.shared_collection import SharedStore, chroma_client, question_time

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def year(value: int) -> datetime:
    return datetime(value, 1, 1, tzinfo=UTC)


def lives(cid: str, text: str, city: str, when: int, order: int, *, keyed: bool = True) -> Chunk:
    return Chunk(
        id=cid,
        text=text,
        timestamp=year(when),
        kind=ChunkKind.STATE,
        entity="maria",
        family="residence",
        value=city,
        subject="Maria" if keyed else None,
        relation="lives in" if keyed else None,
        object=city if keyed else None,
        recorded_order=order,
    )


def static(cid: str, text: str, when: int, order: int) -> Chunk:
    return Chunk(
        id=cid,
        text=text,
        timestamp=year(when),
        kind=ChunkKind.STATIC,
        entity="maria",
        family="food",
        value="sardines",
        recorded_order=order,
    )


def noise(cid: str, text: str, when: int, order: int) -> Chunk:
    return Chunk(
        id=cid, text=text, timestamp=year(when), kind=ChunkKind.DISTRACTOR, recorded_order=order
    )


WHERE = Question(
    id="q-now",
    text="in which city maria lives",
    kind=QuestionKind.CURRENT,
    gold=("Lisbon",),
    stale=("Berlin",),
    entity="maria",
    family="residence",
)
THEN = Question(
    id="q-then",
    text="in which city maria lives",
    kind=QuestionKind.AS_OF,
    gold=("Berlin",),
    stale=("Lisbon",),
    entity="maria",
    family="residence",
    valid_at=datetime(2020, 6, 1, tzinfo=UTC),
)


def dataset(chunks: list[Chunk], *, track: Track = Track.KEYED) -> Dataset:
    return Dataset(
        name=f"tiny-{track}", track=track, chunks=tuple(chunks), questions=(WHERE, THEN), now=NOW
    )


@pytest.fixture(scope="module")
def client() -> object:
    return chroma_client()


@pytest.fixture
def store_of(client: object, tmp_path: Path) -> Iterator[object]:
    stores: list[SharedStore] = []

    def build(data: Dataset) -> SharedStore:
        store = SharedStore(
            data, HashingEmbedder(256), client=client, name=data.name, workdir=tmp_path
        )
        stores.append(store)
        return store

    yield build
    for store in stores:
        store.close()


def run(method: object, data: Dataset, store: SharedStore, question: Question, k: int) -> Retrieved:
    method.ingest(data, store)  # type: ignore[attr-defined]
    now = question_time(question, data)
    result: Retrieved = method.retrieve(question, k, now=now)  # type: ignore[attr-defined]
    return result


def ids(result: Retrieved) -> list[str]:
    return [chunk.id for chunk in result.chunks]


BASIC = [
    lives("old", "maria lives in berlin", "Berlin", 2019, 0),
    lives("new", "maria lives in lisbon now today", "Lisbon", 2023, 1),
    static("food", "maria likes grilled sardines", 2018, 2),
    noise("n1", "the weather in oslo is cold", 2021, 3),
]


def test_plain_top_k_ranks_by_similarity_and_newest_first_by_date(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    assert ids(run(PlainTopK(), data, store, WHERE, 2))[0] == "old"  # more words shared
    assert ids(run(NewestFirst(), data, store, WHERE, 2))[0] == "new"


def test_time_decay_prefers_the_recent_among_similar(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    vector = store.query_vector(WHERE.text)
    old, new = store.similarities([store.row["old"], store.row["new"]], vector)
    assert old > new  # plain similarity prefers the stale chunk...
    assert ids(run(TimeDecay(), data, store, WHERE, 1)) == ["new"]  # ...recency turns it round


def test_embedding_recency_drops_the_older_near_duplicate(store_of) -> None:  # type: ignore[no-untyped-def]
    chunks = [
        lives("old", "maria lives in the city of berlin", "Berlin", 2019, 0),
        lives("new", "maria lives in the city of lisbon", "Lisbon", 2023, 1),
        static("food", "grilled sardines are her favourite", 2018, 2),
    ]
    data = dataset(chunks)
    store = store_of(data)
    assert float(store.pairwise([0, 1])[0, 1]) > EmbeddingRecency.cutoff
    assert ids(run(EmbeddingRecency(), data, store, WHERE, 3)) == ["new", "food"]
    assert set(ids(run(PlainTopK(), data, store, WHERE, 3))) == {"old", "new", "food"}


def test_multi_factor_rewards_what_was_said_often(store_of) -> None:  # type: ignore[no-untyped-def]
    chunks = [
        lives("a1", "maria lives in berlin", "Berlin", 2019, 0),
        lives("a2", "maria lives in berlin", "Berlin", 2020, 1),
        lives("a3", "maria lives in berlin", "Berlin", 2021, 2),
        lives("b", "maria lives in lisbon", "Lisbon", 2021, 3),
    ]
    data = dataset(chunks)
    store = store_of(data)
    first = ids(run(MultiFactor(), data, store, WHERE, 1))
    assert first[0].startswith("a")  # usage and stability outweigh the equal recency


def test_phi_t_drops_the_superseded_keyed_chunk(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    plain = run(PlainTopK(), data, store, WHERE, 3)
    assert {"old", "new"} <= set(ids(plain))
    result = run(PhiTOnly(), data, store, WHERE, 3)
    assert "old" not in ids(result)
    assert "new" in ids(result)
    assert result.shadows == 1


def test_phi_t_runs_on_prose_with_the_shipped_detector() -> None:
    chunk = lives("old", "maria lives in berlin", "Berlin", 2019, 0, keyed=False)
    prose = dataset([chunk], track=Track.PROSE)
    assert kappa_missing() is None
    assert PhiTOnly().skip_reason(prose) is None
    assert Supersession(phi_t=True).skip_reason(prose) is None
    assert PhiTOnly(judge=lambda prompt: '{"conflicts": []}').skip_reason(prose) is None


def test_kappa_phi_t_answers_every_prose_question_and_the_llm_judge_a_sample() -> None:
    prose = dataset(
        [lives("a", "maria lives in berlin", "Berlin", 2019, 0, keyed=False)], track=Track.PROSE
    )
    assert not PhiTOnly().judges_reads(prose)
    assert not Supersession(phi_t=True).judges_reads(prose)
    assert PhiTOnly(judge=lambda prompt: "{}").judges_reads(prose)
    assert Supersession(phi_t=True, judge=lambda prompt: "{}").judges_reads(prose)
    assert not PhiTOnly(judge=lambda prompt: "{}").judges_reads(dataset(BASIC))


def test_phi_t_is_not_run_on_prose_without_any_prose_detector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chunk = lives("old", "maria lives in berlin", "Berlin", 2019, 0, keyed=False)
    prose = dataset([chunk], track=Track.PROSE)
    monkeypatch.setattr(methods_temporal, "kappa_missing", lambda: "no torch here")
    assert PhiTOnly().skip_reason(prose) == NO_PROSE_DETECTOR
    assert Supersession(phi_t=True).skip_reason(prose) == NO_PROSE_DETECTOR
    assert Supersession().skip_reason(prose) is None
    assert PhiTOnly(judge=lambda prompt: '{"conflicts": []}').skip_reason(prose) is None


def test_bag_of_facts_mode_is_left_out_for_kappa_on_prose_only() -> None:
    prose = dataset(
        [lives("a", "maria lives in berlin", "Berlin", 2019, 0, keyed=False)], track=Track.PROSE
    )
    keyed = dataset(BASIC)
    assert not PhiTOnly().supports_bag(prose)
    assert PhiTOnly().supports_bag(keyed)
    assert PhiTOnly(judge=lambda prompt: "{}").supports_bag(prose)
    assert Supersession().supports_bag(prose)
    assert not Supersession(phi_t=True).supports_bag(prose)


def test_supersession_returns_only_the_current_value_and_the_past_as_of(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    method = Supersession()
    now = run(method, data, store, WHERE, 3)
    assert "new" in ids(now)
    assert "old" not in ids(now)
    then = method.retrieve(THEN, 3, now=question_time(THEN, data))
    assert "old" in ids(then)
    assert "new" not in ids(then)  # written in 2023: invisible in 2020


def test_ours_and_supersession_share_one_memory(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    first, second = Supersession(), Supersession(phi_t=True)
    first.ingest(data, store)
    second.ingest(data, store)
    assert first.ingest_seconds == second.ingest_seconds
    assert "old" not in ids(second.retrieve(WHERE, 3, now=NOW))


def test_as_of_hides_later_chunks_from_every_method(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    for method in (PlainTopK(), NewestFirst(), TimeDecay(), EmbeddingRecency(), MultiFactor()):
        result = run(method, data, store, THEN, 5)
        assert "new" not in ids(result), method.name
        assert "old" in ids(result), method.name


def test_the_buffer_adds_the_latest_chunks_beyond_k(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    without = run(PlainTopK(), data, store, WHERE, 1)
    with_buffer = run(PlainTopK(buffer=1), data, store, WHERE, 1)
    assert ids(without) == ["old"]
    assert ids(with_buffer) == ["old", "n1"]  # n1 was ingested last
    assert top_with_buffer([5, 1, 2, 3], [2], 2) == [5, 1, 2]


def test_the_buffer_brings_the_newest_statement_for_phi_t(store_of) -> None:  # type: ignore[no-untyped-def]
    late = [BASIC[0], BASIC[2], BASIC[3], BASIC[1]]  # the move was written last
    data = dataset([replace(c, recorded_order=i) for i, c in enumerate(late)])
    store = store_of(data)
    assert ids(run(PhiTOnly(), data, store, WHERE, 1)) == ["old"]  # retrieval missed the move
    assert ids(run(PhiTOnly(buffer=1), data, store, WHERE, 1)) == ["new"]
    assert ids(run(Supersession(buffer=1), data, store, WHERE, 1)) == ["new"]


def test_bag_of_facts_mode_feeds_the_whole_entity(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    phi = PhiTOnly()
    phi.ingest(data, store)
    assert set(ids(phi.bag(WHERE, 1, now=NOW))) == {"new", "food"}
    ours = Supersession(phi_t=True)
    ours.ingest(data, store)
    assert set(ids(ours.bag(WHERE, 1, now=NOW))) == {"new", "food"}
    plain = PlainTopK()
    plain.ingest(data, store)
    assert set(ids(plain.bag(WHERE, 1, now=NOW))) == {"old", "new", "food"}


def test_core_methods_have_unique_names_with_the_buffer_off_and_on() -> None:
    names = [m.name for m in core_methods()]  # type: ignore[attr-defined]
    assert len(names) == len(set(names)) == 16
    assert {"plain", "plain+buffer", "supersession+phi-t", "supersession+phi-t+buffer"} <= set(
        names
    )


def test_a_method_refuses_to_read_before_ingesting() -> None:
    with pytest.raises(RuntimeError, match="ingest"):
        StoreMethod().retrieve(WHERE, 1, now=NOW)


def test_langchain_time_weighted_is_the_real_class_and_prefers_the_recent(store_of) -> None:  # type: ignore[no-untyped-def]
    from temporal_rag_bench.langchain_baselines import TimeWeightedBaseline

    data = dataset(BASIC)
    store = store_of(data)
    method = TimeWeightedBaseline()
    assert ids(run(method, data, store, WHERE, 1)) == ["new"]  # plain puts "old" first
    stream = method._stream  # the retriever's own documents: its access refresh is undone
    assert all(d.metadata["last_accessed_at"] == d.metadata["bench_accessed"] for d in stream)
    assert "new" not in ids(method.retrieve(THEN, 3, now=question_time(THEN, data)))


def test_llamaindex_postprocessors_are_the_real_classes(store_of) -> None:  # type: ignore[no-untyped-def]
    from temporal_rag_bench.llamaindex_baselines import (
        EmbeddingRecencyBaseline,
        FixedRecencyBaseline,
    )

    data = dataset(BASIC)
    store = store_of(data)
    fixed = FixedRecencyBaseline()
    assert ids(run(fixed, data, store, WHERE, 2))[0] == "new"
    assert fixed.real_class == "llama_index.core.postprocessor.FixedRecencyPostprocessor"
    dedup = EmbeddingRecencyBaseline()
    everything = run(dedup, data, store, WHERE, 4)
    assert ids(everything)[0] == "new"  # newest first; nothing is that close at 0.7
    dedup.postprocessor(4).similarity_cutoff = -1.0  # type: ignore[attr-defined]
    assert ids(dedup.retrieve(WHERE, 4, now=NOW)) == ["new"]  # every older node dropped


def test_candidate_rows_are_every_row_some_question_fetches(store_of) -> None:  # type: ignore[no-untyped-def]
    data = dataset(BASIC)
    store = store_of(data)
    expected = set()
    for question in data.questions:
        expected.update(store.fetch(question.text, 2, now=question_time(question, data)).rows)
    assert store.candidate_rows(2) == sorted(expected)
    assert len(store.candidate_rows(1)) < len(BASIC)


def test_embedding_recency_embeds_only_nodes_that_can_be_candidates(client, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # broke: every node's templated query was embedded at ingest (a third of make bench's time)
    from temporal_rag_bench.llamaindex_baselines import EmbeddingRecencyBaseline

    chunks = [
        *BASIC,
        *(noise(f"x{i}", f"standup {i} moved to room {i}", 2020, 4 + i) for i in range(8)),
    ]
    data = dataset(chunks)
    store = SharedStore(
        data, HashingEmbedder(256), client=client, name=data.name, workdir=tmp_path, k=1
    )
    try:
        before = len(store._cache.queries)
        dedup = EmbeddingRecencyBaseline()
        dedup.ingest(data, store)
        assert len(store._cache.queries) - before == len(store.candidate_rows(4)) < len(chunks)
        assert ids(dedup.retrieve(WHERE, 1, now=NOW))  # reads need no other node
    finally:
        store.close()
