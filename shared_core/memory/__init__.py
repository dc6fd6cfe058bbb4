"""TemporalMemory: the object users hold (ledger + vector index + embedder + extractor)."""

from shared_core.memory.config import MemoryConfig
from shared_core.memory.context import count_tokens_default, pack_context
from shared_core.memory.expansion import expand_query
from shared_core.memory.extraction_report import ExtractionReport
from shared_core.memory.fusion import reciprocal_rank_fusion
from shared_core.memory.hits import Added, Hit, ReconcileReport
from shared_core.memory.memory import TemporalMemory
from shared_core.memory.options import SearchChanges, SearchOptions

__all__ = [
    "Added",
    "ExtractionReport",
    "Hit",
    "MemoryConfig",
    "ReconcileReport",
    "SearchChanges",
    "SearchOptions",
    "TemporalMemory",
    "count_tokens_default",
    "expand_query",
    "pack_context",
    "reciprocal_rank_fusion",
]
