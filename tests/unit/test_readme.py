"""The README's Python examples run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("block", python_blocks())
def test_readme_example_prints_what_it_promises(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(README), "exec"), {})  # our own README, nothing foreign
    promised = [m.strip() for m in re.findall(r"print\(.*\)\s+#\s*(.*)", block)]
    assert printed.getvalue().splitlines() == promised
