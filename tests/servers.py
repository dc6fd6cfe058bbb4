"""Real servers for the tests, started on loopback in a temporary folder and stopped after.

``postgres_server()`` runs a throwaway PostgreSQL cluster (Debian's ``postgresql`` package, or
any ``initdb``/``pg_ctl`` on PATH). A test module asks for it through the ``postgres_url``
fixture (tests/conftest.py): when no server can start, the tests skip with the reason on a
developer's machine and fail under CI (``CI`` set), so a CI run never passes by skipping them.
``TEMPORAL_RAG_POSTGRES_URL`` points the tests at a server of your own instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 60.0


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


@contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh PostgreSQL cluster on 127.0.0.1 (trust authentication, fsync off: test data
    only); yields its connection URL and stops it, removing its folder, on exit."""
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
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        log = folder / "server.log"
        _run(
            _as_server_user([pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "start"]),
            "pg_ctl start",
        )
        try:
            url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
            wait_for_postgres(url)
            yield url
        finally:
            subprocess.run(
                _as_server_user([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
                capture_output=True,
                timeout=60,
                check=False,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
