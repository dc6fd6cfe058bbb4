"""TemporalMemory on the embedded default: SQLite ledger + Chroma persistent + the real MiniLM."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared_core.clock import ManualClock
from shared_core.embedders.base import CallableEmbedder, HashingEmbedder
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.errors import EmbedderMismatchError, InvalidInputError
from shared_core.facts import Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.ledger.sqlite.ledger import SQLiteLedger
from shared_core.memory import Hit, MemoryConfig, TemporalMemory

START = datetime(2024, 6, 1, tzinfo=UTC)


def d(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def memory(tmp_path: Path, minilm: MiniLMEmbedder, clock: ManualClock) -> Iterator[TemporalMemory]:
    with TemporalMemory.open(
        tmp_path / "memory", config=MemoryConfig(embedder=minilm, clock=clock)
    ) as memory:
        yield memory


def texts(hits: list[Hit]) -> list[str]:
    return [hit.fact.text for hit in hits]


def lives(memory: TemporalMemory, clock: ManualClock, city: str, when: datetime) -> str:
    clock.advance(timedelta(days=1))
    added = memory.add(
        f"Maria lives in {city}.", subject="Maria", relation="lives in", object=city,
        valid_from=when,
    )  # fmt: skip
    return added.fact_ids[0]


def background(memory: TemporalMemory) -> None:
    memory.add_many(
        [
            "Maria's favourite food is grilled sardines.",
            "The quarterly report is due at the end of March.",
            "João works as a nurse at the city hospital.",
            "Our API's rate limit is 100 requests per minute.",
        ]
    )


def test_berlin_lisbon_porto(memory: TemporalMemory, clock: ManualClock) -> None:
    background(memory)
    for city, year in (("Berlin", 2019), ("Lisbon", 2021), ("Porto", 2023)):
        lives(memory, clock, city, d(year))
    hits = memory.search("Where does Maria live?", k=3)
    assert texts(hits)[0] == "Maria lives in Porto."
    assert not {"Maria lives in Berlin.", "Maria lives in Lisbon."} & set(texts(hits))
    assert texts(memory.search("Where does Maria live?", k=1, valid_at=d(2020))) == [
        "Maria lives in Berlin."
    ]
    assert texts(memory.search("Where does Maria live?", k=1, valid_at=d(2022))) == [
        "Maria lives in Lisbon."
    ]


def test_flip_flop_late_fact_many_and_correction(
    memory: TemporalMemory, clock: ManualClock
) -> None:
    for city, year in (("Berlin", 2019), ("Lisbon", 2021), ("Berlin", 2023)):
        lives(memory, clock, city, d(year))
    assert texts(memory.search("Where does Maria live?", k=1)) == ["Maria lives in Berlin."]
    lives(memory, clock, "Madrid", d(2015))  # late-arriving, older than everything
    assert texts(memory.search("Where does Maria live?", k=1)) == ["Maria lives in Berlin."]
    assert texts(memory.search("Where does Maria live?", k=1, valid_at=d(2016))) == [
        "Maria lives in Madrid."
    ]
    memory.declare("speaks", "many")
    for language in ("German", "Portuguese"):
        memory.add(f"Maria speaks {language}.", subject="Maria", relation="speaks",
                   object=language)  # fmt: skip
    spoken = texts(memory.search("Which languages does Maria speak?", k=2))
    assert sorted(spoken) == ["Maria speaks German.", "Maria speaks Portuguese."]
    clock.advance(timedelta(days=1))
    wrong = memory.add("João's employer is Acme.", subject="João", relation="employer",
                       object="Acme")  # fmt: skip
    clock.advance(timedelta(days=1))
    memory.correct(wrong.fact_ids[0], object="Globex", text="João's employer is Globex.")
    assert texts(memory.search("Who does João work for?", k=1)) == ["João's employer is Globex."]


def test_namespaces_and_prose(memory: TemporalMemory) -> None:
    memory.add("The deploy key rotates every Monday.", namespace="team-a")
    memory.add("Lunch is at noon on Fridays.", namespace="team-b")
    assert texts(memory.search("When does the deploy key rotate?", namespace="team-a")) == [
        "The deploy key rotates every Monday."
    ]
    assert texts(memory.search("deploy key rotation", namespace="team-b")) == [
        "Lunch is at noon on Fridays."
    ]
    assert memory.search("deploy key rotation") == []


def test_as_of_search_equals_the_ledger(memory: TemporalMemory, clock: ManualClock) -> None:
    background(memory)
    recorded = []
    for city, year in (("Berlin", 2019), ("Lisbon", 2021), ("Porto", 2023)):
        lives(memory, clock, city, d(year))
        recorded.append(clock.now())
    clock.advance(timedelta(days=1))
    memory.retract("Maria", "lives in", at=d(2024))
    for valid_at in (d(2018), d(2020), d(2022), d(2023, 6), d(2024, 3), None):
        for known_at in (*recorded, None):
            hits = memory.search("Maria lives", k=50, valid_at=valid_at, known_at=known_at)
            expected = memory.as_of(valid_at=valid_at, known_at=known_at)
            assert {h.fact.id for h in hits} == {f.id for f in expected}, (valid_at, known_at)


OLD_PHRASES = [
    "{s} lives in {v}.", "{s} is living in {v}.", "{s}'s home is in {v}.", "{s} resides in {v}.",
    "{s} has an apartment in {v}.", "{s} stays in {v}.", "{s} is based in {v}.",
    "{s}'s address is in {v}.", "{s} calls {v} home.", "{s} lives in {v} these days.",
    "Home for {s} is {v}.", "{s} is a resident of {v}.", "{s} rents a flat in {v}.",
    "{s} has settled in {v}.", "{s}'s city is {v}.", "{s} currently lives in {v}.",
    "{s} is at home in {v}.", "{s}'s place is in {v}.", "{s} lives over in {v}.",
    "{s} makes a home in {v}.",
]  # fmt: skip
CITIES = ["Berlin", "Lisbon", "Porto", "Madrid", "Paris", "Oslo", "Vienna", "Prague", "Rome",
          "Dublin", "Athens", "Warsaw", "Zurich", "Munich", "Seville", "Lyon"]  # fmt: skip


FIRST = [
    "Maria",
    "João",
    "Anna",
    "Pedro",
    "Sofia",
    "Liam",
    "Chen",
    "Aisha",
    "Omar",
    "Elena",
    "Tomás",
    "Yuki",
    "Nina",
    "Ravi",
    "Clara",
    "Ivan",
    "Leila",
    "Marco",
    "Zoe",
    "Felix",
]
LAST = ["Silva", "Novak", "Okafor", "Larsen", "Haddad", "Moreau", "Kowalski", "Tanaka",
        "Fischer", "Romero"]  # fmt: skip


def test_current_search_beats_plain_chroma_on_accumulated_stale_copies(
    tmp_path: Path, minilm: MiniLMEmbedder, clock: ManualClock
) -> None:
    """200 keys, the old value said 20 times, the new one once: ours returns only the new."""
    import chromadb

    rng = random.Random(7)
    people = [f"{first} {last}" for first in FIRST for last in LAST]
    facts: list[Fact] = []
    new_city = {}
    for person in people:
        old, new = rng.sample(CITIES, 2)
        new_city[person] = new
        for n, phrase in enumerate(OLD_PHRASES):
            when = d(2020, 1, 1 + n)
            facts.append(Fact(text=phrase.format(s=person, v=old), subject=person,
                              relation="lives in", object=old, valid_from=when))  # fmt: skip
        facts.append(Fact(text=f"{person} moved to {new}.", subject=person, relation="lives in",
                          object=new, valid_from=d(2023)))  # fmt: skip
    all_texts = [f.text for f in facts]
    vectors = dict(zip(all_texts, minilm.embed_documents(all_texts), strict=True))
    cached = CallableEmbedder(lambda ts: [vectors.get(t) or minilm.embed_query(t) for t in ts],
                              name=minilm.name, dimension=minilm.dimension)  # fmt: skip

    plain = chromadb.EphemeralClient().create_collection(
        "plain", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    plain.add(ids=[str(i) for i in range(len(facts))], documents=all_texts,
              embeddings=[vectors[t] for t in all_texts])  # fmt: skip
    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=cached, clock=clock)
    ) as memory:
        memory.add_many(facts)
        plain_stale = ours_new = ours_stale = 0
        for person in people:
            question = f"Where does {person} live?"
            top = plain.query(query_embeddings=[minilm.embed_query(question)], n_results=1)
            plain_stale += new_city[person] not in top["documents"][0][0]
            hits = memory.search(question, k=3)
            mine = [h.fact for h in hits if h.fact.subject == person]
            ours_new += any(f.object == new_city[person] for f in mine)
            ours_stale += any(f.object != new_city[person] for f in mine)
    assert ours_stale == 0
    assert ours_new == 200
    assert plain_stale >= 150, f"plain Chroma's top-1 was stale for {plain_stale}/200 keys"


def test_reopening_keeps_everything_and_reconciles_cheaply(
    tmp_path: Path, minilm: MiniLMEmbedder, clock: ManualClock
) -> None:
    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=minilm, clock=clock)
    ) as memory:
        lives(memory, clock, "Berlin", d(2019))
        lives(memory, clock, "Porto", d(2023))
        # a crash after the ledger commit and before the index write, simulated:
        memory.ledger.write(Fact(text="Maria adopted a cat named Miso.", valid_from=d(2024)))
    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=minilm, clock=clock)
    ) as memory:
        assert memory.reconcile().embedded == 0
        assert texts(memory.search("Where does Maria live?", k=1)) == ["Maria lives in Porto."]
        assert texts(memory.search("Does Maria have a pet?", k=1)) == [
            "Maria adopted a cat named Miso."
        ]


def test_a_folder_from_another_embedder_is_refused(
    tmp_path: Path, minilm: MiniLMEmbedder, clock: ManualClock
) -> None:
    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=minilm, clock=clock)
    ) as memory:
        memory.add("Maria likes tea.")
    with pytest.raises(EmbedderMismatchError):
        TemporalMemory.open(
            tmp_path / "m", config=MemoryConfig(embedder=HashingEmbedder(384, name="other"))
        )
    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=minilm, clock=clock)
    ) as memory:
        assert texts(memory.search("tea")) == ["Maria likes tea."]


def test_open_refuses_a_file_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError, match="path"):
        TemporalMemory.open(tmp_path / "file", config=MemoryConfig(embedder=HashingEmbedder()))


def test_search_skips_the_change_feed_until_a_commit_from_anywhere(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared_core.ledger.sqlite.ledger import SQLiteLedger

    with TemporalMemory.open(
        tmp_path / "m", config=MemoryConfig(embedder=HashingEmbedder(), clock=clock)
    ) as memory:
        memory.add("Maria likes tea.")
        memory.search("tea")
        asked: list[object] = []
        changes = memory.ledger.changes
        monkeypatch.setattr(
            memory.ledger, "changes", lambda *a, **o: asked.append(a) or changes(*a, **o)
        )
        memory.search("tea")
        assert asked == [], "nothing committed: the index is known to be current"
        with SQLiteLedger(tmp_path / "m" / "ledger.sqlite", clock=clock) as other:
            other.write(Fact(text="Maria adopted a cat named Miso."))  # another connection
        assert texts(memory.search("cat Miso", k=1)) == ["Maria adopted a cat named Miso."]
        assert len(asked) >= 1


class LaggingChroma(ChromaIndex):
    """Takes new rows but silently ignores later changes to rows it already holds."""

    def apply(self, records: Any, vectors: Any, cursor: Any) -> None:
        held = self.row_ids()
        super().apply([r for r in records if r.row_id not in held], vectors, cursor)


def test_a_lagging_index_never_surfaces_a_retired_version_as_of_the_past(
    tmp_path: Path, clock: ManualClock
) -> None:
    # an as-of search reads ids alone from Chroma and lets the ledger say which rows are
    # visible: the index's stale belief that Berlin still holds must not leak through
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite", clock=clock)
    index = LaggingChroma(tmp_path / "index")
    with TemporalMemory(
        ledger=ledger, index=index, config=MemoryConfig(embedder=HashingEmbedder(), clock=clock)
    ) as m:
        berlin = lives(m, clock, "Berlin", d(2020))
        lives(m, clock, "Porto", d(2023))
        m.add_many([f"Maria once visited town number {n}." for n in range(40)])
        clock.advance(timedelta(days=1))
        m.correct(berlin, object="Lisbon", text="Maria lives in Lisbon.")
        for valid_at, known_at in ((d(2021), None), (d(2024), None), (d(2021), clock.now())):
            hits = m.search("Maria lives in Berlin.", k=3, valid_at=valid_at, known_at=known_at)
            assert "Maria lives in Berlin." not in texts(hits), (valid_at, known_at)
        assert "Maria lives in Lisbon." in texts(m.search("Maria lives in", k=3, valid_at=d(2021)))


def test_a_past_search_that_lists_the_visible_rows_answers_as_the_filtered_one(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reader lets Chroma ask the ledger for the visible rows (few of them) instead of
    # running a filtered query: the answers must not change, with or without a where
    from shared_core.index import chroma
    from shared_core.ledger.ledger import Ledger

    monkeypatch.setattr(chroma, "OVERFETCH", 1)  # unfiltered answers settle little
    monkeypatch.setattr(chroma, "WIDER", 1)
    listings: list[int | None] = []
    listing = Ledger.list_visible_rows

    def spy(self: Any, **options: Any) -> list[int] | None:
        listed = listing(self, **options)
        listings.append(None if listed is None else len(listed))
        return listed

    monkeypatch.setattr(Ledger, "list_visible_rows", spy)
    ledger = SQLiteLedger(tmp_path / "ledger.sqlite", clock=clock)
    index = ChromaIndex(tmp_path / "index")
    rewrites = "Where is Maria's home?\nWhich city does Maria live in?"
    with TemporalMemory(
        ledger=ledger,
        index=index,
        config=MemoryConfig(
            embedder=HashingEmbedder(), clock=clock, expander=lambda prompt: rewrites
        ),
    ) as m:
        berlin = lives(m, clock, "Berlin", d(2020))
        lives(m, clock, "Porto", d(2023))
        clock.advance(timedelta(days=1))
        m.add_many(
            [f"Maria once visited town number {n}." for n in range(30)],
            metadatas=[{"kind": "trip"}] * 30,
        )
        clock.advance(timedelta(days=1))
        m.correct(berlin, object="Lisbon", text="Maria lives in Lisbon.")
        early = START + timedelta(days=1, hours=12)  # before the trips were recorded
        asked = [
            ({"valid_at": d(2021)}, None),
            ({"valid_at": d(2021), "known_at": early}, None),
            ({"valid_at": d(2024), "known_at": early}, None),
            ({"valid_at": d(2024)}, {"kind": "trip"}),
        ]

        def answers(share: int) -> list[list[str]]:
            monkeypatch.setattr(chroma, "LISTING_SHARE", share)
            return [
                texts(m.search("Maria lives in Berlin.", k=3, where=where, **times))
                for times, where in asked
            ]

        filtered = answers(10**9)  # never lists: every such search filters in Chroma
        listings.clear()
        assert answers(1) == filtered
        assert listings
        assert all(n is not None for n in listings)
        listings.clear()  # three query vectors, one listing: the ledger scans once per search
        expanded = m.search("Maria lives in Berlin.", k=3, valid_at=d(2021), expand=2)
        assert len(listings) == 1
        monkeypatch.setattr(chroma, "LISTING_SHARE", 10**9)
        assert texts(m.search("Maria lives in Berlin.", k=3, valid_at=d(2021), expand=2)) == texts(
            expanded
        )
    assert filtered[1] == ["Maria lives in Berlin."]  # as known before the correction
