"""One process per embedded folder (issue 32, item 1): a second process is refused while the
first holds the folder, and the lock goes with close and with a killed holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shared_core.errors import FolderInUseError
from tests.integration.crash_writer import open_memory

HOLDER = textwrap.dedent(
    """
    import sys
    from tests.integration.crash_writer import open_memory
    memory = open_memory(sys.argv[1])
    print("open", flush=True)
    sys.stdin.readline()
    memory.close()
    print("closed", flush=True)
    sys.stdin.readline()
    """
)


def _holder(folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "open"
    return child


def _stop(child: subprocess.Popen[str]) -> None:
    child.kill()
    child.communicate()  # waits and closes the pipes


def test_a_second_process_opening_the_folder_is_refused_not_let_in(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    child = _holder(folder)
    try:
        with pytest.raises(FolderInUseError) as refused:
            open_memory(folder)
        assert refused.value.holder == child.pid
        assert isinstance(refused.value, BlockingIOError)
        assert "TemporalMemory.connect(" in str(refused.value)
        assert "postgresql://" in str(refused.value)
        assert str(child.pid) in str(refused.value)
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "closed"
        with open_memory(folder) as memory:  # released by close, the process still alive
            memory.add("Maria is here.", subject="Maria", relation="lives in", object="Porto")
    finally:
        _stop(child)


def test_a_killed_holder_releases_the_folder_without_a_timeout(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    child = _holder(folder)
    with pytest.raises(FolderInUseError):
        open_memory(folder)
    os.kill(child.pid, signal.SIGKILL)
    _stop(child)
    with open_memory(folder) as memory:
        assert memory.as_of() == []


def test_memories_of_one_folder_in_one_process_share_the_lock(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder) as first, open_memory(folder) as second:
        first.add("Maria lives in Porto.", subject="Maria", relation="lives in", object="Porto")
        assert [f.object for f in second.as_of()] == ["Porto"]
    child = _holder(folder)  # both closed: the lock is free for another process
    _stop(child)


def test_a_forked_child_does_not_inherit_the_parents_lock(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder):
        pid = os.fork()
        if pid == 0:  # the child: refused, and closing its copy leaves the parent's lock
            from shared_core.memory.folder_lock import FolderLock

            try:
                FolderLock.acquire(folder)
            except FolderInUseError:
                os._exit(0)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        refused = subprocess.run(  # the parent still holds the lock after the child exited
            [sys.executable, "-c", HOLDER, str(folder)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert refused.returncode != 0
        assert "FolderInUseError" in refused.stderr
