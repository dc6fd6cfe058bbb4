"""What only the SQLite ledger can get wrong: files, processes, locks and damage."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared_core.errors import (
    LedgerBusyError,
    LedgerError,
    LedgerNotFoundError,
    NotALedgerError,
    SchemaVersionError,
)
from shared_core.facts import Fact, FactStatus
from shared_core.ledger import SQLiteLedger
from shared_core.ledger.sqlite.schema import SCHEMA_VERSION


def lives(city: str, year: int) -> Fact:
    return Fact(
        text=f"Maria lives in {city}",
        subject="Maria",
        relation="lives in",
        object=city,
        valid_from=datetime(year, 1, 1, tzinfo=UTC),
    )


WRITER = """
import os, signal, sys
from datetime import UTC, datetime
from shared_core.facts import Fact
from shared_core.ledger import SQLiteLedger
ledger = SQLiteLedger(sys.argv[1])
for year, city in [(2019, "Berlin"), (2021, "Lisbon")]:
    ledger.write(Fact(text=city, subject="Maria", relation="lives in", object=city,
                      valid_from=datetime(year, 1, 1, tzinfo=UTC)))
print("acknowledged", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close(), no clean exit
"""


def test_acknowledged_writes_survive_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.strip() == "acknowledged"
    with SQLiteLedger(path) as ledger:
        assert [f.object for f in ledger.current()] == ["Lisbon"]
        history = ledger.history("Maria", "lives in")
        assert [(f.object, f.status) for f in history] == [
            ("Berlin", FactStatus.SUPERSEDED),
            ("Lisbon", FactStatus.CURRENT),
        ]


def test_reopening_keeps_declarations_and_record_time(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.declare("speaks", "many")
        first = ledger.write(lives("Berlin", 2019))
    with SQLiteLedger(path, create=False) as ledger:
        assert ledger.cardinality("speaks") == "many"
        again = ledger.write(lives("Lisbon", 2021))
        assert first.fact is not None
        assert again.fact is not None
        assert again.fact.recorded_at >= first.fact.recorded_at  # type: ignore[operator]


def test_the_file_is_a_wal_ledger_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    SQLiteLedger(path).close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == (
            SCHEMA_VERSION
        )


def test_files_that_are_not_ledgers_are_refused_and_left_alone(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    other = tmp_path / "other-app.sqlite"
    with sqlite3.connect(other) as raw:
        raw.execute("CREATE TABLE users (name TEXT)")
    raw.close()
    for path in (text, other, tmp_path):
        before = path.read_bytes() if path.is_file() else None
        with pytest.raises(NotALedgerError):
            SQLiteLedger(path)
        if before is not None:
            assert path.read_bytes() == before


def test_create_false_never_creates(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(LedgerNotFoundError, match="does not exist"):
        SQLiteLedger(missing, create=False)
    assert not missing.exists()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(LedgerNotFoundError, match="empty"):
        SQLiteLedger(empty, create=False)
    assert empty.stat().st_size == 0


def test_a_ledger_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    SQLiteLedger(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO schema_migrations VALUES (?, 0)", (SCHEMA_VERSION + 1,))
    raw.close()
    with pytest.raises(SchemaVersionError, match="upgrade"):
        SQLiteLedger(path)


def test_a_truncated_ledger_gives_a_ledger_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.write_many([lives(f"City {n}", 1900 + n) for n in range(400)])
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(size // 2)
    with pytest.raises(LedgerError), SQLiteLedger(path) as ledger:
        ledger.history("Maria", "lives in")


def test_a_held_lock_becomes_a_clear_busy_error_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    ledger = SQLiteLedger(path, busy_timeout=0.05, busy_retries=1)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(LedgerBusyError, match="locked"):
            ledger.write(lives("Berlin", 2019))
        assert time.monotonic() - started < 5  # bounded, not a hang
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert ledger.current() == []
    assert ledger.write(lives("Berlin", 2019)).fact is not None
    ledger.close()


def test_threads_sharing_a_ledger_lose_nothing(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite", durability="normal")
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for n in range(25):
                ledger.write(lives(f"City {offset}-{n}", 1800 + offset * 25 + n))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    history = ledger.history("Maria", "lives in")
    assert len(history) == 200
    assert [f.valid_from for f in history] == sorted(f.valid_from for f in history)  # type: ignore[type-var]
    assert [f.object for f in ledger.current()] == ["City 7-24"]
    ledger.close()


def test_closing_twice_is_harmless_and_a_closed_ledger_says_so(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite")
    ledger.close()
    ledger.close()
    with pytest.raises(LedgerError):
        ledger.current()


def test_the_process_id_file_descriptor_count_stays_flat(tmp_path: Path) -> None:
    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to count file descriptors")
    before = len(os.listdir("/proc/self/fd"))
    for n in range(20):
        with SQLiteLedger(tmp_path / f"l{n}.sqlite") as ledger:
            ledger.write(lives("Berlin", 2019))
    assert len(os.listdir("/proc/self/fd")) <= before + 2


def test_a_version_1_file_is_migrated_to_the_change_feed_index(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.write(lives("Berlin", 2019))
        ledger.write(lives("Lisbon", 2021))
    with sqlite3.connect(path) as conn:  # make it what version 1 wrote
        conn.execute("DROP INDEX versions_retired")
        for column in ("end_kind", "end_by", "end_rule", "end_score"):  # added by version 3
            conn.execute(f"ALTER TABLE statements DROP COLUMN {column}")
        conn.execute("UPDATE schema_migrations SET version = 1")
    with SQLiteLedger(path) as ledger:
        assert [f.object for f in ledger.current()] == ["Lisbon"]
        assert len(ledger.changes().records) == 3
    with sqlite3.connect(path) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        plan = " ".join(
            str(row)
            for row in conn.execute(
                "EXPLAIN QUERY PLAN SELECT row_id FROM versions "
                "WHERE retired_at >= 5 AND retired_at < 9223372036854775807"
            )
        )
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert "versions_retired" in indexes
    assert "versions_retired" in plan, "the change feed must not scan the versions table"


def test_the_mirror_lock_is_a_file_beside_the_ledger_and_none_for_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteLedger(tmp_path / "ledger.sqlite") as ledger, ledger.mirror_lock():
        assert (tmp_path / "ledger.sqlite.mirror-lock").exists()
    working = tmp_path / "working"
    working.mkdir()
    monkeypatch.chdir(working)
    with SQLiteLedger(":memory:") as ledger, ledger.mirror_lock():
        pass
    assert list(working.iterdir()) == []  # no ":memory:.mirror-lock" in the working folder
