"""Opening an embedded folder (``TemporalMemory.open``): its lock, and its index repaired.

The folder holds ``ledger.sqlite`` (the source of truth), the Chroma ``index/`` (its mirror)
and ``writer.lock`` (:mod:`shared_core.memory.folder_lock`). The lock is taken before anything
is opened. An index that cannot be read (files deleted, truncated or overwritten) is moved
aside, never deleted, as ``index.damaged-<UTC time>``, and rebuilt from the ledger; a warning
is logged naming where it went.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shared_core.errors import VectorIndexError
from shared_core.index.base import SetAsideIndex
from shared_core.index.chroma_client import set_aside
from shared_core.memory.config import MemoryConfig
from shared_core.memory.folder_lock import FolderLock
from shared_core.memory.index_mirror import storage_failure

if TYPE_CHECKING:
    from shared_core.memory.memory import TemporalMemory

logger = logging.getLogger(__name__)

LEDGER_FILE = "ledger.sqlite"
INDEX_FOLDER = "index"

Connect = Callable[[Path, Path, MemoryConfig], "TemporalMemory"]
"""Builds the memory over a ledger file and an index folder (``TemporalMemory.connect``)."""


def open_folder(
    folder: Path, config: MemoryConfig, connect: Connect
) -> tuple[TemporalMemory, FolderLock, Path | None]:
    """The memory of ``folder`` (an existing directory), the lock it holds, and where a
    damaged index was moved (None: it was readable). With ``config.reconcile`` off the index
    is neither checked nor repaired."""
    lock = FolderLock.acquire(folder)
    try:
        memory, moved = _open_repaired(folder, config, connect)
    except BaseException:
        lock.release()
        raise
    return memory, lock, moved


def _open_repaired(
    folder: Path, config: MemoryConfig, connect: Connect
) -> tuple[TemporalMemory, Path | None]:
    ledger, index = folder / LEDGER_FILE, folder / INDEX_FOLDER
    try:
        memory = connect(ledger, index, config)
    except VectorIndexError as exc:  # the index cannot be opened or caught up
        if not (config.reconcile and storage_failure(exc)):
            raise
        moved = _set_aside(folder, index, exc)
        try:
            return connect(ledger, index, config), moved  # the new index is built on open
        except Exception as again:
            raise VectorIndexError(
                f"the index of {folder} could not be read and was moved to {moved}, but "
                f"rebuilding it from the ledger failed ({again}); the ledger is intact: once "
                f"the cause is fixed, open the folder again or run `temporal-rag repair {folder}`"
            ) from again
    if not (config.reconcile and isinstance(memory.index, SetAsideIndex)):
        return memory, None
    try:
        memory.index.check()
    except VectorIndexError as exc:
        if not storage_failure(exc):
            memory.close()
            raise
        try:
            report = memory.reconcile(full=True)  # moves it aside, logs, rebuilds
        except BaseException:
            memory.close()
            raise
        return memory, None if report.moved_to is None else Path(report.moved_to)
    return memory, None


def _set_aside(folder: Path, index: Path, damage: Exception) -> Path:
    try:
        moved = set_aside(index, now=datetime.now(UTC))
    except OSError as exc:
        raise VectorIndexError(
            f"the index of {folder} cannot be read ({damage}) and could not be moved aside "
            f"({exc}); the ledger is intact: free the folder (permissions, disk space), then "
            f"open it again or run `temporal-rag repair {folder}`"
        ) from exc
    logger.warning(
        "the index of %s could not be read (%s); moved it to %s and rebuilding it from the ledger",
        folder,
        damage,
        moved,
    )
    return moved
