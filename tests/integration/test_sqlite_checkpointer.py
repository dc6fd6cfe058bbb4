"""The SQLite ledger's checkpoint thread: it copies commits into the file beside the writers,
starts with the first commit and stops with the ledger."""

from __future__ import annotations

import gc
import shutil
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared_core.facts import Fact
from shared_core.ledger import SQLiteLedger
from shared_core.ledger.sqlite.checkpointer import WalCheckpointer

WAIT_SECONDS = 30.0  # a generous bound for a shared, noisy machine; not a speed target


def moves(n: int) -> list[Fact]:
    return [
        Fact(
            text=f"Ana lives in city {i}",
            subject="ana",
            relation="lives_in",
            object=f"city {i}",
            valid_from=datetime(1950 + i, 1, 1, tzinfo=UTC),
        )
        for i in range(n)
    ]


def checkpointer(ledger: SQLiteLedger) -> WalCheckpointer:
    found = ledger._backend._db._checkpointer  # type: ignore[attr-defined]
    assert isinstance(found, WalCheckpointer)
    return found


def eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def statements_in_the_file_alone(path: Path, scratch: Path) -> int:
    """The statements the ledger file holds without its write-ahead log."""
    shutil.copyfile(path, scratch)  # the log stays behind: only checkpointed pages count
    try:
        with sqlite3.connect(f"file:{scratch}?immutable=1", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM statements").fetchone()[0])
    except sqlite3.DatabaseError:  # copied in the middle of a checkpoint: look again
        return -1
    finally:
        scratch.unlink(missing_ok=True)


@pytest.mark.parametrize("durability", ["full", "normal"])
def test_commits_reach_the_ledger_file_without_a_writer_checkpointing(
    tmp_path: Path, durability: str
) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path, durability=durability) as ledger:  # type: ignore[arg-type]
        for fact in moves(40):  # 40 commits: far below SQLite's own checkpoint mark
            ledger.write(fact)
        assert eventually(
            lambda: statements_in_the_file_alone(path, tmp_path / "copy.sqlite") == 40
        )
        assert checkpointer(ledger).checkpoints >= 1
        assert [f.object for f in ledger.current(subject="ana", relation="lives_in")] == ["city 39"]


def test_the_thread_starts_with_the_first_commit_and_stops_with_the_ledger(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.write(moves(1)[0])
    with SQLiteLedger(path) as ledger:
        thread = checkpointer(ledger)
        assert ledger.current(subject="ana", relation="lives_in")
        assert not thread.running  # reading commits nothing
        ledger.write(moves(2)[1])
        assert thread.running
    assert not thread.running
    assert not Path(f"{path}-wal").exists()  # the last connection folded the log in


def test_a_ledger_dropped_without_closing_stops_its_thread(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite")
    ledger.write(moves(1)[0])
    thread = checkpointer(ledger)
    assert thread.running
    del ledger
    gc.collect()
    assert eventually(lambda: not thread.running)


def test_an_in_memory_sqlite_ledger_has_no_thread() -> None:
    with SQLiteLedger(":memory:") as ledger:
        ledger.write(moves(1)[0])
        assert ledger._backend._db._checkpointer is None  # type: ignore[attr-defined]
