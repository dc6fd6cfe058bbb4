"""The dependency direction of docs/design.md: the core imports no framework and nothing heavy
eagerly, and the runtime never depends on the benchmark or the training pipeline.

- The pure modules import only the standard library.
- No module of the core imports LangChain or LlamaIndex, in any form, nor the adapters.
- No module of the core or of the adapters imports the benchmark (``temporal_rag_bench``) or the
  training pipeline (``temporal_rag_training``): they are other distributions, not shipped.
- Heavy libraries (transformers, torch, chromadb, ...) appear only in the backend modules listed
  below, and only inside functions (an import statement or ``importlib.import_module`` call).
- Importing the core, its CLI and its detectors loads none of them.
"""

from __future__ import annotations

import ast
import re
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
    "phi_t.py",
    "recency.py",
    "detectors/key.py",
    "detectors/llm.py",
    "detectors/prefilters.py",
    "detectors/llm_answers.py",
    "embedders/base.py",
    "filters.py",
    "extractors/base.py",
    "index/base.py",
    "index/chroma_records.py",
    "index/chroma_fast_path.py",
    "lazy.py",
]
FRAMEWORKS = {"langchain", "langchain_core", "langchain_classic", "langgraph", "llama_index"}
ADAPTERS = {"langchain_temporal", "llamaindex_temporal"}
NOT_SHIPPED = {"temporal_rag_bench", "temporal_rag_training", "benchmarks", "training", "tests"}
RUNTIME = [CORE, *(CORE.parent / name for name in sorted(ADAPTERS))]
HEAVY = {
    "chromadb",
    "sentence_transformers",
    "transformers",
    "torch",
    "numpy",
    "huggingface_hub",
    "safetensors",
    "xllamacpp",
}
BACKENDS = {
    "detectors/transformers_nli.py": {"transformers", "torch", "huggingface_hub"},
    "detectors/kappa.py": {"transformers", "torch", "safetensors"},
    "embedders/minilm.py": {"sentence_transformers", "torch"},
    "index/chroma.py": {"chromadb", "numpy"},
    "index/chroma_client.py": {"chromadb", "numpy"},
    "index/checks.py": {"numpy"},
    "index/numpy_index.py": {"numpy"},
    "judging/pairwise.py": {"numpy"},
    "memory/reader.py": {"numpy"},
    "judging/claims.py": {"numpy"},
    "detectors/frames.py": {"numpy"},
    "detectors/framed.py": {"numpy"},  # write-time neighbours, lazily
    "products.py": {"numpy"},  # matrix products in numpy's loops, lazily
    "llms/llama_cpp.py": {"xllamacpp"},
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


def test_the_core_never_imports_a_framework_or_an_adapter() -> None:
    for name, path in modules():
        assert not {m for m, _ in imports(path)} & (FRAMEWORKS | ADAPTERS), name


def test_the_runtime_never_imports_the_benchmark_or_the_training_pipeline() -> None:
    for package in RUNTIME:
        for path in sorted(package.rglob("*.py")):
            found = {m for m, _ in imports(path)} & NOT_SHIPPED
            assert not found, f"{path.relative_to(CORE.parent)} imports {found}"


def test_the_boundary_check_sees_an_import_of_the_benchmark(tmp_path: Path) -> None:
    """The scan above is not vacuous: each way of importing is found, lazy ones included."""
    module = tmp_path / "module.py"
    module.write_text(
        "import temporal_rag_bench\n"
        "def later():\n"
        "    from temporal_rag_training.kappa_pairs import generate_pairs\n"
        "    importlib.import_module('benchmarks.reporting')\n"
    )
    assert {m for m, _ in imports(module)} == {
        "temporal_rag_bench",
        "temporal_rag_training",
        "benchmarks",
    }


def test_heavy_libraries_only_in_their_backend_and_only_lazily() -> None:
    for name, path in modules():
        for module, at_top in imports(path):
            if module in HEAVY:
                assert module in BACKENDS.get(name, set()), f"{name} imports {module}"
                assert not at_top, f"{name} imports {module} at import time"


def test_importing_the_core_loads_nothing_heavy() -> None:
    unwanted = sorted(HEAVY | FRAMEWORKS | NOT_SHIPPED | {"rich"})
    code = (
        "import sys, shared_core, shared_core.cli, shared_core.cli.demo, shared_core.detectors\n"
        "import shared_core.adapter_toolkit, shared_core.llms\n"
        f"heavy = [m for m in {unwanted!r} if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_no_package_reaches_outside_the_repository() -> None:
    """The contract is docs/design.md and external data comes through an option or
    $TEMPORAL_RAG_DATA: no package names the folder beside the checkout."""
    root = CORE.parent
    packages = [
        *RUNTIME,
        root / "benchmarks" / "temporal_rag_bench",
        root / "training" / "temporal_rag_training",
    ]
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            text = path.read_text()
            for outside in ("../shared", "shared/data", "DESIGN.md"):
                assert outside not in text, f"{path.relative_to(root)} names {outside}"


def test_the_contract_the_code_cites_exists() -> None:
    root = CORE.parent
    assert (root / "docs" / "design.md").is_file()
    cited = {
        match
        for path in CORE.rglob("*.py")
        for match in re.findall(r"docs/[\w/]+\.md", path.read_text())
    }
    assert "docs/design.md" in cited
    assert all((root / name).is_file() for name in cited), cited
