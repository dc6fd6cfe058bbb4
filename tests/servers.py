"""Real servers for the tests, started on loopback in a temporary folder and stopped after.

``postgres_server()`` runs a throwaway PostgreSQL cluster (Debian's ``postgresql`` package, or
any ``initdb``/``pg_ctl`` on PATH). A test module asks for it through the ``postgres_url``
fixture (conftest.py at the root): when no server can start, the tests skip with the reason on a
developer's machine and fail under CI (``CI`` set), so a CI run never passes by skipping them.
``TEMPORAL_RAG_POSTGRES_URL`` points the tests at a server of your own instead.
``chroma_server()`` runs ``chroma run`` (it ships with chromadb) on a folder of its own, for the
``chroma_url`` fixture (``TEMPORAL_RAG_CHROMA_URL``: a server of your own).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 60.0
_CHROMA_PIDS: dict[str, int] = {}  # URL -> process id of each chroma_server() running


def unavailable(reason: str) -> None:
    """Skip with ``reason`` on a developer's machine; fail under CI, which must run them."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"CI must run the server tests, but: {reason}")
    pytest.skip(reason)


class ServerUnavailableError(RuntimeError):
    """A server the tests need could not start here (the message says why)."""


def _pg_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    if candidates:
        return candidates[0]
    raise ServerUnavailableError(
        f"PostgreSQL's {name} is not installed: `apt-get install postgresql` (make test does "
        "this as root), or set TEMPORAL_RAG_POSTGRES_URL to a server of your own"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_server_user(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the ``postgres`` user then."""
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        raise ServerUnavailableError("running as root without runuser: cannot start PostgreSQL")
    return [runuser, "-u", "postgres", "--", *command]


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise ServerUnavailableError(f"{what} failed ({done.returncode}): {done.stderr.strip()}")


class PostgresCluster:
    """A running throwaway cluster: its URL, and a crash-like restart for reliability tests."""

    def __init__(self, pg_ctl: str, data: Path, log: Path, options: str, url: str) -> None:
        self._pg_ctl, self._data, self._log, self._options = pg_ctl, data, log, options
        self.url = url

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server (``immediate``: no checkpoint, as a crash would leave it)."""
        subprocess.run(
            _as_server_user([self._pg_ctl, "-D", str(self._data), "-m", mode, "stop"]),
            capture_output=True,
            timeout=60,
            check=False,
        )

    def start(self) -> None:
        command = [self._pg_ctl, "-D", str(self._data), "-l", str(self._log)]
        _run(_as_server_user([*command, "-o", self._options, "start"]), "pg_ctl start")
        wait_for_postgres(self.url)


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A fresh PostgreSQL cluster on 127.0.0.1 (trust authentication; fsync off, so a crash
    of the machine could lose data but one of the server keeps every acknowledged commit);
    stopped, its folder removed, on exit."""
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    folder = Path(tempfile.mkdtemp(prefix="temporal-rag-pg-"))
    data = folder / "data"
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, user="postgres", group="postgres")
        _run(
            _as_server_user(
                [initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8"]
            ),
            "initdb",
        )
        port = free_port()
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        cluster = PostgresCluster(pg_ctl, data, folder / "server.log", options, url)
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def postgres_server() -> Iterator[str]:
    """:func:`postgres_cluster`'s URL."""
    with postgres_cluster() as cluster:
        yield cluster.url


def wait_for_postgres(url: str, *, seconds: float = STARTUP_SECONDS) -> None:
    """Return once ``url`` accepts a connection (ServerUnavailableError after ``seconds``)."""
    import psycopg

    deadline = time.monotonic() + seconds
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise ServerUnavailableError(f"PostgreSQL at {url} did not answer: {exc}") from exc
            time.sleep(0.2)


def drop_schema(url: str, name: str) -> None:
    """Remove a ledger's schema (a test's throwaway ledger) and everything in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _chroma_tool() -> str:
    beside = Path(sys.executable).with_name("chroma")
    if beside.exists():
        return str(beside)
    found = shutil.which("chroma")
    if found is None:
        raise ServerUnavailableError("no `chroma` command: pip install chromadb")
    return found


@contextmanager
def chroma_server() -> Iterator[str]:
    """``chroma run`` on 127.0.0.1 over a fresh folder; yields ``http://127.0.0.1:PORT`` and
    stops it, removing the folder, on exit."""
    command = _chroma_tool()
    folder = Path(tempfile.mkdtemp(prefix="temporal-rag-chroma-"))
    port = free_port()
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(
        [
            command,
            "run",
            "--path",
            str(folder / "data"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_chroma(url, process)
        _CHROMA_PIDS[url] = process.pid
        yield url
    finally:
        _CHROMA_PIDS.pop(url, None)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def chroma_server_pid(url: str) -> int | None:
    """The process id of the server :func:`chroma_server` runs at ``url`` (None for another
    server, e.g. one given by TEMPORAL_RAG_CHROMA_URL), for the benchmarks' memory figures."""
    return _CHROMA_PIDS.get(url)


def wait_for_chroma(url: str, process: subprocess.Popen[bytes] | None = None) -> None:
    """Return once the Chroma server at ``url`` answers its heartbeat."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if process is not None and process.poll() is not None:
            raise ServerUnavailableError(f"chroma run exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise ServerUnavailableError(f"Chroma at {url} did not answer: {exc}") from exc
        time.sleep(0.2)


def close_chroma_client(client: object) -> None:
    """Close a chromadb.HttpClient for good (see ChromaIndex's ``_close_client``)."""
    from shared_core.index.chroma_client import close_client

    close_client(client)
