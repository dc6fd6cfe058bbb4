"""Copies an SQLite ledger's write-ahead log back into its file, on a thread of its own.

SQLite's automatic checkpoint runs inside the commit that crosses its mark: that writer copies
every page the log holds into the file and syncs the file before its ``write`` returns. At a
million versions those pages are many and scattered (each write touches index pages at random
places), so the copy costs a writer more as the ledger grows. A :class:`WalCheckpointer` does
the copy beside the writers instead: a commit only wakes it, and it runs a ``PASSIVE``
checkpoint (which never waits for, nor blocks, readers and writers) at most every
``interval`` seconds while commits come in. SQLite's own checkpoint stays on, at a higher mark
(:data:`SET_BACKSTOP`), for when this thread falls behind; it then finds most pages copied.
A checkpoint is crash-safe wherever it stops (SQLite's design), so nothing here can lose a
committed write.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

SET_BACKSTOP = "PRAGMA wal_autocheckpoint=4000"
"""SQLite's own checkpoint mark beside the thread: 4,000 pages of log (16 MB)."""


class WalCheckpointer:
    """A thread that checkpoints the ledger file at ``path`` after commits (started by the
    first :meth:`wake`, stopped by :meth:`close`)."""

    def __init__(self, path: Path, *, full: bool, interval: float = 0.05) -> None:
        self._path = path
        self._full = full  # sync as the writers do (a checkpoint syncs the file either way)
        self._interval = interval
        self._woken = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self.checkpoints = 0
        """How many checkpoints the thread has run."""

    def wake(self) -> None:
        """A commit added to the log: checkpoint soon."""
        if self._thread is None:
            with self._start:
                if self._thread is None and not self._stopping.is_set():
                    self._thread = threading.Thread(
                        target=self._run, name=f"temporal-rag checkpoint {self._path.name}"
                    )
                    self._thread.daemon = True  # an unclosed ledger must not hold the process
                    self._thread.start()
        self._woken.set()

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is in, if any)."""
        with self._start:
            self._stopping.set()
            self._woken.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    @property
    def running(self) -> bool:
        """Whether the thread is alive (from the first commit until :meth:`close`)."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False, timeout=0
            )
        except sqlite3.Error:
            return  # the writers' own checkpoint (SET_BACKSTOP) still runs
        try:
            conn.execute("PRAGMA synchronous=FULL" if self._full else "PRAGMA synchronous=NORMAL")
            while True:
                self._woken.wait()
                if self._stopping.is_set():
                    return
                self._woken.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.OperationalError:
                    pass  # busy (another process checkpoints): again at the next wake
                if self._stopping.wait(self._interval):  # lets commits gather meanwhile
                    return
        except sqlite3.Error:
            return  # a damaged or vanished file: the writers see it and report it
        finally:
            conn.close()


__all__ = ["SET_BACKSTOP", "WalCheckpointer"]
