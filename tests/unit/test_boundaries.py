"""The dependency direction of DESIGN.md: the core imports no framework and nothing heavy eagerly.

- The pure modules import only the standard library.
- No module of the core imports LangChain or LlamaIndex, in any form.
- Heavy libraries (transformers, torch, chromadb, ...) appear only in the backend modules listed
  below, and only inside functions (an import statement or ``importlib.import_module`` call).
- Importing the core, its CLI and its detectors loads none of them.
"""

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
    "detectors/llm.py",
    "detectors/prefilters.py",
    "detectors/llm_answers.py",
    "embedders/base.py",
    "filters.py",
    "extractors/base.py",
    "index/base.py",
    "lazy.py",
]
FRAMEWORKS = {"langchain", "langchain_core", "langchain_classic", "llama_index"}
HEAVY = {
    "chromadb",
    "sentence_transformers",
    "transformers",
    "torch",
    "numpy",
    "huggingface_hub",
    "safetensors",
}
BACKENDS = {
    "detectors/transformers_nli.py": {"transformers", "torch", "huggingface_hub"},
    "detectors/kappa.py": {"transformers", "torch", "safetensors"},
    "embedders/minilm.py": {"sentence_transformers", "torch"},
    "index/chroma.py": {"chromadb", "numpy"},
    "index/memory.py": {"numpy"},
    "memory/judging.py": {"numpy"},
    "index/chroma_layout.py": {"numpy"},
    "eval/store.py": {"chromadb", "numpy"},
    "eval/plots.py": {"matplotlib"},
}


def imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level module name, imported at module level?) for every import in a file."""
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names = [str(node.args[0].value)]
        found += [(name.split(".")[0], id(node) in top_level) for name in names]
    return found


def modules() -> list[tuple[str, Path]]:
    return [(str(p.relative_to(CORE)), p) for p in sorted(CORE.rglob("*.py"))]


def test_pure_modules_import_only_the_standard_library() -> None:
    for name in PURE:
        outside = {m for m, _ in imports(CORE / name)} - set(sys.stdlib_module_names)
        assert outside <= {"shared_core"}, f"{name} imports {outside - {'shared_core'}}"


def test_the_core_never_imports_a_framework() -> None:
    for name, path in modules():
        assert not {m for m, _ in imports(path)} & FRAMEWORKS, name


def test_heavy_libraries_only_in_their_backend_and_only_lazily() -> None:
    for name, path in modules():
        for module, at_top in imports(path):
            if module in HEAVY:
                assert module in BACKENDS.get(name, set()), f"{name} imports {module}"
                assert not at_top, f"{name} imports {module} at import time"


def test_importing_the_core_loads_nothing_heavy() -> None:
    code = (
        "import sys, shared_core, shared_core.cli, shared_core.demo, shared_core.detectors\n"
        f"heavy = [m for m in {sorted(HEAVY | FRAMEWORKS | {'rich'})!r} if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
