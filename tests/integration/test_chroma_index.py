"""What only the Chroma index can get wrong: no model download, the fast path, Chroma's own
errors and limits, its options. The behaviour every index shares is in tests/conformance."""

from __future__ import annotations

import socket
import sys
import uuid
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from shared_core.clock import OPEN
from shared_core.errors import InvalidInputError, MissingDependencyError, VectorIndexError
from shared_core.ledger.results import ChangeCursor, VersionRecord
from tests.conformance.index_suite import (
    DIM,
    EMBEDDER,
    NOW,
    RowsListed,
    axis,
    current,
    mix,
    rec,
)

chromadb = pytest.importorskip("chromadb")

from shared_core.index import chroma, chroma_client  # noqa: E402 - after the skip: it needs chromadb
from shared_core.index.chroma import ChromaIndex  # noqa: E402
from shared_core.index.chroma_records import namespace_key  # noqa: E402


@pytest.fixture(scope="module")
def client() -> Any:
    return chromadb.EphemeralClient()


@pytest.fixture
def index(client: Any) -> Iterator[ChromaIndex]:
    index = ChromaIndex(client=client, prefix=f"t{uuid.uuid4().hex[:12]}")
    index.bind(embedder=EMBEDDER, dimension=DIM)
    yield index
    index.drop()


def test_chroma_never_embeds_or_downloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from chromadb.api.types import DefaultEmbeddingFunction
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("Chroma tried to load or download its default embedding model")

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "__init__", refuse)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download", refuse)
    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for _ in range(2):  # create, then reopen (the stored configuration is read back)
        with closing(ChromaIndex(tmp_path / "index", search_ef=40)) as index:
            index.bind(embedder=EMBEDDER, dimension=DIM)
            index.apply(
                [rec(1), rec(2, valid_to=50)],
                {"fact-1": axis(0), "fact-2": axis(1)},
                ChangeCursor(2, 0),
            )
            assert current(index, axis(0), 2) == [1]
            assert current(index, axis(1), 2, valid_at=10, known_at=0) == [2, 1]
            assert set(index.vectors(["fact-1", "fact-2"])) == {"fact-1", "fact-2"}
            for collection in index._collections(namespace_key("default")):
                ef = collection.configuration["embedding_function"]
                assert ef.name() == chroma_client.EF_NAME
                assert collection.configuration["hnsw"]["space"] == "cosine"
                with pytest.raises(VectorIndexError, match="never embeds"):
                    collection.query(query_texts=["some words"], n_results=1)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, object]]:
    """Every query the index sends to Chroma: (collection role, n_results, where)."""
    calls: list[tuple[str, int, object]] = []
    query = ChromaIndex._query_nearest

    def spy(index: ChromaIndex, collection: Any, vector: Any, n: int, where: Any) -> list[Any]:
        calls.append((collection.name.rsplit("_", 1)[-1], n, where))
        return query(index, collection, vector, n, where)

    monkeypatch.setattr(ChromaIndex, "_query_nearest", spy)
    return calls


@pytest.fixture
def by_ids(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, bool]]:
    """Every query the index sends by ids and distances alone: (collection role, n_results,
    unfiltered)."""
    calls: list[tuple[str, int, bool]] = []
    query_ids = ChromaIndex._nearest_ids

    def spy(index: ChromaIndex, collection: Any, query: Any, n: int, where: Any = None) -> Any:
        calls.append((collection.name.rsplit("_", 1)[-1], n, where is None))
        return query_ids(index, collection, query, n, where)

    monkeypatch.setattr(ChromaIndex, "_nearest_ids", spy)
    return calls


def test_a_current_search_is_an_unfiltered_query_of_live(
    index: ChromaIndex, asked: list[tuple[str, int, object]]
) -> None:
    index.apply(
        [
            rec(1, recorded_at=5),
            rec(2, valid_from=NOW + 10, recorded_at=5),
            rec(3, valid_to=9, recorded_at=5),
        ],
        {"fact-1": axis(0), "fact-2": axis(0), "fact-3": mix(0, 1, 0.2)},
        ChangeCursor(3, 5),
    )
    assert current(index, axis(0), 1) == [1]
    assert asked == [("live", 2, None)]  # k + the one future-dated row, no where
    asked.clear()
    assert current(index, axis(0), 5, valid_at=NOW + 10) == [1, 2]
    assert asked == [("live", 2, None)]  # nothing pending then; n clamped to live's count
    asked.clear()
    assert current(index, axis(0), 2, valid_at=7) == [1, 3]  # before an end: not current
    assert asked == [("all", 3, None)]  # every row fetched: no where needed


def test_a_current_rows_only_search_reads_ids_and_distances_alone(
    index: ChromaIndex, asked: list[tuple[str, int, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # broke: the reader's current search read every hit's metadata from Chroma (about half
    # of the query's cost) although it resolves each row in the ledger anyway
    includes: list[list[str]] = []
    rows_query = ChromaIndex._nearest_rows

    def spy(searched: ChromaIndex, live: Any, query: Any, n: int, hidden: set[int], k: int) -> Any:
        original = live.query

        def query_of(**options: Any) -> Any:
            includes.append(list(options["include"]))
            return original(**options)

        monkeypatch.setattr(live, "query", query_of)
        return rows_query(searched, live, query, n, hidden, k)

    monkeypatch.setattr(ChromaIndex, "_nearest_rows", spy)
    index.apply(
        [rec(1, recorded_at=5), rec(2, valid_from=NOW + 10, recorded_at=5), rec(4, recorded_at=5)],
        {"fact-1": axis(0), "fact-2": axis(0), "fact-4": mix(0, 1, 0.5)},
        ChangeCursor(3, 5),
    )
    found = index.search(
        axis(0), k=2, namespace="default", valid_at=NOW, known_at=None, rows_only=True
    )
    assert [(m.row_id, m.fact_id) for m in found] == [(1, None), (4, None)]  # 2 is not yet valid
    assert includes == [["distances"]]
    assert asked == []  # no query that reads records
    later = index.search(
        axis(0), k=2, namespace="default", valid_at=NOW + 10, known_at=None, rows_only=True
    )
    assert {m.row_id for m in later} == {1, 2}


def test_a_past_search_filters_only_where_over_fetching_proves_nothing(
    index: ChromaIndex, asked: list[tuple[str, int, object]]
) -> None:
    stale = [rec(i, "stale", recorded_at=5, retired_at=6) for i in range(10, 70)]
    ended = rec(3, "ended", valid_to=9, recorded_at=5)
    index.apply(
        [rec(1, recorded_at=5), ended, *stale],
        {"fact-1": mix(0, 1, 0.5), "ended": mix(0, 1, 0.3), "stale": axis(0)},
        ChangeCursor(70, 6),
    )
    assert current(index, axis(0), 1, valid_at=7) == [3]
    over, wider = chroma.OVERFETCH, chroma.WIDER * chroma.OVERFETCH
    assert [(role, n, where is None) for role, n, where in asked] == [
        ("all", over, True),  # only stale rows: they prove nothing
        ("all", wider, True),  # nor do more of them
        ("all", over, False),  # so all is asked again, filtered
    ]
    asked.clear()
    assert current(index, axis(0), 1, valid_at=None, known_at=5)[0] in range(10, 70)
    assert all(where is None for _, _, where in asked)  # the stale rows were believed at 5


def search_at_7(
    index: ChromaIndex, k: int, visible_rows: Any, *, rows_only: bool = True
) -> list[Any]:
    """The top ``k`` valid at 7 as known now, near axis 0; ``visible_rows`` is the ledger's
    check (a RowCheck or RowLister)."""
    return index.search(
        axis(0),
        k=k,
        namespace="default",
        valid_at=7,
        known_at=None,
        rows_only=rows_only,
        visible_rows=visible_rows,
    )


def test_a_past_search_whose_caller_checks_visibility_reads_ids_and_distances_alone(
    index: ChromaIndex, asked: list[tuple[str, int, object]], by_ids: list[tuple[str, int, bool]]
) -> None:
    # broke: an as-of search read the metadata of every over-fetched hit of both collections
    # (3.6x plain top-k on SituatedQA) although the reader checks each row in the ledger anyway
    stale = [rec(i, "stale", recorded_at=5, retired_at=6) for i in range(10, 70)]
    ended = rec(3, "ended", valid_to=9, recorded_at=5)
    index.apply(
        [rec(1, recorded_at=5), ended, *stale],
        {"fact-1": mix(0, 1, 0.5), "ended": mix(0, 1, 0.3), "stale": axis(0)},
        ChangeCursor(70, 6),
    )
    checked: list[list[int]] = []

    def ledger_says(visible: set[int]) -> Any:
        def check(rows: Any) -> set[int]:
            checked.append(sorted(rows))
            return {row for row in rows if row in visible}

        return check

    def past(k: int, visible: set[int]) -> list[Any]:
        return search_at_7(index, k, ledger_says(visible))

    # the 60 stale rows lie nearest and are invisible: the unfiltered answers do not settle
    # the top k, so all is asked again with a where, still by ids alone
    assert [m.row_id for m in past(1, {1, 3})] == [3]
    over, wider = chroma.OVERFETCH, chroma.WIDER * chroma.OVERFETCH
    assert by_ids == [("all", over, True), ("all", wider, True), ("all", over, False)]
    assert asked == []  # no query read a record
    by_ids.clear()
    # a ledger that shows the stale rows: the unfiltered answers settle it
    found = past(2, set(range(10, 70)) | {1, 3})
    assert len(found) == 2
    assert all(m.row_id in range(10, 70) and m.fact_id is None for m in found)
    assert by_ids == [("all", 2 * over, True)]  # one query: as-of costs what plain top-k does
    assert asked == []
    assert len(checked[-1]) == 4  # the nearest 2k rows were checked, and they sufficed


def test_a_past_search_with_few_visible_rows_reads_their_distances_instead_of_filtering(
    index: ChromaIndex, by_ids: list[tuple[str, int, bool]]
) -> None:
    # broke: at a million records, one as-of search in six settled nothing unfiltered and fell
    # back to Chroma's filtered query, 2-5 s, though most of them had no visible row at all
    stale = [rec(i, "stale", recorded_at=5, retired_at=6) for i in range(10, 110)]
    rows = [rec(1, recorded_at=5), rec(3, "ended", valid_to=9, recorded_at=5), *stale]
    vectors = {"fact-1": mix(0, 1, 0.5), "ended": mix(0, 1, 0.3), "stale": axis(0)}
    index.apply(rows, vectors, ChangeCursor(110, 6))

    def past(k: int, lister: RowsListed) -> list[int]:
        return [m.row_id for m in search_at_7(index, k, lister)]

    over, wider = chroma.OVERFETCH, chroma.WIDER * chroma.OVERFETCH
    limit = len(rows) // chroma.LISTING_SHARE
    # 2 visible rows of 102: listed, and their distances read by id; row 999 (listed by the
    # ledger, not yet in the index) is left out
    lister = RowsListed({1, 3, 999}, {1, 3, 999})
    assert limit >= 3
    assert past(2, lister) == [3, 1]
    assert lister.asked == [limit]
    assert by_ids == [("all", 2 * over, True), ("all", 2 * wider, True)]  # no filtered query
    # a where the caller applies: the listing is a superset, the check still decides
    assert past(2, RowsListed({1}, {1, 3})) == [1]
    # too many to list: the filtered query, as before
    by_ids.clear()
    crowded = RowsListed({1, 3}, set(range(1000, 1000 + limit)) | {1, 3})
    assert past(1, crowded) == [3]
    assert by_ids == [("all", over, True), ("all", wider, True), ("all", over, False)]
    # nothing visible: an empty answer, and still no filtered query
    by_ids.clear()
    assert past(1, RowsListed(set(), set())) == []
    assert by_ids == [("all", over, True), ("all", wider, True)]


@pytest.mark.parametrize("rows_only", [False, True])
def test_a_filtered_past_search_among_hidden_duplicates_finds_the_nearest_visible_row(
    client: Any, rows_only: bool
) -> None:
    # broke: with 60 identical retired vectors nearest the query, the filtered query asked HNSW
    # for k=1 row and about one time in six returned the second-nearest visible row
    stale = [rec(i, "stale", recorded_at=5, retired_at=6) for i in range(10, 70)]
    rows = [rec(1, recorded_at=5), rec(3, "ended", valid_to=9, recorded_at=5), *stale]
    vectors = {"fact-1": mix(0, 1, 0.5), "ended": mix(0, 1, 0.3), "stale": axis(0)}
    for _ in range(12):  # fresh graphs: HNSW's levels are drawn at random
        with closing(ChromaIndex(client=client, prefix=f"t{uuid.uuid4().hex[:12]}")) as index:
            index.bind(embedder=EMBEDDER, dimension=DIM)
            index.apply(rows, vectors, ChangeCursor(70, 6))
            found = search_at_7(
                index, 1, lambda ids: {row for row in ids if row in {1, 3}}, rows_only=rows_only
            )
            assert [m.row_id for m in found] == [3]
            index.drop()


def test_an_index_of_the_live_and_hist_layout_is_converted_when_opened(client: Any) -> None:
    # layout 1 kept every row that is not live in "hist" (an as-of search queried two
    # collections); layout 2 keeps every row in "all". A folder written before must still open.
    prefix = f"t{uuid.uuid4().hex[:12]}"
    rows = [
        rec(1, recorded_at=5),
        rec(2, "old", valid_to=9, recorded_at=5),
        rec(3, "gone", retired_at=6),
    ]
    vectors = {"fact-1": axis(0), "old": mix(0, 1, 0.3), "gone": axis(1)}
    with closing(ChromaIndex(client=client, prefix=prefix)) as index:
        index.bind(embedder=EMBEDDER, dimension=DIM)
        index.apply(rows, vectors, ChangeCursor(3, 6))
        key = namespace_key("default")
        every = index._collections(key)[1]
        precomputed = chroma_client.precomputed_embedding_function()
        hist = client.create_collection(f"{prefix}_{key}_hist", embedding_function=precomputed)
        kept = every.get(ids=["2", "3"], include=["embeddings", "documents", "metadatas"])
        hist.add(**{name: kept[name] for name in ("ids", "embeddings", "documents", "metadatas")})
        client.delete_collection(every.name)
        state = client.get_collection(f"{prefix}_state", embedding_function=precomputed)
        state.modify(metadata={**(state.metadata or {}), "version": 1})
    index = ChromaIndex(client=client, prefix=prefix)
    names = {c.name for c in client.list_collections()}
    assert f"{prefix}_{key}_hist" not in names
    assert f"{prefix}_{key}_all" in names
    assert index.count() == 3
    assert index.row_ids() == {1, 2, 3}
    assert index._state.metadata["version"] == chroma.LAYOUT
    assert current(index, axis(0), 3) == [1]
    assert current(index, mix(0, 1, 0.3), 3, valid_at=7) == [2, 1]
    assert current(index, axis(1), 3, valid_at=None, known_at=5) == [3, 2, 1]
    index.drop()


def test_a_row_left_in_live_alone_by_a_crash_is_listed_and_removed(index: ChromaIndex) -> None:
    # a crash between the two writes of a new live row (live first, then all) leaves it in
    # live alone; a full reconcile lists the index's rows to remove those the ledger lacks
    index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
    live, every = index._collections(namespace_key("default"))
    stray = every.get(ids=["1"], include=["embeddings", "documents", "metadatas"])
    live.upsert(ids=["9"], embeddings=stray["embeddings"], metadatas=stray["metadatas"])
    assert index.row_ids() == {1, 9}
    index.remove([9])
    assert index.row_ids() == {1}
    assert live.get(ids=["9"])["ids"] == []


def test_search_ef_reaches_new_and_existing_collections(client: Any) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    with closing(ChromaIndex(client=client, prefix=prefix, search_ef=33, max_neighbors=8)) as index:
        index.bind(embedder=EMBEDDER, dimension=DIM)
        index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
        live, _ = index._collections(namespace_key("default"))
        assert (
            live.configuration_json["hnsw"]["ef_search"],
            live.configuration_json["hnsw"]["max_neighbors"],
        ) == (33, 8)
        assert live.metadata == {"namespace": "default", "role": "live"}
    index = ChromaIndex(client=client, prefix=prefix, search_ef=77)
    live, every = index._collections(namespace_key("default"))
    assert [c.configuration_json["hnsw"]["ef_search"] for c in (live, every)] == [77, 77]
    assert current(index, axis(0), 1) == [1]
    index.drop()


def test_chroma_failures_become_vector_index_errors(index: ChromaIndex, client: Any) -> None:
    index.apply([rec(1)], {"fact-1": axis(0)}, ChangeCursor(1, 0))
    client.delete_collection(f"{index._prefix}_{namespace_key('default')}_live")
    with pytest.raises(VectorIndexError, match="Chroma could not") as caught:
        current(index, axis(0), 1, valid_at=None)
    assert caught.value.__cause__ is not None


def test_large_gets_are_paged(index: ChromaIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chroma, "PAGE", 3)
    records = [rec(i, f"fact-{i % 4}", retired_at=5 if i % 3 else OPEN) for i in range(1, 12)]
    index.apply(records, {f"fact-{i}": mix(0, 1, i / 8) for i in range(4)}, ChangeCursor(11, 0))
    assert index.row_ids() == set(range(1, 12))
    assert set(index.vectors([f"fact-{i}" for i in range(5)])) == {f"fact-{i}" for i in range(4)}
    index.remove(list(range(1, 8)))
    assert index.row_ids() == set(range(8, 12))
    assert index.count() == 4


def test_options_are_checked(client: Any, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="path"):
        ChromaIndex()
    with pytest.raises(InvalidInputError, match="path"):
        ChromaIndex(tmp_path, client=client)
    for prefix in ("", "_x", "a..b", "x/y", "x-"):
        with pytest.raises(InvalidInputError, match="prefix"):
            ChromaIndex(client=client, prefix=prefix)
    with pytest.raises(InvalidInputError, match="ef_search"):
        ChromaIndex(client=client, search_ef=0)


def test_without_chromadb_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "chromadb", None)
    with pytest.raises(MissingDependencyError, match=r"temporal-rag\[embedded\]"):
        ChromaIndex(tmp_path / "index")


def test_a_past_search_by_ids_alone_equals_the_one_that_reads_the_records(
    index: ChromaIndex,
) -> None:
    # 600 records of 200 keys (old versions retired or closed, a few future-dated): with
    # k = 3 the over-fetch covers a small part of each collection, so both the settled and
    # the refined paths run; the caller's check is the records' own visibility
    import numpy as np

    rng = np.random.default_rng(7)
    bases = rng.standard_normal((200, DIM))
    records, vectors = [], {}
    for key in range(200):
        for step in range(3):
            row = 3 * key + step + 1
            last = step == 2
            records.append(
                rec(
                    row,
                    valid_from=10 * step + key % 7,
                    valid_to=OPEN if last or key % 3 else 10 * step + 10,
                    recorded_at=row,
                    retired_at=OPEN if last or key % 3 == 0 else 700 + row,
                )
            )
            vectors[f"fact-{row}"] = [float(x) for x in bases[key] + 0.1 * rng.standard_normal(DIM)]
    index.apply(records, vectors, ChangeCursor(len(records), 1_000))
    by_row = {r.row_id: r for r in records}
    for trial in range(60):
        valid_at = None if trial % 5 == 0 else int(rng.integers(0, 40))
        known_at = None if trial % 2 else int(rng.integers(1, 1_400))
        query = [float(x) for x in bases[int(rng.integers(0, 200))]]

        times = (valid_at, known_at)
        found = [
            index.search(
                query,
                k=3,
                namespace="default",
                valid_at=valid_at,
                known_at=known_at,
                rows_only=True,
                visible_rows=check,
            )
            for check in (partial(_visible_in, by_row, times), None)
        ]
        by_ids, by_records = ([m.row_id for m in matches] for matches in found)
        assert by_ids == by_records, times


def _visible_in(
    records: dict[int, VersionRecord], times: tuple[int | None, int | None], rows: Any
) -> set[int]:
    return {row for row in rows if records[row].visible(*times)}
