"""Damaged or foreign storage (issue 9, part 3): SQLite ledger files and Chroma folders.

A ledger file that is garbage, truncated, empty, a directory or damaged in the middle is refused
with a LedgerError subclass (or, for damage SQLite only notices later, every later operation
raises one), and the file is left exactly as it was. A Chroma folder built by another embedder
is refused with EmbedderMismatchError, nothing changed. Hostile strings round-trip through
SQLite + Chroma exactly, and are refused before either store is touched when they cannot.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared_core.embedders.base import CallableEmbedder, HashingEmbedder
from shared_core.errors import (
    EmbedderMismatchError,
    LedgerCorruptError,
    LedgerError,
    LedgerNotFoundError,
    NotALedgerError,
    TemporalRagError,
)
from shared_core.ledger import SQLiteLedger
from shared_core.memory import MemoryConfig, TemporalMemory

SERIAL = itertools.count()
STORAGE = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
INJECTIONS = [
    "'; DROP TABLE statements; --",
    "Robert'); DELETE FROM versions WHERE ('1'='1",
    "a\x00b",
    "\x01\x02\x1b[0m\x7f",
    "\u202e\ufeff",
    "$where",
    "🙂",
]


def digest(folder: Path) -> dict[str, str]:
    """Every file under a path (or the file itself) -> its sha256."""
    files = [folder] if folder.is_file() else sorted(p for p in folder.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def make_ledger(path: Path, facts: int = 40) -> None:
    with TemporalMemory.open(
        path.parent, config=MemoryConfig(embedder=HashingEmbedder(16))
    ) as memory:
        for i in range(facts):
            memory.add(
                f"Maria lives in city {i}.",
                subject="Maria",
                relation="lives in",
                object=f"city {i}",
                valid_from=datetime(2000 + i % 30, 1 + i % 12, 1, tzinfo=UTC),
                metadata={"n": i, "pad": "x" * 200},
            )


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """The bytes of a real ledger with a few pages of facts (WAL checkpointed on close)."""
    folder = tmp_path_factory.mktemp("pristine")
    make_ledger(folder / "ledger.sqlite")
    return Pristine((folder / "ledger.sqlite").read_bytes())


@dataclass(frozen=True)
class Pristine:
    """A ledger file's bytes, with a short repr: hypothesis prints its test's arguments when it
    reports a failing example, and a 300 kB repr raised a HypothesisWarning (an error under
    ``filterwarnings = error``) that hid the failure itself."""

    data: bytes

    def __repr__(self) -> str:
        return f"Pristine({len(self.data):,} bytes)"


def exercise(ledger: SQLiteLedger) -> Iterator[Callable[[], Any]]:
    yield ledger.export
    yield lambda: ledger.as_of(valid_at=datetime(2010, 1, 1, tzinfo=UTC))
    yield lambda: ledger.history("Maria", "lives in")
    yield lambda: ledger.changes()
    yield lambda: ledger.revision()
    yield lambda: ledger.declare("works at", "many")


def only_ledger_errors(path: Path) -> None:
    """Open the file and use it: anything that goes wrong is a LedgerError."""
    try:
        ledger = SQLiteLedger(path)
    except LedgerError:
        return
    with ledger:
        for operation in exercise(ledger):
            with contextlib.suppress(LedgerError):
                operation()


# --------------------------------------------------------------------------- the ledger file
@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"not a database at all, just words\n" * 50, NotALedgerError),
        (b"\x00" * 8192, NotALedgerError),
        (b"SQLite format 3\x00" + b"\xff" * 4080, LedgerError),
        (b"SQLite format 3\x00", LedgerError),
    ],
)
def test_garbage_is_refused_and_left_alone(tmp_path: Path, content: bytes, error: type) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(content)
    with pytest.raises(error):
        SQLiteLedger(path)
    with pytest.raises(error):
        TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(16)))
    assert path.read_bytes() == content
    assert not (tmp_path / "index").exists()  # refused before the index was created


def test_a_directory_is_not_a_ledger(tmp_path: Path) -> None:
    with pytest.raises(NotALedgerError):
        SQLiteLedger(tmp_path)
    (tmp_path / "ledger.sqlite").mkdir()
    with pytest.raises(NotALedgerError):
        TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(16)))


def test_an_empty_file_is_no_ledger_when_one_must_exist(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(b"")
    with pytest.raises(LedgerNotFoundError):
        SQLiteLedger(path, create=False)
    assert path.read_bytes() == b""


def test_an_sqlite_file_of_another_application_is_refused_unchanged(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "ledger.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE statements (x)")
    conn.close()
    before = digest(path)
    with pytest.raises(NotALedgerError):
        SQLiteLedger(path)
    assert digest(path) == before


@STORAGE
@given(fraction=st.floats(0.0, 0.999))
def test_a_truncated_ledger_raises_only_ledger_errors(
    tmp_path_factory: pytest.TempPathFactory, pristine: Pristine, fraction: float
) -> None:
    path = tmp_path_factory.mktemp("truncated") / "ledger.sqlite"
    path.write_bytes(pristine.data[: int(len(pristine.data) * fraction)])
    only_ledger_errors(path)


@STORAGE
@given(
    damage=st.lists(
        st.tuples(st.floats(0.0, 0.999), st.binary(min_size=1, max_size=64)),
        min_size=1,
        max_size=4,
    )
)
def test_a_ledger_damaged_in_the_middle_raises_only_ledger_errors(
    tmp_path_factory: pytest.TempPathFactory,
    pristine: Pristine,
    damage: list[tuple[float, bytes]],
) -> None:
    content = bytearray(pristine.data)
    for where, garbage in damage:
        start = 16 + int((len(content) - 16) * where)  # keep the magic: SQLite must try to read
        content[start : start + len(garbage)] = garbage
    path = tmp_path_factory.mktemp("damaged") / "ledger.sqlite"
    path.write_bytes(bytes(content[: len(pristine.data)]))
    only_ledger_errors(path)


def test_damaged_pages_surface_as_ledger_corrupt_error(tmp_path: Path, pristine: Pristine) -> None:
    content = bytearray(pristine.data)
    page = 4096
    for start in range(2 * page, len(content), page):  # wreck every page after the schema
        content[start : start + 64] = b"\xa5" * 64
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(bytes(content))
    with pytest.raises(LedgerError) as caught, SQLiteLedger(path) as ledger:  # noqa: PT012
        ledger.export()
        ledger.as_of(valid_at=datetime(2010, 1, 1, tzinfo=UTC))
    assert isinstance(caught.value, LedgerCorruptError | NotALedgerError)


# --------------------------------------------------------------------------- the Chroma folder
@pytest.mark.parametrize(
    "other",
    [
        lambda: HashingEmbedder(32),  # same family, another dimension
        lambda: CallableEmbedder(
            lambda texts: [[1.0] * 16 for _ in texts], name="someone-else", dimension=16
        ),  # same dimension, another model
    ],
)
def test_a_chroma_folder_of_another_embedder_is_refused_unchanged(
    tmp_path: Path, other: Callable[[], Any]
) -> None:
    with TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(16))) as memory:
        memory.add("Maria lives in Lisbon.", subject="Maria", relation="lives in", object="Lisbon")
    before = digest(tmp_path)
    with pytest.raises(EmbedderMismatchError):
        TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=other()))
    ledger = str(tmp_path / "ledger.sqlite")
    assert digest(tmp_path / "ledger.sqlite") == {ledger: before[ledger]}
    with TemporalMemory.open(
        tmp_path, config=MemoryConfig(embedder=HashingEmbedder(16))
    ) as memory:  # still usable
        assert [h.fact.object for h in memory.search("Maria", k=3)] == ["Lisbon"]


# --------------------------------------------------------------------------- hostile values
@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TemporalMemory]:
    folder = tmp_path_factory.mktemp("embedded")
    with TemporalMemory.open(folder, config=MemoryConfig(embedder=HashingEmbedder(16))) as memory:
        yield memory


@settings(STORAGE, max_examples=15)
@given(
    text=st.sampled_from(INJECTIONS) | st.text(min_size=1, max_size=30),
    namespace=st.sampled_from(INJECTIONS) | st.text(min_size=1, max_size=10),
    key=st.sampled_from(INJECTIONS) | st.text(min_size=1, max_size=10),
    value=st.one_of(
        st.sampled_from(INJECTIONS), st.integers(-(2**63), 2**63 - 1), st.just(math.nan)
    ),
)
def test_hostile_strings_round_trip_through_sqlite_and_chroma(
    embedded: TemporalMemory, text: str, namespace: str, key: str, value: Any
) -> None:
    memory = embedded
    text = f"{text} #{next(SERIAL)}"  # one fresh key per example: the memory is shared
    before = (repr(memory.ledger.export()), memory.index.count())
    try:
        added = memory.add(
            f"x {text}",
            subject=f"s {text}",
            relation=f"r {key}",
            object=f"o {text}",
            namespace=namespace,
            metadata={key: value},
        )
    except TemporalRagError:
        assert (repr(memory.ledger.export()), memory.index.count()) == before
        return
    fact = memory.ledger.get(added.fact_ids[0])
    assert (fact.text, fact.subject, fact.namespace) == (f"x {text}", f"s {text}", namespace)
    assert fact in memory.as_of(namespace=namespace, subject=f"s {text}", relation=f"r {key}")
    found = memory.search(f"x {text}", k=100, namespace=namespace)
    assert fact.id in {hit.fact.id for hit in found}
    if isinstance(value, str):
        assert fact in memory.select({key: value}, namespace=namespace)


def test_open_refused_for_another_embedder_closes_what_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by this suite: the refusal left the SQLite connection and the Chroma client open."""
    from shared_core.index.chroma import ChromaIndex

    with TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(16))) as memory:
        memory.add("Maria lives in Lisbon.")
    closed: list[str] = []
    for cls in (SQLiteLedger, ChromaIndex):
        original = cls.close

        def close(self: Any, _original: Callable[[Any], None] = original) -> None:
            closed.append(type(self).__name__)
            _original(self)

        monkeypatch.setattr(cls, "close", close)
    with pytest.raises(EmbedderMismatchError):
        TemporalMemory.open(tmp_path, config=MemoryConfig(embedder=HashingEmbedder(32)))
    assert sorted(closed) == ["ChromaIndex", "SQLiteLedger"]
