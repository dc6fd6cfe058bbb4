"""Claims against an oracle: with a judge that is always right, whatever the order and batching
in which statements arrive, the memory's claims say at every valid time, as known after every
batch, what the latest statement before it known by then says (shared_core.judging.claims)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared_core import HashingEmbedder, InMemoryLedger, MemoryConfig, NumpyIndex, TemporalMemory
from shared_core.clock import ManualClock
from shared_core.detectors.frames import Frame, FrameProfile
from shared_core.detectors.kappa import Verdict
from shared_core.judging.claims import ClaimJudge
from shared_core.ledger.protocol import LedgerStore
from shared_core.ledger.sqlite.ledger import SQLiteLedger

PEOPLE = ("Ana", "Bruno")
CITIES = ("Braga", "Porto", "Lyon")
_CITY = re.compile(r"lives in (\w+)")


class AllFramed:
    """Every statement states home_city (the statements below are all about residence)."""

    def profiles(self, vectors: object) -> list[FrameProfile]:
        frame = Frame("home_city", 0.99)
        return [FrameProfile(0.99, frame, (1.0,)) for _ in vectors]  # type: ignore[attr-defined]


class RightJudge:
    """Restates when both name the same city, ends when they differ: never wrong."""

    def verdict_scores(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
        out = []
        for older, newer in pairs:
            same = city(older) == city(newer)
            out.append(Verdict(ends=0.0 if same else 1.0, restates=1.0 if same else 0.0, neither=0))
        return out


def city(text: str) -> str:
    found = _CITY.search(text)
    assert found is not None, text
    return found.group(1)


def year(n: int) -> datetime:
    return datetime(2000 + n, 1, 1, tzinfo=UTC)


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[list[tuple[str, str, int]], list[int]]:
    """Statements (person, text, valid year), distinct years per person, in a random record
    order, and the sizes of the add_many batches they arrive in."""
    statements = []
    for person in PEOPLE:
        years = draw(st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True))
        for n, valid in enumerate(years):
            value = draw(st.sampled_from(CITIES))
            statements.append((person, f"{person} lives in {value}, note {'i' * (n + 1)}.", valid))
    order = draw(st.permutations(statements))
    sizes = []
    left = len(order)
    while left:
        size = draw(st.integers(1, left))
        sizes.append(size)
        left -= size
    return list(order), sizes


def expected_city(statements: list[tuple[str, str, int]], person: str, at: int) -> str | None:
    said = [(valid, text) for who, text, valid in statements if who == person and valid <= at]
    return city(max(said)[1]) if said else None


def check_claims(
    ledger: LedgerStore,
    clock: ManualClock,
    arrived: tuple[list[tuple[str, str, int]], list[int]],
) -> None:
    statements, sizes = arrived
    judge = ClaimJudge(
        scorer=RightJudge(),
        frames=AllFramed(),
        name="oracle",
        ends_threshold=0.9,
        restates_threshold=0.9,
    )
    memory = TemporalMemory(
        ledger=ledger,
        index=NumpyIndex(),
        config=MemoryConfig(embedder=HashingEmbedder(dimension=32), clock=clock, prose_judge=judge),
    )
    known: list[tuple[datetime, list[tuple[str, str, int]]]] = []  # (known at, said by then)
    start = 0
    for size in sizes:
        batch = statements[start : start + size]
        memory.add_many(
            [text for _, text, _ in batch],
            metadatas=[{"valid_from": year(valid).isoformat()} for _, _, valid in batch],
        )
        start += size
        known.append((clock.now(), statements[:start]))
        clock.advance(timedelta(days=1))
    moments = sorted({v + d for _, _, v in statements for d in (-1, 0)} | {40})
    for known_at, said in known:
        for person in PEOPLE:
            for at in moments:
                facts = memory.as_of(
                    valid_at=year(at), known_at=known_at, subject=person, relation="home_city"
                )
                cities = {city(str(fact.object)) for fact in facts}
                wanted = expected_city(said, person, at)
                assert cities == ({wanted} if wanted else set()), (person, at, len(said))
    assert [f for f in memory.as_of() if f.key is None] == []  # a sure judge leaves none
    memory.close()


START = datetime(2030, 1, 1, tzinfo=UTC)


def in_memory(run: Callable[[LedgerStore, ManualClock], None]) -> None:
    clock = ManualClock(START)
    run(InMemoryLedger(clock=clock), clock)


def in_sqlite(run: Callable[[LedgerStore, ManualClock], None]) -> None:
    clock = ManualClock(START)
    with tempfile.TemporaryDirectory() as folder:
        run(SQLiteLedger(Path(folder) / "ledger.sqlite", clock=clock), clock)


@pytest.mark.parametrize(
    ("with_ledger", "examples"), [(in_memory, 150), (in_sqlite, 40)], ids=["in-memory", "sqlite"]
)
def test_claims_hold_the_latest_value_at_every_valid_and_record_time(
    with_ledger: Callable[[Callable[[LedgerStore, ManualClock], None]], None], examples: int
) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(arrivals())
    def check(arrived: tuple[list[tuple[str, str, int]], list[int]]) -> None:
        with_ledger(lambda ledger, clock: check_claims(ledger, clock, arrived))

    check()
