"""ReadAhead: a PostgreSQL write's first reads are answered only while they still hold."""

from __future__ import annotations

from typing import Any

from shared_core.ledger import postgres_schema
from shared_core.ledger.backend import ProseRead, TailRead, WriteReads
from shared_core.ledger.postgres_reads import ReadAhead

TAIL = TailRead(key_id=7, stream="", before=1_000)
OTHER_TAIL = TailRead(key_id=8, stream="tea", before=1_000)
PROSE = ProseRead("default", "maria likes tea", None, None)
VERSIONS, STATEMENTS, PROSE_ROWS = [("version",)], [("statement",)], [("prose",)]


class FakeCursor:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class FakeConnection:
    """Answers each query the read-ahead sends with canned rows, and records it."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def execute(self, sql: str, params: tuple[Any, ...]) -> FakeCursor:
        self.sent.append(sql)
        if sql == postgres_schema.KNOWN_FACT_IDS:
            return FakeCursor([("stored",)])
        if sql == postgres_schema.SUFFIX_VERSIONS_HEADED:
            return FakeCursor(VERSIONS)
        if sql == postgres_schema.SUFFIX_STATEMENTS:
            return FakeCursor(STATEMENTS)
        assert sql == postgres_schema.FIND_PROSE
        return FakeCursor(PROSE_ROWS)


def read(reads: WriteReads) -> tuple[ReadAhead, FakeConnection]:
    ahead, conn = ReadAhead(), FakeConnection()
    ahead.send(conn, reads)
    ahead.receive()
    return ahead, conn


def test_every_read_is_sent_at_once_and_nothing_for_no_reads() -> None:
    _, conn = read(WriteReads(("stored", "new"), (TAIL, OTHER_TAIL), (PROSE,)))
    assert len(conn.sent) == 6  # ids, two reads per tail, prose
    assert read(WriteReads())[1].sent == []


def test_asked_fact_ids_are_answered_and_grow_with_the_statements_written() -> None:
    ahead, _ = read(WriteReads(fact_ids=("stored", "new")))
    assert ahead.known_fact_ids(["stored", "new"]) == {"stored"}
    assert ahead.known_fact_ids(["new", "unasked"]) is None  # one was not asked: query
    ahead.inserted_statement("new", key_id=None, stream="new")
    assert ahead.known_fact_ids(["new"]) == {"new"}


def test_a_tail_is_given_once_and_only_for_an_instant_it_covers() -> None:
    ahead, _ = read(WriteReads(tails=(TAIL,)))
    assert ahead.tail(7, "", 999) is None  # read from later than asked: not this suffix
    ahead, _ = read(WriteReads(tails=(TAIL,)))
    assert ahead.tail(7, "", 1_500) == (1_000, VERSIONS, STATEMENTS)  # a longer suffix
    assert ahead.tail(7, "", 1_500) is None
    assert ahead.tail(None, "", 1_500) is None


def test_writing_to_a_stream_drops_its_tail_and_no_other() -> None:
    ahead, _ = read(WriteReads(tails=(TAIL, OTHER_TAIL)))
    ahead.inserted_version(7, "")
    assert ahead.tail(7, "", 1_000) is None
    assert ahead.tail(8, "tea", 1_000) is not None
    ahead, _ = read(WriteReads(tails=(TAIL,)))
    ahead.inserted_statement("f", key_id=7, stream="")
    assert ahead.tail(7, "", 1_000) is None


def test_stored_prose_is_given_once_for_the_same_lookup_until_prose_is_written() -> None:
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    assert ahead.prose(ProseRead("default", "maria likes tea", 5, None)) is None
    assert ahead.prose(PROSE) == PROSE_ROWS
    assert ahead.prose(PROSE) is None
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.inserted_statement("keyed", key_id=7, stream="")
    assert ahead.prose(PROSE) == PROSE_ROWS  # keyed statements are not prose
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.inserted_statement("prose", key_id=None, stream="prose")
    assert ahead.prose(PROSE) is None


def test_a_retirement_or_the_end_of_the_write_drops_every_answer_left() -> None:
    ahead, _ = read(WriteReads(("stored",), (TAIL,), (PROSE,)))
    ahead.retired()
    assert ahead.tail(7, "", 1_000) is None
    assert ahead.prose(PROSE) is None
    assert ahead.known_fact_ids(["stored"]) == {"stored"}  # retiring keeps ids used
    ahead.clear()
    assert ahead.known_fact_ids(["stored"]) is None
