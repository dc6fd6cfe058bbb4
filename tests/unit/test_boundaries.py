"""The dependency direction of DESIGN.md: the core imports no framework and nothing heavy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import shared_core

CORE = Path(shared_core.__file__).parent
PURE = [
    "facts.py",
    "supersession.py",
    "clock.py",
    "errors.py",
    "dominance.py",
    "recency.py",
    "detectors/key.py",
]
FRAMEWORKS = (
    "langchain",
    "langchain_core",
    "llama_index",
    "chromadb",
    "sentence_transformers",
    "transformers",
    "torch",
    "numpy",
)


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_pure_modules_import_only_the_standard_library() -> None:
    for name in PURE:
        outside = imported_modules(CORE / name) - set(sys.stdlib_module_names) - {"shared_core"}
        assert not outside, f"{name} imports {outside}"


def test_the_core_never_imports_a_framework() -> None:
    for path in CORE.rglob("*.py"):
        assert not imported_modules(path) & set(FRAMEWORKS), path


def test_importing_the_core_loads_nothing_heavy() -> None:
    code = (
        "import sys, shared_core, shared_core.cli, shared_core.demo\n"
        f"heavy = [m for m in {(*FRAMEWORKS, 'rich')!r} if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
