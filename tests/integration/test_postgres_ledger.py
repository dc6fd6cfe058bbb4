"""What only the PostgreSQL ledger can get wrong: URLs, schemas, servers, connections."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from shared_core import HashingEmbedder, MemoryConfig, NumpyIndex, TemporalMemory
from shared_core.errors import (
    InvalidInputError,
    LedgerError,
    LedgerNotFoundError,
    LedgerUnavailableError,
    NotALedgerError,
    SchemaVersionError,
)
from shared_core.facts import Fact, FactKey, FactStatus
from shared_core.ledger import PostgresLedger, WriteResult
from shared_core.ledger.postgres.schema import SCHEMA_VERSION
from tests.servers import drop_schema, free_port


def _maria(relation: str, obj: str, year: int) -> Fact:
    return Fact(
        text=f"Maria {relation} {obj}",
        subject="Maria",
        relation=relation,
        object=obj,
        valid_from=datetime(year, 1, 1, tzinfo=UTC),
    )


def lives(city: str, year: int) -> Fact:
    return _maria("lives in", city, year)


def test_reopening_keeps_facts_declarations_and_record_time(postgres_url: str, schema: str) -> None:
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.declare("speaks", "many")
        first = ledger.write(lives("Berlin", 2019))
    with PostgresLedger(postgres_url, schema=schema, create=False) as ledger:
        assert ledger.cardinality("speaks") == "many"
        again = ledger.write(lives("Lisbon", 2021))
        assert first.fact is not None
        assert again.fact is not None
        assert again.fact.recorded_at >= first.fact.recorded_at  # type: ignore[operator]
        assert [(f.object, f.status) for f in ledger.history("Maria", "lives in")] == [
            ("Berlin", FactStatus.SUPERSEDED),
            ("Lisbon", FactStatus.CURRENT),
        ]


def test_two_ledgers_in_one_database_do_not_see_each_other(postgres_url: str) -> None:
    one, two = f"a_{uuid.uuid4().hex[:10]}", f"b_{uuid.uuid4().hex[:10]}"
    try:
        with (
            PostgresLedger(postgres_url, schema=one) as first,
            PostgresLedger(postgres_url, schema=two) as second,
        ):
            first.write(lives("Berlin", 2019))
            assert second.current() == []
    finally:
        drop_schema(postgres_url, one)
        drop_schema(postgres_url, two)


def test_a_second_connection_sees_writes_and_follows_the_change_feed(
    postgres_url: str, schema: str
) -> None:
    with (
        PostgresLedger(postgres_url, schema=schema) as writer,
        PostgresLedger(postgres_url, schema=schema) as reader,
    ):
        before = reader.revision()
        cursor = reader.changes().cursor
        writer.write(lives("Berlin", 2019))
        writer.write(lives("Lisbon", 2021))
        assert reader.revision() != before
        assert [f.object for f in reader.current()] == ["Lisbon"]
        changes = reader.changes(cursor)
        assert {r.text for r in changes.records} == {
            "Maria lives in Berlin",
            "Maria lives in Lisbon",
        }
        assert reader.changes(changes.cursor).records == ()


def test_a_memory_over_postgres_searches_the_current_state(postgres_url: str, schema: str) -> None:
    memory = TemporalMemory(
        ledger=PostgresLedger(postgres_url, schema=schema),
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(dimension=64)),
    )
    with memory:
        memory.add(lives("Berlin", 2019))
        memory.add(lives("Lisbon", 2021))
        hits = memory.search("where does Maria live", k=3)
        assert [hit.fact.object for hit in hits] == ["Lisbon"]


@pytest.mark.parametrize(
    ("url", "field"),
    [("sqlite:///x.db", "url"), ("", "url"), ("postgresql://h/db", "schema")],
)
def test_bad_urls_and_schema_names_name_the_field(url: str, field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        PostgresLedger(url, schema="Bad-Name" if field == "schema" else "ok")


def test_an_unreachable_server_is_a_clear_error_quickly() -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    with pytest.raises(LedgerUnavailableError, match="unreachable") as caught:
        PostgresLedger(url, connect_timeout=2)
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value, LedgerError)


def test_a_schema_of_another_application_is_refused_and_left_alone(
    postgres_url: str, schema: str
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.users (name TEXT)")
        conn.execute(f"INSERT INTO {schema}.users VALUES ('ana')")
    with pytest.raises(NotALedgerError, match="no temporal-rag ledger"):
        PostgresLedger(postgres_url, schema=schema)
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
        assert tables == [("users",)]


def test_create_false_never_creates(postgres_url: str, schema: str) -> None:
    with pytest.raises(LedgerNotFoundError, match="does not exist"):
        PostgresLedger(postgres_url, schema=schema, create=False)
    with psycopg.connect(postgres_url) as conn:
        found = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchone()
        assert found is None


def test_a_ledger_from_a_newer_version_is_refused(postgres_url: str, schema: str) -> None:
    PostgresLedger(postgres_url, schema=schema).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO {schema}.schema_migrations VALUES (%s, 0)", (SCHEMA_VERSION + 1,)
        )
    with pytest.raises(SchemaVersionError, match="upgrade"):
        PostgresLedger(postgres_url, schema=schema)


def test_a_killed_connection_is_an_unavailable_error_and_the_next_call_reconnects(
    postgres_url: str, schema: str
) -> None:
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.write(lives("Berlin", 2019))
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = 'postgres' "
                "AND backend_type = 'client backend'"
            ).fetchall()
        assert killed
        assert all(ok for (ok,) in killed)
        ledger.write(lives("Lisbon", 2021))  # the pool checks and replaces dead connections
        assert [f.object for f in ledger.current()] == ["Lisbon"]


def test_closing_twice_is_harmless_and_a_closed_ledger_says_so(
    postgres_url: str, schema: str
) -> None:
    ledger = PostgresLedger(postgres_url, schema=schema)
    ledger.close()
    ledger.close()
    with pytest.raises(LedgerError):
        ledger.current()


def test_copy_ledger_moves_an_sqlite_ledger_into_postgres_history_included(
    postgres_url: str, schema: str, tmp_path: Path
) -> None:
    from rich.console import Console

    from shared_core.cli import main
    from shared_core.ledger import SQLiteLedger

    path = tmp_path / "demo.sqlite"
    quiet = Console(file=io.StringIO())
    assert main(["demo", "--ledger", str(path)], console=quiet) == 0
    out = io.StringIO()
    argv = ["copy-ledger", str(path), postgres_url, "--target-schema", schema, "--json"]
    assert main(argv, console=Console(file=out, width=200)) == 0
    report = json.loads(out.getvalue())
    assert report["faithful"] is True
    assert report["checked"] == 200
    with (
        SQLiteLedger(path, create=False) as source,
        PostgresLedger(postgres_url, schema=schema, create=False) as copy,
    ):
        assert copy.dump() == source.dump()
        for subject, relation in {(f.subject, f.relation) for f in source.as_of()}:
            assert copy.history(subject, relation) == source.history(subject, relation)
    again = ["copy-ledger", str(path), postgres_url, "--target-schema", schema]
    assert main(again, console=quiet) != 0  # the target is not empty any more: refused


@pytest.fixture(scope="module")
def filled(postgres_url: str) -> Iterator[str]:
    """A ledger schema with keyed and prose statements, analysed (so plans are the real ones)."""
    name = f"f_{uuid.uuid4().hex[:12]}"
    start = datetime(2000, 1, 1, tzinfo=UTC)
    with PostgresLedger(postgres_url, schema=name) as ledger:
        ledger.write_many(
            [
                Fact(
                    text=f"user {i % 50} lives in city {i}",
                    subject=f"user-{i % 50}",
                    relation="lives in",
                    object=f"city {i}",
                    valid_from=start + timedelta(hours=i),
                )
                for i in range(1_000)
            ]
        )
        ledger.write_many([Fact(text=f"note number {i}", id=f"p{i}") for i in range(500)])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ANALYZE {name}.versions")
        conn.execute(f"ANALYZE {name}.statements")
    yield name
    drop_schema(postgres_url, name)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("STREAM_STATEMENTS", (1, "", 0)),
        ("STREAM_STATEMENTS_PROSE", ("p7", 0)),
        ("STREAM_VERSIONS", (1, "", 0)),
        ("STREAM_VERSIONS_PROSE", ("p7", 0)),
        ("SUFFIX_STATEMENTS", (1, "", 1, "", 2**40)),
        ("SUFFIX_STATEMENTS_PROSE", ("p7", "p7", 2**40)),
        ("SUFFIX_VERSIONS_HEADED", (1, "", 1, "", 2**40)),
        ("SUFFIX_VERSIONS_HEADED_PROSE", ("p7", "p7", 2**40)),
    ],
)
def test_stream_reads_find_their_rows_through_an_index_not_a_scan(
    postgres_url: str, filled: str, name: str, params: tuple[object, ...]
) -> None:
    # broke: the stream reads compared key_id NULL-safely (IS NOT DISTINCT FROM), which no
    # index serves, so every write scanned every version row (41 writes/s at 95,000 rows,
    # 419/s at 9,500)
    from shared_core.ledger.postgres import sql

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {filled}")
        plan = conn.execute("EXPLAIN " + getattr(sql, name), params).fetchall()
    lines = [row[0] for row in plan]
    conditions = [line for line in lines if "Index Cond" in line]
    assert any("key_id" in c and "stream" in c for c in conditions), lines


def test_a_loaded_ledger_has_planner_statistics(postgres_url: str, schema: str) -> None:
    # broke: right after a bulk load the tables looked empty to the planner until autovacuum
    # came by, and a key's current state scanned every believed row (4.4 ms at a million rows)
    from shared_core import InMemoryLedger

    source = InMemoryLedger()
    source.write_many([lives(city, 2000 + i) for i, city in enumerate(("Oslo", "Rome", "Nice"))])
    with PostgresLedger(postgres_url, schema=schema) as target:
        target.load(source.dump())
    with psycopg.connect(postgres_url) as conn:
        (rows,) = conn.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (f"{schema}.versions",)
        ).fetchone()
    assert rows > 0


def _count_reads(ledger: PostgresLedger, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The backend's own queries from now on (the reads of a transaction's opening round trip,
    which holds its lock, are not among them)."""
    backend = ledger._backend
    made: list[str] = []
    for name in ("_one", "_all", "_both"):
        original = getattr(backend, name)

        def spy(*args: object, _original: object = original, _name: str = name) -> object:
            made.append(f"{_name} {str(args[0])[:70]}")
            return _original(*args)  # type: ignore[operator]

        monkeypatch.setattr(backend, name, spy)
    return made


def test_a_write_to_a_stored_key_reads_everything_in_the_round_trip_of_its_lock(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round trip between taking the write lock and the COMMIT is time no other writer
    can use: a write's fact id, its stream's tail and stored prose are read with the lock."""
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.declare("speaks", "many")
        ledger.write_many([lives("Berlin", 2019), _speaks("German", 2019)])
        ledger.write(Fact(text="Maria likes tea"))
        assert [ledger.cardinality(r) for r in ("lives in", "speaks")] == ["one", "many"]
        made = _count_reads(ledger, monkeypatch)
        moved = ledger.write(lives("Lisbon", 2021))
        undated = ledger.write(replace(lives("Porto", 2020), valid_from=None))
        again = ledger.write(replace(lives("Porto", 2020), valid_from=None))
        added = ledger.write(_speaks("Portuguese", 2021))
        prose = ledger.write(Fact(text="Maria likes coffee"))
        assert made == [], "\n".join(made)
        assert ledger.write(Fact(text="maria likes tea")).decision == "duplicate"
    assert [closed.object for closed in moved.closed] == ["Berlin"]
    assert [closed.object for closed in undated.closed] == ["Lisbon"]
    assert again.decision == "reinforced"
    assert added.decision == "novel"
    assert not added.closed
    assert prose.decision == "novel"


def test_a_batch_reads_every_stored_key_and_prose_in_the_round_trip_of_its_lock(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's later facts are answered from the read-ahead too: a supersession of one key
    or new prose does not throw away what was read for the others."""
    people = ["Maria", "Ana", "Rui", "Eva"]
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.write_many([replace(lives("Berlin", 2019), subject=p) for p in people])
        assert ledger.cardinality("lives in") == "one"
        made = _count_reads(ledger, monkeypatch)
        facts = [replace(lives("Lisbon", 2021), subject=p) for p in people]
        prose = [Fact(text=f"{p} likes tea") for p in people]
        results = ledger.write_many([*facts, *prose])
        assert made == [], "\n".join(made)
        # the same text twice in one batch: the second is looked up again, after the first
        repeated = ledger.write_many([Fact(text="Ana likes coffee"), Fact(text="ana likes coffee")])
        assert len(made) == 1
    assert [r.decision for r in results] == [*["superseded"] * 4, *["novel"] * 4]
    assert [c.subject for r in results[:4] for c in r.closed] == people
    assert [r.decision for r in repeated] == ["novel", "duplicate"]


def test_a_write_of_a_new_key_inserts_it_in_one_round_trip_under_the_lock(
    postgres_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key was looked up (with every other key of the write) just before the lock; found
    missing, it is inserted at once. Stored meanwhile by another writer, it is found after."""
    with PostgresLedger(postgres_url, schema=schema) as ledger:
        ledger.write(lives("Berlin", 2019))
        assert ledger.cardinality("lives in") == "one"
        made = _count_reads(ledger, monkeypatch)
        first = ledger.write_many(
            [replace(lives("Porto", 2020), subject=p) for p in ("Ana", "Rui")]
        )
        assert [call.split()[0] for call in made] == ["_all", "_one", "_one"], "\n".join(made)
        assert "FROM keys k JOIN" in made[0]  # one lookup for both keys
        assert all("INSERT INTO keys" in call for call in made[1:])
        with PostgresLedger(postgres_url, schema=schema) as other:
            look_up = ledger._backend.key_ids
            raced: list[WriteResult] = []

            def then_another_writer_stores_it(keys: list[FactKey]) -> dict[FactKey, int]:
                found = look_up(keys)  # Eva's key is missing here...
                raced.append(other.write(replace(lives("Faro", 2020), subject="Eva")))
                return found  # ...and stored before this write takes the lock

            monkeypatch.setattr(ledger._backend, "key_ids", then_another_writer_stores_it)
            made.clear()
            later = ledger.write(replace(lives("Lagos", 2022), subject="Eva"))
        assert "FROM keys k JOIN" in made[0]  # looked up ahead: missing
        assert "INSERT INTO keys" in made[1]  # nothing inserted: the conflict...
        assert "SELECT key_id FROM keys" in made[2]  # ...sends it to the stored key
    assert [r.decision for r in first] == ["novel", "novel"]
    assert [r.decision for r in raced] == ["novel"]
    assert later.decision == "superseded"
    assert [c.object for c in later.closed] == ["Faro"]


def _speaks(language: str, year: int) -> Fact:
    return _maria("speaks", language, year)
