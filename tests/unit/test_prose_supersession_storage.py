"""Judged prose supersession on disk: schema version 3 and the migration from version 2."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from shared_core.facts import Fact, Reason, ReasonKind
from shared_core.ledger import SQLiteLedger
from shared_core.ledger.sqlite.schema import SCHEMA_VERSION
from shared_core.supersession import Statement, derive_versions

V3_COLUMNS = ("end_kind", "end_by", "end_rule", "end_score")


def d(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def columns(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[1] for row in conn.execute("PRAGMA table_info(statements)")]


def test_the_schema_is_version_3_with_the_ending_reason_of_statements(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path):
        pass
    assert SCHEMA_VERSION == 3
    assert columns(path)[-4:] == list(V3_COLUMNS)


def test_an_edge_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with SQLiteLedger(path) as ledger:
        old = ledger.write(Fact(text="The gate code is 1234", valid_from=d(2020))).fact
        new = ledger.write(Fact(text="The gate code is 9876", valid_from=d(2022))).fact
        assert old is not None
        assert new is not None
        ledger.supersede(old.id, by=new.id, rule="kappa-v1", score=0.875)
    with SQLiteLedger(path) as ledger:
        reason = Reason(ReasonKind.SUPERSEDED, new.id, "kappa-v1", 0.875)
        assert ledger.get(old.id).end_reason == reason
        assert ledger.export()[0][-1].end_reason == reason
        assert [f.text for f in ledger.current()] == ["The gate code is 9876"]
        assert ledger.unretire(old.id).fact is not None  # the edge is read back to undo it
        assert len(ledger.current()) == 2


def test_a_version_2_file_is_migrated_and_takes_edges(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with SQLiteLedger(path) as ledger:
        old = ledger.write(Fact(text="The wifi password is cats", valid_from=d(2020))).fact
        new = ledger.write(Fact(text="The wifi password is dogs", valid_from=d(2023))).fact
        assert old is not None
        assert new is not None
    with sqlite3.connect(path) as conn:  # make it what version 2 wrote
        for column in V3_COLUMNS:
            conn.execute(f"ALTER TABLE statements DROP COLUMN {column}")
        conn.execute("UPDATE schema_migrations SET version = 2")
    assert not set(V3_COLUMNS) & set(columns(path))
    with SQLiteLedger(path) as ledger:
        assert len(ledger.current()) == 2  # the old rows read back
        assert ledger.export()[0][0].end_reason is None
        ledger.supersede(old.id, by=new.id, rule="kappa-v1", score=0.5)
        assert [f.text for f in ledger.current()] == ["The wifi password is dogs"]
    with sqlite3.connect(path) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [2, 3]
    assert columns(path)[-4:] == list(V3_COLUMNS)


def test_the_rule_uses_a_retractions_own_ending_reason() -> None:
    judged = Reason(ReasonKind.SUPERSEDED, "newer", "kappa-v1", 0.9)
    versions = derive_versions(
        [
            Statement(1, "a", "prose:a", 0, None, "a"),
            Statement(2, "edge", None, 10, None, "edge", judged),
        ]
    )
    assert [(v.fact_id, v.valid_to, v.end) for v in versions] == [("a", 10, judged)]
    plain = derive_versions(
        [Statement(1, "a", "prose:a", 0, None, "a"), Statement(2, "r", None, 10, None, "r")]
    )
    assert plain[0].end == Reason(ReasonKind.RETRACTED, "r", "retraction")
