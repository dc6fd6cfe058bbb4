"""One process per embedded folder: an operating-system lock on ``FOLDER/writer.lock``.

``TemporalMemory.open`` takes it before it opens anything and keeps it while the memory is
open. It is an advisory, non-blocking lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows)
that the operating system drops when its holder closes the file or dies: a crashed holder never
needs a timeout, and no timeout could let two writers in. A second process is refused at once
with :class:`~shared_core.errors.FolderInUseError`.

Within one process the memories of one folder share the lock (counted; the last release drops
it): they share Chroma's client of that folder too. A child made by ``fork`` inherits the
parent's open lock file; it closes its copy (never unlocking the parent's) and must take the
lock anew, which the parent still holds.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

from shared_core.errors import FolderInUseError

LOCK_FILE = "writer.lock"
"""The lock file's name in the folder; it holds the holder's process id, for the message."""


@dataclass(slots=True)
class _Held:
    fd: int
    count: int


_held: dict[str, _Held] = {}
_guard = threading.Lock()
_fork_hook = False


class FolderLock:
    """This process's hold on a folder's lock; :meth:`release` (or garbage collection) gives
    it back. Build one with :meth:`acquire`."""

    __slots__ = ("__weakref__", "_finalizer", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._finalizer = weakref.finalize(self, _release, path)

    @classmethod
    def acquire(cls, folder: str | os.PathLike[str]) -> FolderLock:
        """Lock ``folder`` (an existing directory) for this process, or raise
        FolderInUseError naming the process that holds it."""
        path = os.path.realpath(Path(folder) / LOCK_FILE)
        with _guard:
            _forget_after_fork()
            held = _held.get(path)
            if held is not None:
                held.count += 1
                return cls(path)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not _try_lock(fd):
                    raise FolderInUseError(str(Path(folder)), _holder(fd))
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except BaseException:
                os.close(fd)
                raise
            _held[path] = _Held(fd, 1)
            return cls(path)

    def release(self) -> None:
        """Give the hold back (idempotent); the lock drops with this process's last hold."""
        self._finalizer()

    @property
    def held(self) -> bool:
        """Whether this hold was not released yet."""
        return self._finalizer.alive


def _release(path: str) -> None:
    with _guard:
        held = _held.get(path)
        if held is None:  # forgotten after a fork: the parent's lock is not ours to drop
            return
        held.count -= 1
        if held.count == 0:
            del _held[path]
            os.close(held.fd)  # closing drops the lock (flock and msvcrt alike)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> int | None:
    """The process id the lock file names, when it names one."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):  # pragma: no cover - Windows locks the byte
        return None
    return int(text) if text.isdigit() else None


def _forget_after_fork() -> None:
    """Register, once, the hook that drops a forked child's copies of the parent's holds."""
    global _fork_hook
    if not _fork_hook and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forget_inherited)
        _fork_hook = True


def _forget_inherited() -> None:
    # Closing the child's descriptor leaves the parent's lock alone (flock locks belong to the
    # open file, which the parent still has); unlocking here would drop the parent's lock.
    global _guard
    _guard = threading.Lock()
    for held in _held.values():
        with contextlib.suppress(OSError):
            os.close(held.fd)
    _held.clear()
