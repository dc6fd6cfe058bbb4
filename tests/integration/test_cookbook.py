"""Every notebook in cookbook/ runs top to bottom, offline, on this interpreter.

The notebooks are found by glob, so one added later is tested without touching this file. Each
runs in a fresh kernel started from ``sys.executable`` (a kernel spec written for the test, so a
``python3`` kernel of another environment can never be picked up), with its working directory
in a copy of cookbook/ under ``tmp_path``: whatever a notebook writes lands there. Network
connections other than loopback are refused inside the kernel and its child processes (a
``sitecustomize`` on the kernel's ``PYTHONPATH``), and a Python warning printed by any cell
fails the test (pytest's ``filterwarnings = error`` does not reach into the kernel). The stored
outputs are not compared: they are for readers.

A notebook may ask for a longer per-cell timeout with nbmake's notebook metadata key,
``{"execution": {"timeout": SECONDS}}``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellControlSignal, DeadKernelError

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"
NOTEBOOKS = sorted(COOKBOOK.glob("*.ipynb"))
KERNEL = "temporal-rag-cookbook"
CELL_TIMEOUT = 300  # seconds per cell; generous for two shared cores
STARTUP_TIMEOUT = 120  # seconds for the kernel to start
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colours in the kernel's tracebacks

# Loaded by the kernel's interpreter at start-up (PYTHONPATH): refuses every connection that
# does not stay on this machine, so a notebook that reaches for the network fails loudly.
OFFLINE_SITECUSTOMIZE = """
import ipaddress
import socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _local(address):
    if not isinstance(address, tuple):
        return True  # a Unix socket path
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(address):
    if not _local(address):
        raise OSError(f"network access refused in the cookbook test: {address!r}")


def connect(self, address):
    _guard(address)
    return _connect(self, address)


def connect_ex(self, address):
    _guard(address)
    return _connect_ex(self, address)


socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
"""


def test_the_cookbook_is_found() -> None:
    assert len(NOTEBOOKS) >= 4, f"expected the cookbook's notebooks in {COOKBOOK}"


@pytest.fixture(scope="module")
def kernel_support(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a folder holding a kernel spec for this interpreter, a folder with sitecustomize.py)."""
    root = tmp_path_factory.mktemp("kernel")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "temporal-rag cookbook", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(OFFLINE_SITECUSTOMIZE, encoding="utf-8")
    return root / "kernels", site


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs(notebook: Path, tmp_path: Path, kernel_support: tuple[Path, Path]) -> None:
    kernels, site = kernel_support
    workdir = tmp_path / "cookbook"
    skip = shutil.ignore_patterns(".ipynb_checkpoints", ".ruff_cache")
    shutil.copytree(COOKBOOK, workdir, ignore=skip)
    nb = nbformat.read(workdir / notebook.name, as_version=4)
    timeout = nb.metadata.get("execution", {}).get("timeout", CELL_TIMEOUT)

    manager = AsyncKernelManager(
        kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)])
    )
    assert manager.kernel_spec is not None
    assert manager.kernel_spec.argv[0] == sys.executable
    client = NotebookClient(
        nb,
        km=manager,
        timeout=timeout,
        startup_timeout=STARTUP_TIMEOUT,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    running: dict[str, Any] = {}

    def started(cell: Any, cell_index: int) -> None:
        running.update(cell=cell, index=cell_index)

    client.on_cell_start = started
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",  # Jupyter's, headless
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    failure = None
    try:
        client.execute(cleanup_kc=True, env=env)
    except (CellControlSignal, DeadKernelError, TimeoutError) as exc:  # an error, a timeout
        failure = ANSI.sub("", str(exc))
    if failure is not None:
        source = running.get("cell", {}).get("source", "(before the first cell)")
        shown = "" if source in failure else f"--- cell source ---\n{source}\n--- error ---\n"
        pytest.fail(
            f"{notebook.name}: cell {running.get('index', '?')} failed\n{shown}{failure}",
            pytrace=False,
        )

    warned = [
        f"cell {index}: {output['text'].strip()}"
        for index, cell in enumerate(nb.cells)
        for output in cell.get("outputs", [])
        if output.get("name") == "stderr" and "Warning:" in output.get("text", "")
    ]
    if warned:
        pytest.fail(f"{notebook.name} printed warnings:\n" + "\n".join(warned), pytrace=False)
