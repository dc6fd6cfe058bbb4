"""ReadAhead: a PostgreSQL write's first reads are answered only while they still hold."""

from __future__ import annotations

from typing import Any

from shared_core.ledger.backend import ProseRead, TailRead, WriteReads
from shared_core.ledger.postgres import sql as postgres_sql
from shared_core.ledger.postgres.read_ahead import ReadAhead

TAIL = TailRead(key_id=7, stream="", before=1_000)
OTHER_TAIL = TailRead(key_id=8, stream="tea", before=1_000)
PROSE = ProseRead("default", "maria likes tea", None, None)
VERSIONS, STATEMENTS, PROSE_ROWS = [("version",)], [("statement",)], [(41, "prose")]


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
        if sql == postgres_sql.KNOWN_FACT_IDS:
            return FakeCursor([("stored",)])
        if sql == postgres_sql.SUFFIX_VERSIONS_HEADED:
            return FakeCursor(VERSIONS)
        if sql == postgres_sql.SUFFIX_STATEMENTS:
            return FakeCursor(STATEMENTS)
        assert sql == postgres_sql.FIND_PROSE
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
    ahead.inserted_statement("new", None, "new", "default", "tea")
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
    ahead.inserted_statement("f", 7, "", "default", "maria lives in porto")
    assert ahead.tail(7, "", 1_000) is None


def test_stored_prose_is_given_once_for_the_same_lookup_until_that_text_is_written() -> None:
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    assert ahead.prose(ProseRead("default", "maria likes tea", 5, None)) is None
    assert ahead.prose(PROSE) == PROSE_ROWS
    assert ahead.prose(PROSE) is None
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.inserted_statement("keyed", 7, "", "default", "maria likes tea")
    ahead.inserted_statement("other", None, "other", "default", "maria likes coffee")
    ahead.inserted_statement("elsewhere", None, "elsewhere", "team", "maria likes tea")
    assert ahead.prose(PROSE) == PROSE_ROWS  # keyed, other text, other namespace: unchanged
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.inserted_statement("same", None, "same", "default", "maria likes tea")
    assert ahead.prose(PROSE) is None


def test_retiring_the_prose_found_drops_it_and_other_retirements_do_not() -> None:
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.retired_statement(40)
    ahead.retired_version(41)  # a version row id, not the statement's seq
    assert ahead.prose(PROSE) == PROSE_ROWS
    ahead, _ = read(WriteReads(prose=(PROSE,)))
    ahead.retired_statement(41)
    assert ahead.prose(PROSE) is None


def test_retiring_a_loaded_row_drops_its_stream_tail_and_an_unknown_row_every_tail() -> None:
    ahead, _ = read(WriteReads(tails=(TAIL, OTHER_TAIL)))
    ahead.loaded(7, "", seqs=[1, 2], row_ids=[10])
    ahead.loaded(9, "", seqs=[3], row_ids=[11])
    ahead.retired_version(10)
    assert ahead.tail(7, "", 1_000) is None
    assert ahead.tail(8, "tea", 1_000) is not None
    ahead, _ = read(WriteReads(tails=(TAIL, OTHER_TAIL)))
    ahead.loaded(9, "", seqs=[3], row_ids=[11])
    ahead.retired_statement(3)  # of a stream read without its tail ahead: the others stay
    assert ahead.tail(7, "", 1_000) is not None
    ahead, _ = read(WriteReads(tails=(TAIL, OTHER_TAIL)))
    ahead.retired_statement(99)  # never loaded: it could be of any stream
    assert ahead.tail(7, "", 1_000) is None
    assert ahead.tail(8, "tea", 1_000) is None


def test_the_end_of_the_write_drops_every_answer() -> None:
    ahead, _ = read(WriteReads(("stored",), (TAIL,), (PROSE,)))
    ahead.loaded(7, "", seqs=[1], row_ids=[10])
    ahead.clear()
    assert ahead.known_fact_ids(["stored"]) is None
    assert ahead.tail(7, "", 1_000) is None
    assert ahead.prose(PROSE) is None
    ahead.retired_version(10)  # forgotten too: nothing left to drop, nothing raised
