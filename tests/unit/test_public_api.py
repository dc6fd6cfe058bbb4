"""The public surface is chosen on purpose: these lists pin it (as httpx and langchain-postgres pin
theirs). A name added to or removed from a package's ``__all__`` is a decision: change the list here
in the same commit, and the docs that mention it."""

from __future__ import annotations

import importlib
import inspect

import pytest

SHARED_CORE = [
    # the memory
    "MemoryConfig",
    "TemporalMemory",
    "SearchOptions",
    "Hit",
    "Added",
    "ReconcileReport",
    "ExtractionReport",
    # facts and the supersession rule
    "Fact",
    "FactKey",
    "FactStatus",
    "Cardinality",
    "Decision",
    "Reason",
    "ReasonKind",
    # ledgers
    "LedgerStore",
    "Ledger",
    "InMemoryLedger",
    "SQLiteLedger",
    "PostgresLedger",
    "WriteResult",
    "Explanation",
    "StoredStatement",
    "ProseSupersession",
    # vector indexes and embedders
    "VectorIndex",
    "ChromaIndex",
    "NumpyIndex",
    "Embedder",
    "MiniLMEmbedder",
    "CallableEmbedder",
    "HashingEmbedder",
    # write-time judging: extractors and prose judges
    "Extractor",
    "Extraction",
    "ExtractedFact",
    "NoExtraction",
    "MetadataExtractor",
    "LLMExtractor",
    "ClaimJudge",
    "claim_judge",
    "ProseJudge",
    "kappa_judge",
    # read time: Phi_T and its conflict detectors
    "temporal_dominance",
    "Candidate",
    "Conflict",
    "ConflictDetector",
    "DominanceResult",
    "AnyConflict",
    "NeverConflicts",
    "KeyConflictDetector",
    "KappaScorer",
    "kappa_detector",
    "NLIConflictDetector",
    "LLMConflictDetector",
    "LLMGroupDetector",
    "RecencyBuffer",
    # LLM callables
    "TextLLM",
    "AsyncTextLLM",
    "TextLLMPair",
    "LocalLLM",
    # clocks
    "Clock",
    "SystemClock",
    "ManualClock",
    # errors (the tree is documented in shared_core.errors)
    "TemporalRagError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "InvalidOperationError",
    "CardinalityConflictError",
    "FactIdConflictError",
    "NotRetiredError",
    "FactNotFoundError",
    "NothingToRetractError",
    "MissingDependencyError",
    "ModelNotFoundError",
    "NeedsAsyncError",
    "NotPicklableError",
    "DetectorError",
    "EmbedderError",
    "EmbedderMismatchError",
    "FolderInUseError",
    "ExtractorError",
    "LLMError",
    "VectorIndexError",
    "IndexSyncError",
    "LedgerError",
    "LedgerNotFoundError",
    "NotALedgerError",
    "SchemaVersionError",
    "LedgerCorruptError",
    "LedgerBusyError",
    "LedgerUnavailableError",
]

JUDGING = [
    # the write-time judging port
    "Judge",
    "AsyncJudge",
    "WriteBatch",
    "Judgement",
    "JudgeChain",
    "scoped_subject",
    "speaker_subject",
    # its implementations
    "LLMExtractor",
    "LLMJudgeStats",
    "ClaimJudge",
    "claim_judge",
    "ProseJudge",
    "kappa_judge",
]

LANGCHAIN_TEMPORAL = [
    "TemporalRetriever",
    "TemporalVectorStore",
    "TemporalDocumentCompressor",
    "LangChainEmbedder",
    "CoreEmbeddings",
    "text_llm",
]

LANGGRAPH_LAZY = ["ItemVersion", "TemporalStore"]
"""In ``langchain_temporal`` but not its ``__all__``: imported on first use (the langgraph
extra), so that ``from langchain_temporal import *`` works without langgraph."""

LLAMAINDEX_TEMPORAL = [
    "TemporalVectorStore",
    "TemporalNodePostprocessor",
    "LlamaIndexEmbedder",
    "CoreEmbedding",
    "text_llm",
]

SURFACES = {
    "shared_core": SHARED_CORE,
    "shared_core.judging": JUDGING,
    "langchain_temporal": LANGCHAIN_TEMPORAL,
    "llamaindex_temporal": LLAMAINDEX_TEMPORAL,
}


@pytest.mark.parametrize(("package", "expected"), SURFACES.items())
def test_all_is_the_chosen_surface(package: str, expected: list[str]) -> None:
    module = importlib.import_module(package)
    assert len(expected) == len(set(expected)), "a name is pinned twice"
    assert sorted(module.__all__) == sorted(expected)


@pytest.mark.parametrize(("package", "expected"), SURFACES.items())
def test_every_pinned_name_imports(package: str, expected: list[str]) -> None:
    module = importlib.import_module(package)
    for name in expected:
        assert getattr(module, name) is not None, name


@pytest.mark.parametrize("package", SURFACES)
def test_no_public_name_outside_all(package: str) -> None:
    """Every public class or function the package namespace holds is in ``__all__`` (the
    subpackages and modules themselves are not names a user imports from it)."""
    module = importlib.import_module(package)
    stray = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and name not in module.__all__
        and name not in {"annotations", "TYPE_CHECKING"}
    ]
    assert stray == []


def test_the_judges_have_one_home() -> None:
    """Write-time judges are exported from shared_core.judging (and shared_core), no longer
    from shared_core.memory."""
    import shared_core
    import shared_core.judging
    import shared_core.memory

    for name in ("LLMExtractor", "ClaimJudge", "ProseJudge", "claim_judge", "kappa_judge"):
        assert getattr(shared_core, name) is getattr(shared_core.judging, name)
        assert not hasattr(shared_core.memory, name)


def test_every_error_is_exported_and_inherits_a_builtin() -> None:
    import shared_core
    from shared_core import errors

    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.TemporalRagError)
    ]
    for error in classes:
        assert error.__name__ in shared_core.__all__, error
        if error is not errors.TemporalRagError:
            builtin = [base for base in error.__mro__ if base.__module__ == "builtins"]
            assert builtin[0] is not Exception, f"{error.__name__} inherits no closer builtin"


def test_the_langgraph_store_is_imported_on_first_use() -> None:
    import langchain_temporal

    assert sorted(langchain_temporal._LANGGRAPH) == sorted(LANGGRAPH_LAZY)
    for name in LANGGRAPH_LAZY:
        module = getattr(langchain_temporal, name).__module__
        assert module.startswith("langchain_temporal.langgraph")
