"""What ``pip install temporal-rag`` installs: the wheel built from this repository holds the
runtime (the core, both adapters, the shipped kappa model) and nothing of the benchmark or the
training pipeline, which are distributions of their own (benchmarks/, training/)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = {"shared_core", "langchain_temporal", "llamaindex_temporal"}
NOT_SHIPPED = ("temporal_rag_bench", "temporal_rag_training", "benchmarks/", "training/", "tests/")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """A wheel built now, offline, by the hatchling the virtual environment holds."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--wheel-dir", str(out), str(ROOT)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (built,) = out.glob("temporal_rag-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_the_runtime_only(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == SHIPPED
    assert not [name for name in names if any(part in name for part in NOT_SHIPPED)]
    assert not [name for name in names if "kappa_families" in name or "pairsets" in name]


def test_the_wheel_ships_the_kappa_model_its_card_and_type_information(
    wheel: zipfile.ZipFile,
) -> None:
    folder = "shared_core/detectors/kappa_model/"
    expected = {f"{folder}{name}" for name in ("kappa.safetensors", "kappa.json", "LICENSE")}
    assert expected | {"shared_core/py.typed"} <= set(wheel.namelist())


def test_the_wheel_declares_the_command_but_no_benchmark_entry_points(
    wheel: zipfile.ZipFile,
) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "temporal-rag = shared_core.cli:main" in text
    assert "temporal_rag.bench_methods" not in text
    assert "temporal_rag.cli" not in text
