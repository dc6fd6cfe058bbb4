"""MemoryConfig, the one value for building a memory (TemporalMemory, open, connect and every
adapter's open), and the owned-memory helper of the adapter toolkit."""

from __future__ import annotations

import inspect
import pickle
from dataclasses import FrozenInstanceError, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_temporal import TemporalStore
from langchain_temporal import TemporalVectorStore as LangChainVectorStore
from llamaindex_temporal import TemporalVectorStore as LlamaIndexVectorStore
from shared_core import MemoryConfig as ExportedConfig
from shared_core.adapter_toolkit import MemoryOwner, owning
from shared_core.clock import ManualClock, SystemClock
from shared_core.embedders.base import HashingEmbedder
from shared_core.errors import InvalidInputError
from shared_core.extractors.metadata import MetadataExtractor
from shared_core.index.numpy_index import NumpyIndex
from shared_core.judging import JudgeChain, Judgement, WriteBatch
from shared_core.ledger import InMemoryLedger
from shared_core.memory import MemoryConfig, TemporalMemory

BUILDING = (
    "embedder",
    "extractor",
    "clock",
    "expander",
    "prose_judge",
    "speaker_field",
    "durability",
    "recency_capacity",
    "reconcile",
)


def test_it_holds_every_option_of_building_a_memory_and_is_exported() -> None:
    assert ExportedConfig is MemoryConfig
    assert {field.name for field in fields(MemoryConfig)} == set(BUILDING)
    config = MemoryConfig()
    assert (config.embedder, config.extractor, config.clock, config.prose_judge) == (None,) * 4
    assert (config.durability, config.recency_capacity, config.reconcile) == ("full", 8, True)
    assert config.speaker_field == "user_id"


def test_it_is_frozen_and_keyword_only() -> None:
    config = MemoryConfig(recency_capacity=3)
    with pytest.raises(FrozenInstanceError):
        config.recency_capacity = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        MemoryConfig(HashingEmbedder())  # type: ignore[misc]
    changed = replace(config, durability="normal")
    assert (changed.durability, changed.recency_capacity) == ("normal", 3)


@pytest.mark.parametrize(
    ("options", "field", "fix"),
    [
        ({"durability": "fast"}, "durability", "'full' or 'normal'"),
        ({"recency_capacity": 0}, "recency_capacity", "e.g. 8"),
        ({"recency_capacity": -1}, "recency_capacity", "e.g. 8"),
        ({"recency_capacity": 1.5}, "recency_capacity", "e.g. 8"),
        ({"recency_capacity": True}, "recency_capacity", "e.g. 8"),
        ({"prose_judge": "kapa"}, "prose_judge", '"kappa"'),
        ({"prose_judge": object()}, "prose_judge", "any Judge"),
        ({"prose_judge": ()}, "prose_judge", "one or more judges"),
        ({"prose_judge": ("kappa", object())}, "prose_judge[1]", "a tuple of those"),
        ({"prose_judge": ["kappa", "kapa"]}, "prose_judge[1]", '"kappa"'),
        ({"speaker_field": ""}, "speaker_field", '"user_id"'),
        ({"speaker_field": 3}, "speaker_field", "pass None"),
    ],
)
def test_a_bad_option_is_refused_when_built_naming_the_field_and_the_fix(
    options: dict[str, Any], field: str, fix: str
) -> None:
    with pytest.raises(InvalidInputError) as error:
        MemoryConfig(**options)
    assert error.value.field == field
    assert fix in str(error.value)
    with pytest.raises(InvalidInputError):  # replace builds a new value: checked again
        replace(MemoryConfig(), **options)


def test_a_memory_refuses_a_config_of_another_type() -> None:
    with pytest.raises(InvalidInputError) as error:
        TemporalMemory(
            ledger=InMemoryLedger(),
            index=NumpyIndex(),
            config={"embedder": HashingEmbedder()},  # type: ignore[arg-type]
        )
    assert error.value.field == "config"


def test_a_picklable_config_pickles_as_its_options() -> None:
    config = MemoryConfig(
        embedder=HashingEmbedder(16),
        clock=SystemClock(),
        prose_judge="kappa",
        durability="normal",
        recency_capacity=3,
        reconcile=False,
    )
    copy = pickle.loads(pickle.dumps(config))
    assert isinstance(copy.embedder, HashingEmbedder)
    assert (copy.embedder.name, copy.embedder.dimension) == (HashingEmbedder(16).name, 16)
    assert isinstance(copy.clock, SystemClock)
    assert (copy.prose_judge, copy.durability, copy.recency_capacity, copy.reconcile) == (
        "kappa",
        "normal",
        3,
        False,
    )


def test_the_memory_builds_what_the_config_leaves_out() -> None:
    embedder = HashingEmbedder(32)
    with TemporalMemory(
        ledger=InMemoryLedger(), index=NumpyIndex(), config=MemoryConfig(embedder=embedder)
    ) as memory:
        assert memory.embedder is embedder
        assert isinstance(memory.extractor, MetadataExtractor)
        assert isinstance(memory.clock, SystemClock)
        assert memory.prose_judge is None


def test_every_way_of_building_a_memory_takes_the_one_value() -> None:
    def keywords(function: Any) -> list[str]:
        return [name for name in inspect.signature(function).parameters if name != "self"]

    assert keywords(TemporalMemory.__init__) == ["ledger", "index", "config"]
    assert keywords(TemporalMemory.open) == ["path", "config"]
    assert keywords(TemporalMemory.connect) == ["ledger", "index", "schema", "prefix", "config"]
    assert keywords(TemporalStore.open) == ["path", "index", "config"]
    assert keywords(LlamaIndexVectorStore.open) == ["path", "namespace", "config"]
    assert "config" in keywords(LangChainVectorStore.from_texts)


# --------------------------------------------------------------------------- owned memories
class Adapter:
    def __init__(self, memory: TemporalMemory) -> None:
        self.memory_owner = MemoryOwner(memory)


def hashing_memory() -> TemporalMemory:
    config = MemoryConfig(embedder=HashingEmbedder(16))
    return TemporalMemory(ledger=InMemoryLedger(), index=NumpyIndex(), config=config)


def test_an_adapter_closes_only_a_memory_it_owns(monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[TemporalMemory] = []
    monkeypatch.setattr(TemporalMemory, "close", lambda self: closed.append(self))
    given, opened = hashing_memory(), hashing_memory()
    Adapter(given).memory_owner.close()
    assert closed == []
    adapter = owning(opened, Adapter)
    assert adapter.memory_owner.owns
    adapter.memory_owner.close()
    assert closed == [opened]


def test_a_memory_is_closed_when_building_its_adapter_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[TemporalMemory] = []
    monkeypatch.setattr(TemporalMemory, "close", lambda self: closed.append(self))
    memory = hashing_memory()

    def broken(memory: TemporalMemory) -> Adapter:
        raise InvalidInputError("index", "is bad", "fix it")

    with pytest.raises(InvalidInputError):
        owning(memory, broken)
    assert closed == [memory]


OPENERS: dict[str, Any] = {  # each fails after opening its memory: a namespace or dims refused
    "langgraph": lambda path, config: TemporalStore.open(path, index={"dims": 3}, config=config),
    "llamaindex": lambda path, config: LlamaIndexVectorStore.open(
        path, namespace="", config=config
    ),
    "langchain": lambda path, config: LangChainVectorStore.from_texts(
        ["tea"], DeterministicFakeEmbedding(size=8), path=path, config=config, namespace=""
    ),
}


@pytest.mark.parametrize("adapter", sorted(OPENERS))
def test_every_adapter_open_closes_its_memory_when_building_fails(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[TemporalMemory] = []
    real_close = TemporalMemory.close

    def close(self: TemporalMemory) -> None:
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(TemporalMemory, "close", close)
    config = MemoryConfig(embedder=HashingEmbedder(16))
    if adapter == "langchain":
        config = MemoryConfig()  # the store embeds with the LangChain embedding it is given
    with pytest.raises(InvalidInputError):
        OPENERS[adapter](tmp_path, config)
    assert len(closed) == 1


def test_from_texts_builds_its_memory_as_the_config_says_and_embeds_with_embedding() -> None:
    clock = ManualClock(datetime(2024, 6, 1, tzinfo=UTC))
    embedding = DeterministicFakeEmbedding(size=8)
    config = MemoryConfig(clock=clock, recency_capacity=2)
    store = LangChainVectorStore.from_texts(["tea"], embedding, config=config)
    assert store.memory.clock is clock
    assert store.embeddings is embedding
    assert store.memory_owner.owns
    with pytest.raises(InvalidInputError) as error:
        LangChainVectorStore.from_texts(
            ["tea"], embedding, config=MemoryConfig(embedder=HashingEmbedder(8))
        )
    assert error.value.field == "config.embedder"
    with pytest.raises(InvalidInputError) as error:
        LangChainVectorStore.from_texts(["tea"], embedding, memory=store.memory, config=config)
    assert error.value.field == "config"
    store.close()


def test_an_opened_llamaindex_store_pickles_as_its_folder_and_config(tmp_path: Path) -> None:
    config = MemoryConfig(embedder=HashingEmbedder(16), durability="normal")
    store = LlamaIndexVectorStore.open(tmp_path, namespace="maria", config=config)
    blob = pickle.dumps(store)
    store.close()
    copy = pickle.loads(blob)
    assert copy.namespace == "maria"
    assert copy.memory.embedder.name == HashingEmbedder(16).name
    assert copy.memory_owner.owns
    copy.close()


class _Unchanged:
    """A Judge that writes every statement as planned."""

    def judge(self, batch: WriteBatch) -> Judgement:
        return Judgement.unchanged(batch)


def test_prose_judge_takes_any_judge_and_chains_a_sequence() -> None:
    one, two = _Unchanged(), _Unchanged()
    config = MemoryConfig(embedder=HashingEmbedder(16), prose_judge=[one, two])
    assert config.prose_judge == (one, two)  # a list is kept as a tuple (frozen)
    with TemporalMemory(ledger=InMemoryLedger(), index=NumpyIndex(), config=config) as memory:
        assert memory.prose_judge == JudgeChain((one, two))
    single = MemoryConfig(embedder=HashingEmbedder(16), prose_judge=one)
    with TemporalMemory(ledger=InMemoryLedger(), index=NumpyIndex(), config=single) as memory:
        assert memory.prose_judge is one
