"""Hostile input to every public entry point of TemporalMemory (issue 9, part 3).

Properties, for every operation and every input below:

- only documented errors escape (``TemporalRagError`` subclasses; see shared_core/errors.py);
- an operation that raises leaves the ledger export and the index untouched (no partial write);
- an operation that succeeds leaves a memory that still reads, reconciles and round-trips.

The in-memory stack (InMemoryLedger + NumpyIndex + HashingEmbedder) is fuzzed for speed; a few
cases run on SQLite + Chroma in tests/integration/test_hostile_storage.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared_core.clock import ManualClock
from shared_core.detectors.llm import LLMConflictDetector
from shared_core.embedders.base import CallableEmbedder, HashingEmbedder
from shared_core.errors import (
    EmbedderError,
    IndexSyncError,
    TemporalRagError,
)
from shared_core.facts import Fact
from shared_core.filters import where
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging.llm import LLMExtractor
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

START = datetime(2024, 1, 1, tzinfo=UTC)
FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- hostile values
INJECTIONS = [
    "'; DROP TABLE statements; --",
    '" OR 1=1 --',
    "Robert'); DELETE FROM versions WHERE ('1'='1",
    "%s %d {0} {namespace} $where $or",
    "m.subject",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\r\n\t\x1b[31m\x7f",
    "\u202e\u200b\ufeff",
    " ",
    "",
    "🙂" * 5,
]
hostile_strings = st.one_of(
    st.sampled_from(INJECTIONS),
    st.text(max_size=20),
    st.tuples(st.text(max_size=8), st.sampled_from(INJECTIONS)).map("".join),
)
hostile_floats = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324])
hostile_scalars = st.one_of(
    hostile_strings,
    hostile_floats,
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.binary(max_size=4),
)
metadata_values = st.recursive(
    hostile_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_strings, inner, max_size=3),
    max_leaves=6,
)
metadata_keys = st.one_of(
    hostile_strings,
    st.sampled_from(["subject", "relation", "object", "valid_from", "valid_to", "fact_id"]),
)
hostile_metadata = st.dictionaries(metadata_keys, metadata_values, max_size=4)
hostile_datetimes = st.one_of(
    st.none(),
    st.datetimes(timezones=st.just(UTC)),  # aware, year 1 to 9999
    st.datetimes(),  # naive
    st.sampled_from(
        [
            datetime.min,  # noqa: DTZ901 - naive on purpose
            datetime.max,  # noqa: DTZ901 - naive on purpose
            datetime.min.replace(tzinfo=UTC),
            datetime.max.replace(tzinfo=UTC),
            datetime.max.replace(tzinfo=timezone(timedelta(hours=-14))),
            datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
        ]
    ),
)
hostile_objects = st.one_of(hostile_scalars, st.lists(st.integers(), max_size=2))
texts = st.one_of(hostile_strings, st.just("Maria lives in Lisbon."))


# --------------------------------------------------------------------------- the harness
def make_memory(**options: Any) -> TemporalMemory:
    clock = ManualClock(START)
    embedder = options.pop("embedder", HashingEmbedder(32))
    memory = TemporalMemory(
        ledger=InMemoryLedger(clock=clock),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=embedder, clock=clock, **options),
    )
    seed(memory)
    clock.advance(timedelta(days=1))
    return memory


def seed(memory: TemporalMemory) -> None:
    for year, city in ((2019, "Berlin"), (2023, "Lisbon")):
        memory.add(
            f"Maria lives in {city}.",
            subject="Maria",
            relation="lives in",
            object=city,
            valid_from=datetime(year, 1, 1, tzinfo=UTC),
            metadata={"source": "seed", "year": year},
        )
    memory.add("Maria likes grilled sardines.", namespace="tenant-b")
    memory.add("The endpoint is https://api.example.com/v2.", metadata={"tag": "ops"})


def snapshot(memory: TemporalMemory) -> tuple[str, int, set[int]]:
    """Everything a write could change: the ledger's rows and the index's rows."""
    statements, versions = memory.ledger.export()
    return repr((statements, versions)), memory.index.count(), memory.index.row_ids()


def assert_healthy(memory: TemporalMemory) -> None:
    """The memory still reads after whatever happened, and the index agrees with the ledger."""
    memory.reconcile()
    memory.search("Where does Maria live?", k=3)
    memory.search("Maria", k=3, include_history=True)
    memory.as_of(valid_at=START)
    believed = {v.row_id for v in memory.ledger.export()[1]}
    assert memory.index.row_ids() <= believed


@contextmanager
def documented(memory: TemporalMemory, *, writes: bool = True) -> Iterator[None]:
    """Run an operation: it succeeds, or raises a documented error and changes nothing."""
    before = snapshot(memory)
    try:
        yield
    except IndexSyncError:
        memory.reconcile()  # documented: the ledger holds the write, reconcile repairs the index
    except TemporalRagError:
        assert snapshot(memory) == before, "an operation that failed changed the memory"
    if not writes:
        assert snapshot(memory)[0] == before[0], "a read changed the ledger"
    assert_healthy(memory)


# --------------------------------------------------------------------------- writes
@FUZZ
@given(
    text=texts,
    subject=st.one_of(st.none(), hostile_strings),
    relation=st.one_of(st.none(), hostile_strings),
    obj=st.one_of(st.none(), hostile_objects),
    valid_from=hostile_datetimes,
    valid_to=hostile_datetimes,
    namespace=st.one_of(hostile_strings, st.just("default")),
    metadata=st.one_of(st.none(), hostile_metadata),
)
def test_add_takes_hostile_fields_or_refuses_them_cleanly(
    text: Any,
    subject: Any,
    relation: Any,
    obj: Any,
    valid_from: Any,
    valid_to: Any,
    namespace: Any,
    metadata: Any,
) -> None:
    with make_memory() as memory, documented(memory):
        memory.add(
            text,
            subject=subject,
            relation=relation,
            object=obj,
            valid_from=valid_from,
            valid_to=valid_to,
            namespace=namespace,
            metadata=metadata,
        )


@FUZZ
@given(
    items=st.lists(st.one_of(texts, st.integers(), st.none()), min_size=1, max_size=4),
    metadatas=st.one_of(st.none(), st.lists(hostile_metadata, min_size=0, max_size=5)),
    namespace=hostile_strings,
    valid_from=hostile_datetimes,
)
def test_add_many_is_all_or_nothing(
    items: list[Any], metadatas: Any, namespace: str, valid_from: Any
) -> None:
    with make_memory() as memory, documented(memory):
        memory.add_many(items, metadatas=metadatas, namespace=namespace, valid_from=valid_from)


def test_add_many_with_one_bad_fact_among_good_ones_writes_none() -> None:
    with make_memory() as memory:
        before = snapshot(memory)
        good = Fact(text="Ana lives in Porto.", subject="Ana", relation="lives in", object="Porto")
        with pytest.raises(TemporalRagError):
            memory.add_many([good, "fine prose", "bad \ud800 prose"])
        assert snapshot(memory) == before


@pytest.mark.parametrize("size", [1_000_000])
def test_a_huge_text_is_stored_whole_or_refused(size: int) -> None:
    with make_memory() as memory, documented(memory):
        result = memory.add("Maria " + "x" * size)
        assert memory.ledger.get(result.fact_ids[0]).text == "Maria " + "x" * size


@FUZZ
@given(
    subject=hostile_strings,
    relation=hostile_strings,
    obj=st.one_of(st.none(), hostile_objects),
    at=hostile_datetimes,
    namespace=hostile_strings,
)
def test_retract_refuses_cleanly(
    subject: Any, relation: Any, obj: Any, at: Any, namespace: Any
) -> None:
    with make_memory() as memory, documented(memory):
        memory.retract(subject, relation, obj, at=at, namespace=namespace)


@FUZZ
@given(
    fact_id=st.one_of(hostile_strings, st.just("<seeded>")),
    changes=st.dictionaries(
        st.sampled_from(
            ["text", "subject", "relation", "object", "valid_from", "valid_to", "metadata", "bogus"]
        ),
        st.one_of(hostile_strings, hostile_objects, hostile_datetimes, hostile_metadata),
        max_size=3,
    ),
)
def test_correct_refuses_cleanly(fact_id: str, changes: dict[str, Any]) -> None:
    with make_memory() as memory:
        if fact_id == "<seeded>":
            fact_id = memory.as_of(subject="Maria", relation="lives in")[0].id
        with documented(memory):
            memory.correct(fact_id, **changes)


@FUZZ
@given(
    fact_id=hostile_strings,
    where_=st.one_of(st.none(), hostile_metadata, st.integers(), hostile_strings),
    namespace=hostile_strings,
)
def test_retire_and_retire_where_refuse_cleanly(fact_id: str, where_: Any, namespace: Any) -> None:
    with make_memory() as memory:
        with documented(memory):
            memory.retire(fact_id)
        with documented(memory):
            memory.unretire(fact_id)
        with documented(memory):
            memory.retire_where(where_, namespace=namespace)


# --------------------------------------------------------------------------- reads
@FUZZ
@given(
    query=st.one_of(texts, st.none(), st.integers()),
    k=st.one_of(st.integers(-3, 50), st.just(10**9), st.booleans(), st.floats()),
    namespace=hostile_strings,
    valid_at=hostile_datetimes,
    known_at=hostile_datetimes,
    include_history=st.booleans(),
    use_recency_buffer=st.booleans(),
    where_=st.one_of(st.none(), hostile_metadata),
)
def test_search_and_context_refuse_cleanly(
    query: Any,
    k: Any,
    namespace: Any,
    valid_at: Any,
    known_at: Any,
    include_history: bool,
    use_recency_buffer: bool,
    where_: Any,
) -> None:
    options = {
        "namespace": namespace,
        "valid_at": valid_at,
        "known_at": known_at,
        "include_history": include_history,
        "use_recency_buffer": use_recency_buffer,
        "where": where_,
    }
    with make_memory() as memory:
        with documented(memory, writes=False):
            hits = memory.search(query, k=k, **options)
            assert len(hits) <= k + (8 if use_recency_buffer else 0)
        with documented(memory, writes=False):
            memory.context(query, token_budget=k, **options)


@FUZZ
@given(
    subject=st.one_of(st.none(), hostile_strings),
    relation=st.one_of(st.none(), hostile_strings),
    namespace=hostile_strings,
    valid_at=hostile_datetimes,
    known_at=hostile_datetimes,
    fact_id=hostile_strings,
    where_=st.one_of(st.none(), hostile_metadata),
)
def test_ledger_reads_refuse_cleanly(
    subject: Any,
    relation: Any,
    namespace: Any,
    valid_at: Any,
    known_at: Any,
    fact_id: Any,
    where_: Any,
) -> None:
    with make_memory() as memory:
        with documented(memory, writes=False):
            memory.history(subject, relation, namespace=namespace, known_at=known_at)
        with documented(memory, writes=False):
            memory.as_of(
                valid_at=valid_at,
                known_at=known_at,
                namespace=namespace,
                subject=subject,
                relation=relation,
            )
        with documented(memory, writes=False):
            memory.select(where_, namespace=namespace, valid_at=valid_at, known_at=known_at)
        with documented(memory, writes=False):
            memory.explain(fact_id)


def test_where_filters_refuse_nan_and_infinity() -> None:
    with make_memory() as memory:
        for value in (math.nan, math.inf, -math.inf):
            with documented(memory, writes=False), pytest.raises(TemporalRagError):
                memory.search("Maria", where={"year": value})
            with documented(memory, writes=False), pytest.raises(TemporalRagError):
                memory.select(where("year", ">", value))


# --------------------------------------------------------------------------- embedders and LLMs
bad_vectors: st.SearchStrategy[Callable[[int, int], Any]] = st.sampled_from(
    [
        lambda n, d: [[0.1] * (d + 1) for _ in range(n)],  # wrong dimension
        lambda n, d: [[0.1] * (d - 1) for _ in range(n)],
        lambda n, d: [[0.1] * d for _ in range(n + 1)],  # wrong count
        lambda n, d: [[0.1] * d for _ in range(max(n - 1, 0))],
        lambda n, d: [[math.nan] * d for _ in range(n)],
        lambda n, d: [[math.inf] + [0.0] * (d - 1) for _ in range(n)],
        lambda n, d: [["x"] * d for _ in range(n)],
        lambda n, d: None,
        lambda n, d: "not vectors",
        lambda n, d: [None] * n,
        lambda n, d: [[0.0] * d for _ in range(n)],  # zero vectors
        lambda n, d: [[1e308] * d for _ in range(n)],  # overflows a norm
    ]
)


@FUZZ
@given(bad=bad_vectors, text=texts)
def test_an_embedder_returning_malformed_vectors_writes_nothing(
    bad: Callable[[int, int], Any], text: str
) -> None:
    dimension = 16
    state = {"bad": False}

    def embed(batch: list[str]) -> Any:
        if state["bad"]:
            return bad(len(batch), dimension)
        return HashingEmbedder(dimension).embed_documents(batch)

    def embed_query(query: str) -> Any:
        if state["bad"]:
            vectors = bad(1, dimension)
            return vectors[0] if isinstance(vectors, list) and vectors else vectors
        return HashingEmbedder(dimension).embed_query(query)

    embedder = CallableEmbedder(embed, name="fuzzed", dimension=dimension, embed_query=embed_query)
    with make_memory(embedder=embedder) as memory:
        state["bad"] = True
        before = snapshot(memory)
        for operation in (
            lambda: memory.add(text),
            lambda: memory.add(text, subject="Maria", relation="lives in", object="Faro"),
            lambda: memory.search(text or "q"),
        ):
            try:
                operation()
            except IndexSyncError:
                pytest.fail("a malformed vector must be refused before the ledger write")
            except TemporalRagError:
                assert snapshot(memory) == before
        state["bad"] = False
        assert_healthy(memory)


def test_an_embedder_that_raises_is_an_embedder_error() -> None:
    def broken(batch: list[str]) -> Any:
        raise RuntimeError("GPU on fire")

    embedder = CallableEmbedder(broken, name="broken", dimension=8)
    memory = TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
    )
    with memory, pytest.raises(EmbedderError):
        memory.add("anything")


llm_answers = st.one_of(
    hostile_strings,
    st.sampled_from(
        [
            "",
            "{",
            "null",
            "[]",
            '{"facts": null}',
            '{"facts": [{"subject": null}]}',
            '{"facts": [{"subject": "Maria", "relation": "lives in", "object": NaN}]}',
            '{"facts": [{"subject": "Maria", "relation": "lives in", "object": Infinity}]}',
            '{"facts": [{"subject": "\\u0000", "relation": "\\ud800", "object": "x"}]}',
            '{"facts": [{"subject": "M", "relation": "r", "object": "o", '
            '"valid_from": "99999-01-01"}]}',
            '{"facts": [{"subject": "M", "relation": "r", "object": "o", '
            '"valid_from": "2020-01-01"}]}',
            '{"conflicts": [[1, 2], [2, 1], [0, 99], [-1, 3], ["a", "b"], [1e400, 2]]}',
            '{"conflicts": [{"older": 1, "newer": 42}, {"older": "id-that-does-not-exist"}]}',
            '{"conflicts": "all of them"}',
            "yes",
            "no",
            "```json\n" + "[" * 10_000 + "\n```",
            "[" * 100_000,
            '{"a": ' * 5_000 + "1" + "}" * 5_000,
            "x" * 2_000_000,
        ]
    ),
)


@FUZZ
@given(answer=llm_answers)
def test_llm_extractor_answers_never_corrupt_the_memory(answer: str) -> None:
    extractor = LLMExtractor(lambda prompt: answer)
    with make_memory(prose_judge=extractor) as memory, documented(memory):
        memory.add("Maria moved to Faro in 2025.")


@FUZZ
@given(answer=llm_answers)
def test_llm_detector_answers_never_crash_a_search(answer: str) -> None:
    detector = LLMConflictDetector(lambda prompt: answer)
    with make_memory() as memory:
        memory.add("Maria moved to Porto.")
        memory.add("Maria moved to Faro.")
        with documented(memory, writes=False):
            hits = memory.search(
                "Where does Maria live?", k=5, detector=detector, include_history=True
            )
            returned = {hit.fact.id for hit in hits}
            shadows = {s.candidate.id for hit in hits for s in hit.shadows}
            assert not returned & shadows


@FUZZ
@given(answer=st.one_of(llm_answers, st.none(), st.integers()), expand=st.integers(0, 4))
def test_query_expander_answers_never_crash_a_search(answer: Any, expand: int) -> None:
    with make_memory(expander=lambda query: answer) as memory, documented(memory, writes=False):
        memory.search("Where does Maria live?", k=3, expand=expand)


# --------------------------------------------------------------------------- regressions
EDGE_OF_TIME = [
    datetime.max.replace(tzinfo=timezone(timedelta(hours=-14))),  # year 10000 in UTC
    datetime.min.replace(tzinfo=timezone(timedelta(hours=14))),  # year 0 in UTC
]


@pytest.mark.parametrize("when", EDGE_OF_TIME)
def test_a_datetime_outside_utc_years_1_to_9999_is_invalid_input_not_overflow(
    when: datetime,
) -> None:
    """Found by this fuzzing: such a datetime raised OverflowError out of add and search."""
    from shared_core.errors import InvalidInputError

    with make_memory() as memory:
        before = snapshot(memory)
        with pytest.raises(InvalidInputError, match="outside years 1-9999"):
            memory.add("x", subject="Maria", relation="lives in", object="Faro", valid_from=when)
        with pytest.raises(InvalidInputError):
            memory.add("Maria lives in Faro.", valid_from=when)
        with pytest.raises(InvalidInputError):
            memory.search("Maria", known_at=when)
        with pytest.raises(InvalidInputError):
            memory.search("Maria", valid_at=when)
        with pytest.raises(InvalidInputError):
            memory.as_of(valid_at=when)
        with pytest.raises(InvalidInputError):
            memory.retract("Maria", "lives in", at=when)
        assert snapshot(memory) == before
