"""TemporalStore's own behaviour beyond LangGraph's suite (tests/conformance/
test_langgraph_store.py): versions and as-of reads, deletes that keep history, the encoding of
namespaces and keys, values kept exactly, the index config, and sync/async parity."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

from langchain_temporal import CoreEmbeddings, ItemVersion, TemporalStore
from langchain_temporal.langgraph_codec import (
    decode_key,
    decode_namespace,
    encode_key,
    encode_namespace,
)
from shared_core.clock import ManualClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.facts import MAX_NAME_CHARS, key_subject
from shared_core.index.numpy_index import NumpyIndex
from shared_core.ledger import InMemoryLedger, SQLiteLedger
from shared_core.memory import MemoryConfig, TemporalMemory

START = datetime(2030, 1, 1, tzinfo=UTC)
USER = ("users", "ana")


def memory_on(clock: ManualClock, ledger: Any = None) -> TemporalMemory:
    return TemporalMemory(
        ledger=ledger if ledger is not None else InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(), clock=clock),
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def store(clock: ManualClock) -> Iterator[TemporalStore]:
    with memory_on(clock) as memory:
        yield TemporalStore(memory, index={"fields": ["text"]})


def at(seconds: int) -> datetime:
    return START + timedelta(seconds=seconds)


# ---------------------------------------------------------------- versions
def test_a_second_put_supersedes_and_the_first_stays_in_history(
    store: TemporalStore, clock: ManualClock
) -> None:
    store.put(USER, "city", {"text": "Ana lives in Berlin"})
    clock.advance(timedelta(seconds=10))
    store.put(USER, "city", {"text": "Ana lives in Lisbon"})
    item = store.get(USER, "city")
    assert item is not None
    assert item.value == {"text": "Ana lives in Lisbon"}
    assert (item.created_at, item.updated_at) == (at(0), at(10))
    history = store.history(USER, "city")
    assert [(v.value["text"], v.status) for v in history] == [
        ("Ana lives in Berlin", "superseded"),
        ("Ana lives in Lisbon", "current"),
    ]
    assert [(v.valid_from, v.valid_to) for v in history] == [(at(0), at(10)), (at(10), None)]
    then = store.get_as_of(USER, "city", valid_at=at(5))
    assert then is not None
    assert then.value == {"text": "Ana lives in Berlin"}
    assert store.get_as_of(USER, "city", valid_at=at(-1)) is None
    known_before = store.get_as_of(USER, "city", valid_at=at(20), known_at=at(5))
    assert known_before is not None
    assert known_before.value == {"text": "Ana lives in Berlin"}
    hits = store.search(USER, query="Where does Ana live?")
    assert [h.value["text"] for h in hits] == ["Ana lives in Lisbon"]  # current versions only
    past = store.search_as_of(USER, query="Where does Ana live?", valid_at=at(5))
    assert [h.value["text"] for h in past] == ["Ana lives in Berlin"]


def test_delete_retracts_and_keeps_history(store: TemporalStore, clock: ManualClock) -> None:
    store.put(USER, "diet", {"text": "vegetarian"})
    store.put(("users", "bo"), "diet", {"text": "vegan"})
    clock.advance(timedelta(seconds=10))
    store.delete(USER, "diet")
    store.delete(USER, "never-there")  # nothing to delete: no error, as in LangGraph
    assert store.get(USER, "diet") is None
    assert store.search(("users",)) == store.search(("users", "bo"))
    assert store.list_namespaces() == [("users", "bo")]
    assert [(v.value, v.status, v.valid_to) for v in store.history(USER, "diet")] == [
        ({"text": "vegetarian"}, "retracted", at(10))
    ]
    before = store.get_as_of(USER, "diet", valid_at=at(5))
    assert before is not None
    assert before.value == {"text": "vegetarian"}
    assert store.list_namespaces() == [("users", "bo")]
    clock.advance(timedelta(seconds=10))
    store.put(USER, "diet", {"text": "pescatarian"})
    again = store.get(USER, "diet")
    assert again is not None
    assert again.created_at == again.updated_at == at(20)  # a new item after the delete


def test_the_same_value_again_writes_no_new_version(
    store: TemporalStore, clock: ManualClock
) -> None:
    store.put(USER, "food", {"text": "sushi", "tags": ["fish"]})
    clock.advance()
    store.put(USER, "food", {"tags": ["fish"], "text": "sushi"})  # equal, keys in another order
    assert len(store.history(USER, "food")) == 1
    item = store.get(USER, "food")
    assert item is not None
    assert item.updated_at == at(0)


def test_a_new_text_of_the_same_value_is_a_new_version(
    store: TemporalStore, clock: ManualClock
) -> None:
    """What is embedded is part of a version: re-indexing an item re-embeds it."""
    store.put(USER, "food", {"text": "sushi", "note": "raw fish"})
    clock.advance()
    store.put(USER, "food", {"text": "sushi", "note": "raw fish"}, index=["note"])
    assert [v.status for v in store.history(USER, "food")] == ["superseded", "current"]


def test_items_come_from_the_current_version_only(store: TemporalStore, clock: ManualClock) -> None:
    for i in range(5):
        store.put(USER, "mood", {"text": f"mood number {i}"})
        clock.advance()
    results = store.search(USER, query="mood number", limit=10)
    assert [r.value["text"] for r in results] == ["mood number 4"]
    assert results[0].score is not None
    assert store.search(USER, limit=10)[0].score is None


def test_a_batch_writes_after_its_reads_and_keeps_the_last_put(store: TemporalStore) -> None:
    store.put(USER, "k", {"text": "old"})
    results = store.batch(
        [
            PutOp(USER, "k", {"text": "first"}),
            GetOp(USER, "k"),
            PutOp(USER, "k", {"text": "second"}),
            SearchOp(USER, None, 10, 0, None),
            ListNamespacesOp(None, None, 10, 0),
        ]
    )
    assert results[1].value == {"text": "old"}  # type: ignore[union-attr]
    assert [i.value for i in results[3]] == [{"text": "old"}]  # type: ignore[union-attr]
    assert results[4] == [USER]
    item = store.get(USER, "k")
    assert item is not None
    assert item.value == {"text": "second"}


# ---------------------------------------------------------------- names
KEYS = ["favorite_food", "Favorite_Food", "favorite food", "café", "ca\u0301fe", "%41", "%",
        "", " ", "a/b.c:d@e", "😀"]  # fmt: skip


def test_keys_that_the_core_would_normalise_alike_stay_apart(store: TemporalStore) -> None:
    for i, key in enumerate(KEYS):
        store.put(USER, key, {"text": f"value {i}"})
    for i, key in enumerate(KEYS):
        item = store.get(USER, key)
        assert item is not None
        assert (item.key, item.value) == (key, {"text": f"value {i}"})
    assert sorted(i.key for i in store.search(USER, limit=100)) == sorted(KEYS)
    assert encode_key("user_1") == "user_1"  # readable where it can be
    assert encode_key("Prefs") == "%50refs"


@settings(max_examples=200, deadline=None)
@given(st.text())
@example("\U0001f600" * 84)  # 84 characters, 1,008 once encoded: refused
@example("\U0001f600" * 83)  # 996 once encoded: kept
def test_a_key_is_encoded_reversibly_into_a_normalised_subject(key: str) -> None:
    # printable ASCII but capitals and % stays one character; anything else is 3 per UTF-8 byte
    kept = set(map(chr, range(0x21, 0x7F))) - set("ABCDEFGHIJKLMNOPQRSTUVWXYZ%")
    encoded_length = sum(1 if char in kept else 3 * len(char.encode()) for char in key)
    try:
        subject = encode_key(key)
    except InvalidInputError:
        # only a key too long once encoded is refused (a short key of 4-byte characters can be:
        # hypothesis found a 193-character one, where this test assumed 300 characters)
        assert encoded_length > MAX_NAME_CHARS
        return
    assert len(subject) == max(encoded_length, 1)
    assert decode_key(subject) == key
    assert key_subject(subject) == subject  # the core's normalisation leaves it alone


labels = st.text(min_size=1).filter(lambda s: "." not in s and "\x00" not in s)


@settings(max_examples=200, deadline=None)
@given(st.lists(labels, max_size=4), st.lists(labels, max_size=4))
def test_namespaces_are_encoded_reversibly_and_never_meet(one: list[str], other: list[str]) -> None:
    assert decode_namespace(encode_namespace(tuple(one))) == tuple(one)
    if one != other:
        assert encode_namespace(tuple(one)) != encode_namespace(tuple(other))


def test_a_whitespace_label_and_the_memorys_own_namespaces(store: TemporalStore) -> None:
    store.put((" ",), "k", {"text": "blank label"})
    store.memory.add("prose of another writer", namespace="default")
    store.memory.add("prose inside the store's namespace", namespace="langgraph.users.ana")
    assert store.list_namespaces() == [(" ",), USER]  # USER holds no item, only prose
    item = store.get((" ",), "k")
    assert item is not None
    assert item.namespace == (" ",)
    assert store.search(USER) == []
    assert store.memory.namespaces(prefix="langgraph.") == ["langgraph. ", "langgraph.users.ana"]


# ---------------------------------------------------------------- values
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=4))
def test_values_come_back_exactly_from_an_sqlite_ledger(value: dict[str, Any]) -> None:
    clock = ManualClock(START)
    with SQLiteLedger(":memory:", clock=clock) as ledger:
        store = TemporalStore(memory_on(clock, ledger))
        store.put(("v",), "k", value)
        item = store.get(("v",), "k")
    assert item is not None
    assert item.value == value
    assert _typed(item.value) == _typed(value)  # 1 stays an int, 1.0 a float, True a bool


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_a_value_that_is_not_json_is_refused_and_nothing_written(store: TemporalStore) -> None:
    with pytest.raises(InvalidInputError, match=r"value\.when"):
        store.batch(
            [PutOp(USER, "a", {"text": "fine"}), PutOp(USER, "b", {"when": datetime.now(UTC)})]
        )
    with pytest.raises(InvalidInputError, match="value"):
        store.batch([PutOp(USER, "c", ["not", "a", "dict"])])  # type: ignore[arg-type]
    assert store.search(USER) == []


# ---------------------------------------------------------------- index config
def test_without_an_index_a_query_is_ignored_as_in_langgraph(clock: ManualClock) -> None:
    store = TemporalStore(memory_on(clock))
    store.put(USER, "a", {"text": "tea"})
    clock.advance()
    store.put(USER, "b", {"text": "coffee"})
    results = store.search(USER, query="tea")
    assert [(r.key, r.score) for r in results] == [("b", None), ("a", None)]  # newest first


def test_the_index_config_must_describe_the_memorys_embedder(clock: ManualClock) -> None:
    memory = memory_on(clock)
    with pytest.raises(InvalidInputError, match=r"index\.dims"):
        TemporalStore(memory, index={"dims": memory.embedder.dimension + 1})
    with pytest.raises(InvalidInputError, match=r"index\.embed"):
        TemporalStore(memory, index={"embed": CoreEmbeddings(HashingEmbedder())})
    same = CoreEmbeddings(memory.embedder)
    store = TemporalStore(memory, index={"dims": memory.embedder.dimension, "embed": same})
    assert store.index_config is not None
    with pytest.raises(InvalidInputError, match="memory"):
        TemporalStore("not a memory")  # type: ignore[arg-type]


def test_a_ttl_is_refused_in_a_batch_too(store: TemporalStore) -> None:
    with pytest.raises(NotImplementedError, match="TTL"):
        store.batch([PutOp(USER, "k", {"text": "x"}, ttl=1.0)])


# ---------------------------------------------------------------- async
def test_sync_and_async_agree() -> None:
    """The same ops, one store through batch, the other through abatch: equal answers."""

    def script(clock: ManualClock) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
        return [
            ("put", (USER, "city", {"text": "Berlin"}), {}),
            ("put", (("users", "bo"), "city", {"text": "Oslo"}), {}),
            ("tick", (), {}),
            ("put", (USER, "city", {"text": "Lisbon"}), {}),
            ("get", (USER, "city"), {}),
            ("search", (("users",),), {"query": "Lisbon"}),
            ("search", (("users",),), {"filter": {"text": "Oslo"}}),
            ("list_namespaces", (), {"prefix": ("users",)}),
            ("delete", (("users", "bo"), "city"), {}),
            ("history", (USER, "city"), {}),
            ("get_as_of", (USER, "city"), {"valid_at": START}),
            ("search_as_of", (("users",),), {"valid_at": START}),
        ]

    def run_sync() -> list[Any]:
        clock = ManualClock(START)
        store = TemporalStore(memory_on(clock), index={"fields": ["text"]})
        return [
            clock.advance() if name == "tick" else getattr(store, name)(*args, **kwargs)
            for name, args, kwargs in script(clock)
        ]

    async def run_async() -> list[Any]:
        clock = ManualClock(START)
        store = TemporalStore(memory_on(clock), index={"fields": ["text"]})
        return [
            clock.advance() if name == "tick" else await getattr(store, f"a{name}")(*args, **kw)
            for name, args, kw in script(clock)
        ]

    expected = without_ids(run_sync())
    assert without_ids(asyncio.run(run_async())) == expected
    assert expected[4].value == {"text": "Lisbon"}
    assert len(expected[9]) == 2


def without_ids(results: list[Any]) -> list[Any]:
    """Results with the fact ids of history versions blanked (they are random)."""
    return [
        [replace(v, fact_id="") if isinstance(v, ItemVersion) else v for v in result]
        if isinstance(result, list)
        else result
        for result in results
    ]


def test_import_without_langgraph_names_the_extra(tmp_path: Path) -> None:
    """langchain_temporal imports without langgraph-checkpoint; TemporalStore then says what to
    install."""
    blocker = tmp_path / "langgraph" / "__init__.py"
    blocker.parent.mkdir()
    blocker.write_text("raise ImportError('langgraph is not installed here')\n")
    code = (
        "import langchain_temporal\n"
        "from shared_core.errors import MissingDependencyError\n"
        "try:\n"
        "    langchain_temporal.TemporalStore\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{tmp_path}:{Path.cwd()}"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert 'pip install "temporal-rag[langgraph]"' in done.stdout


# ---------------------------------------------------------------- issue 32, item 6
def test_memory_correct_of_an_item_shows_in_get_and_search(clock: ManualClock) -> None:
    """A correction through the memory the store exposes (``memory.correct(fact_id, text=...)``)
    showed nowhere: get and search read the value as put from the fact's metadata."""
    memory = memory_on(clock)
    store = TemporalStore(memory, index={"fields": ["text"]})
    store.put(USER, "city", {"text": "Ana lives in Berlin", "kind": "place"})
    store.put(USER, "pets", {"text": "Ana has a cat"}, index=False)  # its text: the whole JSON
    store.put(USER, "both", {"text": "tea", "note": "green"}, index=["text", "note"])
    clock.advance()
    memory.correct(store.history(USER, "city")[-1].fact_id, text="Ana lives in Lisbon")
    memory.correct(store.history(USER, "pets")[-1].fact_id, text='{"text": "Ana has a dog"}')
    memory.correct(store.history(USER, "both")[-1].fact_id, text="coffee\nblack")
    lisbon = {"text": "Ana lives in Lisbon", "kind": "place"}
    item = store.get(USER, "city")
    assert item is not None
    assert (item.value, item.created_at, item.updated_at) == (lisbon, at(0), at(0))
    hits = store.search(USER, query="Lisbon", filter={"kind": "place"})
    assert [(h.key, h.value) for h in hits] == [("city", lisbon)]
    assert hits[0].score is not None
    assert store.search(USER, filter={"text": "Ana lives in Berlin"}) == []
    pets = store.get(USER, "pets")
    assert pets is not None
    assert pets.value == {"text": "Ana has a dog"}
    # two fields joined cannot be split back: the value stays as put (documented)
    both = store.get(USER, "both")
    assert both is not None
    assert both.value == {"text": "tea", "note": "green"}
    berlin = {"text": "Ana lives in Berlin", "kind": "place"}
    assert [(v.value, v.status) for v in store.history(USER, "city")] == [
        (berlin, "retired"),  # never true: history keeps it, marked
        (lisbon, "current"),
    ]
    # a corrected metadata value (the text left as it was) shows too
    store.put(USER, "job", {"text": "Ana works at Acme"})
    fact = memory.ledger.get(store.history(USER, "job")[-1].fact_id)
    memory.correct(fact.id, metadata={**fact.metadata, "value": {"text": "Ana works at Globex"}})
    job = store.get(USER, "job")
    assert job is not None
    assert job.value == {"text": "Ana works at Globex"}


def test_open_refuses_a_prose_judge_that_can_never_act(tmp_path: Path) -> None:
    """``TemporalStore.open(path, config=MemoryConfig(prose_judge=...))`` opened the memory and
    loaded the judge, which never sees prose: every item is keyed by (namespace, key)."""
    for judge in ("kappa", ("kappa",)):
        config = MemoryConfig(embedder=HashingEmbedder(), prose_judge=judge)
        with pytest.raises(InvalidInputError, match=r"config\.prose_judge.*never act") as caught:
            TemporalStore.open(tmp_path / "store", config=config)
        assert "leave prose_judge out" in str(caught.value)
        assert not (tmp_path / "store").exists()  # refused before anything was opened


def test_a_store_without_index_embeds_nothing(clock: ManualClock) -> None:
    """Without ``index`` every put was embedded (the whole value as JSON) although nothing
    searches by it; a search with a query lists and filters, as LangGraph's stores do."""
    embedder = HashingEmbedder()
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=embedder, clock=clock),
    )
    store = TemporalStore(memory)
    before = embedder.calls
    store.put(USER, "a", {"text": "tea", "n": 1})
    clock.advance()
    store.batch([PutOp(USER, "b", {"text": "coffee", "n": 2}), PutOp(USER, "c", {"n": 3})])
    store.put(USER, "a", {"text": "green tea", "n": 1})
    store.delete(USER, "c")
    found = store.search(USER, query="tea", filter={"n": {"$lte": 2}})
    assert [(r.key, r.score) for r in found] == [("a", None), ("b", None)]
    assert store.search_as_of(USER, query="coffee", valid_at=at(0))[0].key == "a"
    assert embedder.calls == before
    # with an index, index=False puts are not embedded either; indexed ones are, once
    indexed = TemporalStore(memory, index={"fields": ["text"]})
    indexed.put(USER, "quiet", {"text": "not for search"}, index=False)
    assert embedder.calls == before
    indexed.put(USER, "loud", {"text": "Ana drinks tea"})
    assert embedder.calls == before + 1
    assert [r.key for r in indexed.search(USER, query="tea", limit=1)] == ["loud"]


def test_a_put_or_delete_does_not_wait_for_the_index(clock: ManualClock) -> None:
    """Each put and delete waited for the index's catch-up (four Chroma writes, most of the
    ~90 ms a put cost) though only a query search reads the index: it now catches up then, or
    on close, in one batch."""
    store = TemporalStore(memory_on(clock), index={"fields": ["text"]})
    store.put(USER, "a", {"text": "Ana drinks tea"})
    store.put(USER, "b", {"text": "Ana drinks coffee"})
    store.delete(USER, "b")
    assert store.memory.index.count() == 0  # the ledger has the writes; gets and lists read it
    assert [i.key for i in store.search(USER)] == ["a"]
    assert [i.key for i in store.search(USER, query="tea")] == ["a"]
    assert store.memory.index.count() == 2  # both versions (b retracted), in one catch-up


def test_a_closed_store_leaves_its_index_up_to_date(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    with TemporalStore.open(tmp_path, config=MemoryConfig(embedder=embedder)) as store:
        store.put(USER, "a", {"text": "Ana drinks tea"})
        store.put(USER, "b", {"text": "Ana drinks coffee"})
    assert embedder.calls == 0  # no index: nothing embedded, placeholders kept instead
    again = HashingEmbedder()
    with TemporalStore.open(tmp_path, config=MemoryConfig(embedder=again)) as store:
        assert store.memory.index.count() == 2  # applied on close: nothing left to reconcile
        assert again.calls == 0
