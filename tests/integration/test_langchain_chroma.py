"""The contrast the adapter exists for, on real Chroma and the real MiniLM.

Six people each moved once; the old city is mentioned three times (2019-2021), the new one once
(2023). A plain ``langchain_chroma.Chroma`` retriever serves mostly stale versions; the
TemporalRetriever over the same Documents serves only current ones; and the
TemporalDocumentCompressor behind that same Chroma retriever removes the stale chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest
from langchain_chroma import Chroma
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document

from langchain_temporal import CoreEmbeddings, TemporalDocumentCompressor, TemporalRetriever
from shared_core.clock import ManualClock
from shared_core.embedders.base import CallableEmbedder
from shared_core.embedders.minilm import MiniLMEmbedder
from shared_core.extractors.metadata import MetadataExtractor
from shared_core.memory import MemoryConfig, TemporalMemory

K = 4
MOVES = {  # person: (old city, new city)
    "Maria": ("Berlin", "Lisbon"),
    "João": ("Porto", "Madrid"),
    "Ana": ("Vienna", "Prague"),
    "Luis": ("Seville", "Dublin"),
    "Eva": ("Oslo", "Zurich"),
    "Tom": ("Leeds", "Glasgow"),
}
OLD_PHRASES = (
    (2019, "{person} lives in {city}."),
    (2020, "{person} still lives in {city}."),
    (2021, "{person} has a flat in {city} and lives there."),
)


def timeline() -> list[Document]:
    documents = []
    for person, (old, new) in MOVES.items():
        for year, phrase in OLD_PHRASES:
            documents.append(fact(person, old, phrase.format(person=person, city=old), year))
        documents.append(fact(person, new, f"{person} moved to {new}.", 2023))
    return documents


def fact(person: str, city: str, text: str, year: int) -> Document:
    when = datetime(year, 3, 1, tzinfo=UTC)
    metadata = {"subject": person, "relation": "lives in", "object": city}
    # Chroma keeps str/int/float metadata: half the timestamps as ISO strings, half as epochs
    stamp: str | int = when.isoformat() if year % 2 else int(when.timestamp())
    return Document(text, metadata={**metadata, "timestamp": stamp}, id=f"{person}-{year}")


def question(person: str) -> str:
    return f"Where does {person} live?"


@pytest.fixture(scope="module")
def embedder() -> CallableEmbedder:
    """The real MiniLM, each text embedded once across Chroma and the memory."""
    minilm = MiniLMEmbedder()
    cache: dict[str, list[float]] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        missing = [text for text in dict.fromkeys(texts) if text not in cache]
        if missing:
            cache.update(zip(missing, minilm.embed_documents(missing), strict=True))
        return [cache[text] for text in texts]

    return CallableEmbedder(
        embed, name=minilm.name, dimension=minilm.dimension, embed_query=minilm.embed_query
    )


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory, embedder: CallableEmbedder) -> Chroma:
    store = Chroma(
        collection_name="timeline",
        embedding_function=CoreEmbeddings(embedder),  # never Chroma's downloading default
        persist_directory=str(tmp_path_factory.mktemp("chroma")),
    )
    store.add_documents(timeline())
    return store


@pytest.fixture(scope="module")
def memory(
    tmp_path_factory: pytest.TempPathFactory, embedder: CallableEmbedder
) -> Iterator[TemporalMemory]:
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    with TemporalMemory.open(
        tmp_path_factory.mktemp("memory"),
        config=MemoryConfig(
            embedder=embedder,
            extractor=MetadataExtractor(valid_from_field="timestamp"),
            clock=clock,
            durability="normal",
        ),
    ) as memory:
        TemporalRetriever(memory=memory).add_documents(timeline())
        yield memory


def tally(person: str, documents: Sequence[Document]) -> tuple[int, int]:
    """(stale, current) versions of ``person``'s city among ``documents``."""
    old, new = MOVES[person]
    mine = [doc.metadata["object"] for doc in documents if doc.metadata["subject"] == person]
    return mine.count(old), mine.count(new)


def totals(retrieve: dict[str, list[Document]]) -> tuple[int, int]:
    pairs = [tally(person, documents) for person, documents in retrieve.items()]
    return sum(stale for stale, _ in pairs), sum(current for _, current in pairs)


def test_plain_chroma_serves_mostly_stale_versions(chroma: Chroma) -> None:
    retriever = chroma.as_retriever(search_kwargs={"k": K})
    stale, current = totals({p: retriever.invoke(question(p)) for p in MOVES})
    assert (stale, current) == (18, 6)  # every query: its 3 stale chunks and the current one


async def test_the_temporal_retriever_serves_only_current_versions(
    memory: TemporalMemory,
) -> None:
    versions = [len(memory.history(person, "lives in")) for person in MOVES]
    assert versions == [2] * len(MOVES)  # 24 Documents: the repeats reinforce, the moves supersede
    retriever = TemporalRetriever(memory=memory, k=K)
    answers = {p: retriever.invoke(question(p)) for p in MOVES}
    assert totals(answers) == (0, 6)
    assert all(len(documents) == K for documents in answers.values())  # k visible results
    assert {d.metadata["status"] for docs in answers.values() for d in docs} == {"current"}
    assert {p: await retriever.ainvoke(question(p)) for p in MOVES} == answers
    history = retriever.invoke(question("Maria"), include_history=True, k=2)
    assert [d.metadata["object"] for d in history] == ["Berlin", "Lisbon"]  # the past on request


async def test_the_compressor_removes_the_stale_chunks_chroma_returned(chroma: Chroma) -> None:
    retriever = ContextualCompressionRetriever(
        base_compressor=TemporalDocumentCompressor(timestamp_key="timestamp"),  # the user's field
        base_retriever=chroma.as_retriever(search_kwargs={"k": K}),
    )
    answers = {p: retriever.invoke(question(p)) for p in MOVES}
    assert totals(answers) == (0, 6)
    removed = [len(d.metadata["shadows"]) for docs in answers.values() for d in docs]
    assert sum(removed) == 18  # each current chunk reports the three it outdated
    assert {p: await retriever.ainvoke(question(p)) for p in MOVES} == answers
