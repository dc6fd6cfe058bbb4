"""Extractors: text and metadata in, keyed statements out (metadata fields; the LLM extractor is
a write-time judge, :class:`shared_core.judging.LLMExtractor`)."""

from shared_core.extractors.base import ExtractedFact, Extraction, Extractor, NoExtraction
from shared_core.extractors.metadata import MetadataExtractor

__all__ = [
    "ExtractedFact",
    "Extraction",
    "Extractor",
    "MetadataExtractor",
    "NoExtraction",
]
