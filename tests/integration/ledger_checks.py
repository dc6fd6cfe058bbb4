"""Checks shared by the crash and concurrency tests: lost acknowledged writes, rows deleted or
rewritten, overlapping versions, and an index that disagrees with its ledger."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from typing import Any

import pytest

from shared_core.clock import OPEN, from_instant, to_instant
from shared_core.errors import FactNotFoundError
from shared_core.index.chroma import ChromaIndex
from shared_core.index.chroma_records import from_metadata, is_live
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.records import StatementRow, VersionRow
from shared_core.ledger.results import VersionRecord
from shared_core.memory.memory import TemporalMemory
from tests.integration.crash_writer import SUBJECTS, day


def emit(config: pytest.Config, lines: list[str]) -> None:
    """Print past pytest's capture (like benchmarks/reporting.emit)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is None:
        print("\n".join(lines))
        return
    with capture.global_and_fixture_disabled():
        print("\n".join(lines), flush=True)


def lost_ids(memory: TemporalMemory | LedgerStore, ids: list[str]) -> list[str]:
    """Acknowledged statement ids the ledger does not know."""
    lost = []
    for fact_id in dict.fromkeys(ids):
        try:
            memory.explain(fact_id)
        except FactNotFoundError:
            lost.append(fact_id)
    return lost


def _unretired(row: Any) -> Any:
    return replace(row, retired_at=OPEN, retire_reason=None)


def deleted_or_rewritten(
    before: tuple[list[StatementRow], list[VersionRow]],
    after: tuple[list[StatementRow], list[VersionRow]],
) -> list[str]:
    """Rows of ``before`` missing or changed in ``after`` (a retired_at may be set once)."""
    problems = []
    pairs = (("statement", before[0], after[0], "seq"), ("version", before[1], after[1], "row_id"))
    for kind, old_rows, new_rows, key in pairs:
        by_id = {getattr(row, key): row for row in new_rows}
        for row in old_rows:
            now = by_id.get(getattr(row, key))
            if now is None:
                problems.append(f"{kind} {getattr(row, key)} was deleted")
            elif row.retired_at != OPEN and now != row:
                problems.append(f"retired {kind} {getattr(row, key)} changed")
            elif row.retired_at == OPEN and _unretired(now) != row:
                problems.append(f"{kind} {getattr(row, key)} changed beyond its retirement")
    return problems


def ledger_answer(ledger: Any, valid_at: int, known: int | None) -> set[tuple[Any, ...]]:
    """``as_of`` at those instants (known None: now), as the oracle's ``as_of`` answers."""
    facts = ledger.as_of(
        valid_at=from_instant(valid_at), known_at=None if known is None else from_instant(known)
    )
    found = set()
    for f in facts:
        end = OPEN if f.valid_to is None else to_instant(f.valid_to)
        found.add(
            (f.id, f.key.subject, f.key.relation, f.object_key, to_instant(f.valid_from), end)
        )
    return found


def overlapping_versions(versions: list[VersionRow]) -> list[str]:
    """Two versions of one stream valid at one instant as known at one record time."""
    by_stream: dict[tuple[Any, ...], list[VersionRow]] = {}
    for v in versions:
        by_stream.setdefault((v.namespace, v.key_id, v.stream), []).append(v)
    problems = []
    for stream, rows in by_stream.items():
        for a, b in itertools.combinations(rows, 2):
            valid = a.valid_from < b.valid_to and b.valid_from < a.valid_to
            known = a.recorded_at < b.retired_at and b.recorded_at < a.retired_at
            if valid and known:
                problems.append(f"rows {a.row_id} and {b.row_id} of {stream} overlap")
        for v in rows:
            if not (v.valid_from < v.valid_to and v.recorded_at <= v.retired_at):
                problems.append(f"row {v.row_id} has an empty or reversed interval")
    return problems


def sample_points(versions: list[VersionRow], rng: random.Random) -> list[tuple[Any, Any]]:
    """(valid_at, known_at) instants: now, history, record times and validity boundaries."""
    boundaries = sorted({v.valid_from for v in versions} | {v.valid_to for v in versions} - {OPEN})
    records = sorted({v.recorded_at for v in versions} | {v.retired_at for v in versions} - {OPEN})
    valid = [to_instant(day(n)) for n in (-1, 100, 250, 399, 800)]
    valid += rng.sample(boundaries, min(4, len(boundaries)))
    known: list[Any] = [None, *rng.sample(records, min(4, len(records)))]
    known += [k - 1 for k in known[1:3]]
    points: list[tuple[Any, Any]] = [(None, None), *((None, k) for k in known[1:3])]
    points += [(v, k) for v in valid for k in known]
    return points


def chroma_records(index: ChromaIndex) -> tuple[dict[int, tuple[str, VersionRecord]], list[int]]:
    """Every row a ChromaIndex holds, read exactly from Chroma's metadata store (no HNSW search
    involved): each row of its ``all`` collection with the role it holds ("live" when ``live``
    holds it too, else "all"); and the rows ``live`` holds wrongly (absent from ``all``, or with
    other metadata). The VectorIndex port has no record getter, so this reads the collections."""
    found: dict[int, tuple[str, VersionRecord]] = {}
    wrong: list[int] = []
    for key in list(index._books):
        live, every = index._collections(key)
        in_live = {from_metadata(m).row_id: from_metadata(m) for m in _metadatas(live)}
        for meta in _metadatas(every):
            record = from_metadata(meta)
            found[record.row_id] = ("live" if record.row_id in in_live else "all", record)
        wrong += [r for r, rec in in_live.items() if found.get(r, ("", None))[1] != rec]
    return found, wrong


def _metadatas(collection: Any) -> list[Any]:
    out: list[Any] = []
    offset = 0
    while True:
        page = collection.get(include=["metadatas"], limit=1_000, offset=offset)
        out += page["metadatas"]
        if len(page["ids"]) < 1_000:
            return out
        offset += 1_000


def index_disagreements(
    memory: TemporalMemory,
    versions: list[VersionRow],
    rng: random.Random,
    misses: list[int] | None = None,
) -> list[str]:
    """Where the index disagrees with the ledger's version rows.

    Exact: the index holds exactly the ledger's rows, each once, live ones also in ``live``, with
    the ledger's fact id, valid interval and record interval (retired ones retired), and it has
    read the whole change feed; no search shows a row that is not visible at its (valid_at,
    known_at); a current-state search per subject returns exactly the ledger's ``as_of`` facts
    of that subject; a large-k search at any sampled point returns every visible row (the index
    falls back to exact search when HNSW returns too few: see
    test_history_search_finds_every_version_of_a_repeated_text). Misses are also counted in
    ``misses`` for the figures.
    """
    problems = []
    assert isinstance(memory.index, ChromaIndex)
    held, wrong = chroma_records(memory.index)
    rows = {v.row_id for v in versions}
    if set(held) != rows or wrong:
        problems.append(
            f"index rows differ: missing {sorted(rows - set(held))[:5]}, "
            f"extra {sorted(set(held) - rows)[:5]}, wrong in live {wrong[:5]}"
        )
    for v in versions:
        if v.row_id not in held:
            continue
        role, record = held[v.row_id]
        mine = (v.fact_id, v.valid_from, v.valid_to, v.recorded_at, v.retired_at)
        theirs = (record.fact_id, record.valid_from, record.valid_to, record.recorded_at)
        if mine != (*theirs, record.retired_at):
            problems.append(f"row {v.row_id}: the index holds {theirs, record.retired_at}")
        if (role == "live") != is_live(record):
            problems.append(f"row {v.row_id}: live holds it: {role == 'live'}")
    behind = memory.ledger.changes(memory.index.cursor())
    if behind.records:
        problems.append(f"the index has not applied {len(behind.records)} changes")
    vector = memory.embedder.embed_query("where does Maria live")
    k = len(versions) + 1
    for valid_at, known_at in sample_points(versions, rng):
        known = OPEN - 1 if known_at is None else known_at  # None: believed now
        expected = {
            v.row_id
            for v in versions
            if v.recorded_at <= known < v.retired_at
            and (valid_at is None or v.valid_from <= valid_at < v.valid_to)
        }
        where = {"namespace": "default", "valid_at": valid_at, "known_at": known_at}
        got = {match.row_id for match in memory.index.search(vector, k=k, **where)}
        if got - expected:
            problems.append(f"at {where}: the index shows {sorted(got - expected)[:5]}")
        if expected - got:
            problems.append(f"at {where}: the index misses {sorted(expected - got)[:5]}")
            if misses is not None:
                misses += sorted(expected - got)
    for subject in SUBJECTS:
        hits = memory.search(subject, k=k)
        expected_ids = {f.id for f in memory.as_of(subject=subject)}
        got_ids = {hit.fact.id for hit in hits if hit.fact.subject == subject}
        if got_ids != expected_ids:
            problems.append(f"search({subject!r}) returned {got_ids}, as_of says {expected_ids}")
    return problems
