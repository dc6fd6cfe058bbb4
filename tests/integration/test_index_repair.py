"""Fault injection on the embedded index (issue 32, items 2 and 3): the index is always rebuilt
from the ledger.

Each seeded trial copies a folder holding acknowledged facts, damages its Chroma ``index/`` one
way, repairs it one way, and checks that the index holds exactly the ledger's rows (and answers
searches as the ledger says: ``index_disagreements``), that no acknowledged fact is lost, that a
damaged index was moved aside and not deleted, and that a new write after the repair is indexed.

Damage kinds: the index's ``chroma.sqlite3`` deleted, one of its HNSW segment folders deleted,
the whole ``index/`` deleted, ``chroma.sqlite3`` truncated, random 4 KiB pages of it overwritten,
and a half-applied batch (facts committed to the ledger, half of them written to the index with
no cursor stored, as a crash inside an index write leaves it). Repairs: reopening the folder
(``TemporalMemory.open`` repairs on open), ``TemporalMemory.repair`` and ``temporal-rag repair``.
The HashingEmbedder stands in for MiniLM: the property is about which rows the index holds.
The figures (trials, kinds, repairs, facts lost) are printed at the end.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from shared_core.cli import commands
from shared_core.embedders.base import HashingEmbedder
from shared_core.facts import Fact
from shared_core.index.chroma import ChromaIndex
from shared_core.memory import MemoryConfig, TemporalMemory
from tests.integration.crash_writer import EMBEDDER_DIMENSION, day, open_memory
from tests.integration.ledger_checks import emit, index_disagreements, lost_ids

TRIALS = 54
SEED = 3232
PAGE = 4096


def _delete_sqlite(folder: Path, rng: random.Random) -> None:
    (folder / "index" / "chroma.sqlite3").unlink()


def _delete_segment(folder: Path, rng: random.Random) -> None:
    segments = sorted(p for p in (folder / "index").iterdir() if p.is_dir())
    shutil.rmtree(rng.choice(segments))


def _delete_index(folder: Path, rng: random.Random) -> None:
    shutil.rmtree(folder / "index")


def _truncate(folder: Path, rng: random.Random) -> None:
    path = folder / "index" / "chroma.sqlite3"
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(rng.randrange(0, size))


def _overwrite_pages(folder: Path, rng: random.Random) -> None:
    path = folder / "index" / "chroma.sqlite3"
    pages = path.stat().st_size // PAGE
    with path.open("r+b") as handle:
        for page in rng.sample(range(pages), k=min(pages, rng.randint(1, 16))):
            handle.seek(page * PAGE)
            handle.write(rng.randbytes(PAGE) if rng.random() < 0.5 else bytes(PAGE))


def _half_applied_batch(folder: Path, rng: random.Random) -> list[str]:
    """Facts committed to the ledger; half of their rows written to the index, no cursor."""
    with open_memory(folder) as memory:
        facts = [
            Fact(
                text=f"Aiko lives in town{n} (batch note {rng.random():.6f})",
                subject="Aiko",
                relation="lives in",
                object=f"town{n}",
                valid_from=day(100 + n),
            )
            for n in range(rng.randint(4, 12))
        ]
        results = memory.ledger.write_many(facts)
        index = memory.index
        assert isinstance(index, ChromaIndex)
        page = memory.ledger.changes(index.cursor())
        half = page.records[: max(1, len(page.records) // 2)]
        vectors = dict(
            zip(
                (r.fact_id for r in half),
                memory.embedder.embed_documents([r.text for r in half]),
                strict=True,
            )
        )
        with index._lock:  # the inside of apply(): rows written, the cursor not stored
            index._write(half, vectors)
    return [w.fact.id for w in results if w.fact is not None]


Damage = Callable[[Path, random.Random], "list[str] | None"]
KINDS: dict[str, Damage] = {
    "delete chroma.sqlite3": _delete_sqlite,
    "delete a segment": _delete_segment,
    "delete index/": _delete_index,
    "truncate chroma.sqlite3": _truncate,
    "overwrite pages": _overwrite_pages,
    "half-applied batch": _half_applied_batch,
}


def _reopen(folder: Path) -> str | None:
    with open_memory(folder):
        pass
    return None


def _repair(folder: Path) -> str | None:
    config = MemoryConfig(embedder=HashingEmbedder(EMBEDDER_DIMENSION))
    return TemporalMemory.repair(folder, config=config).moved_to


def _cli(folder: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    monkeypatch.setattr(
        commands, "repair_embedder", lambda name: HashingEmbedder(EMBEDDER_DIMENSION)
    )
    assert commands.main(["repair", str(folder), "--embedder", "test"]) == 0
    return None


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("repair") / "base"
    acked: list[str] = []
    with open_memory(folder) as memory:
        for n in range(25):
            acked += memory.add(
                f"Maria lives in city{n} (note {n})",
                subject="Maria",
                relation="lives in",
                object=f"city{n}",
                valid_from=day(n),
            ).fact_ids
        acked += [
            i
            for added in memory.add_many([f"Remember item {n}: plain prose." for n in range(40)])
            for i in added.fact_ids
        ]
        acked += memory.add(
            "Jonas likes tea.", subject="Jonas", relation="likes", object="tea"
        ).fact_ids
    return folder, acked


def test_a_damaged_index_is_rebuilt_from_the_ledger_and_no_fact_is_lost(
    base: tuple[Path, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pytestconfig: pytest.Config,
) -> None:
    source, acked_base = base
    rng = random.Random(SEED)
    kinds, repairs, moved_aside, lost, failures = Counter[str](), Counter[str](), 0, 0, []
    for trial in range(TRIALS):
        kind = list(KINDS)[trial % len(KINDS)]
        how = ("reopen", "repair", "cli")[rng.randrange(3)]
        folder = tmp_path / f"trial{trial}"
        shutil.copytree(source, folder)
        acked = acked_base + (KINDS[kind](folder, rng) or [])
        if how == "reopen":
            _reopen(folder)
        elif how == "repair":
            _repair(folder)
        else:
            _cli(folder, monkeypatch)
        moved = sorted(p.name for p in folder.iterdir() if p.name.startswith("index.damaged-"))
        moved_aside += len(moved)
        with open_memory(folder) as memory:
            acked += memory.add(
                "Tom lives in Oslo.", subject="Tom", relation="lives in", object="Oslo"
            ).fact_ids
            _, versions = memory.ledger.export()
            problems = index_disagreements(memory, versions, rng)
            missing = lost_ids(memory, acked)
        lost += len(missing)
        kinds[kind] += 1
        if problems or missing:
            failures.append(f"trial {trial} ({kind}, {how}): {problems[:3]} lost {missing[:3]}")
        else:
            repairs[how] += 1
        shutil.rmtree(folder)
    summary = (
        f"index repair: {TRIALS} trials (seed {SEED}); kinds {dict(kinds)}; repairs that "
        f"succeeded {sum(repairs.values())} ({dict(repairs)}); damaged indexes moved aside "
        f"{moved_aside}; acknowledged facts lost {lost}"
    )
    emit(pytestconfig, [summary])
    assert lost == 0, summary
    assert not failures, summary + "\n" + "\n".join(failures)


def test_repair_moves_an_unreadable_index_aside_and_names_where(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder) as memory:
        memory.add("Maria lives in Lisbon.", subject="Maria", relation="lives in", object="Lisbon")
    _truncate(folder, random.Random(1))
    report = TemporalMemory.repair(
        folder, config=MemoryConfig(embedder=HashingEmbedder(EMBEDDER_DIMENSION))
    )
    assert report.moved_to is not None
    assert Path(report.moved_to).parent == folder
    assert (Path(report.moved_to) / "chroma.sqlite3").exists()  # set aside, not deleted
    with open_memory(folder) as memory:
        assert [h.fact.object for h in memory.search("Where does Maria live?", k=1)] == ["Lisbon"]


def test_open_on_an_unreadable_index_logs_the_repair(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder) as memory:
        memory.add("Maria lives in Lisbon.", subject="Maria", relation="lives in", object="Lisbon")
    _truncate(folder, random.Random(2))
    with caplog.at_level("WARNING"), open_memory(folder) as memory:
        assert [f.object for f in memory.as_of()] == ["Lisbon"]
    assert "moved it to" in caplog.text
    assert "index.damaged-" in caplog.text


def test_index_sync_error_no_longer_advises_a_reconcile_that_cannot_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared_core.errors import IndexSyncError, VectorIndexError

    def broken(*args: object, **kwargs: object) -> None:
        try:
            raise OSError("database disk image is malformed")
        except OSError as exc:
            raise VectorIndexError(f"Chroma could not apply records: {exc}") from exc

    with open_memory(tmp_path / "memory") as memory:
        monkeypatch.setattr(ChromaIndex, "apply", broken)
        with pytest.raises(IndexSyncError) as raised:
            memory.add(
                "Maria lives in Porto.", subject="Maria", relation="lives in", object="Porto"
            )
        monkeypatch.undo()
        assert "reconcile() brings the index up to date" not in str(raised.value)
        assert "reconcile(full=True) moves the damaged index aside" in str(raised.value)
        assert memory.reconcile(full=True).applied >= 1  # the advice works
        assert [f.object for f in memory.as_of(subject="Maria")] == ["Porto"]
