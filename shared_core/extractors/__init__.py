"""Extractors: text and metadata in, keyed statements out (metadata fields, LLM triples)."""

from shared_core.extractors.base import ExtractedFact, Extraction, Extractor, NoExtraction
from shared_core.extractors.llm import LLMExtractor
from shared_core.extractors.metadata import MetadataExtractor

__all__ = [
    "ExtractedFact",
    "Extraction",
    "Extractor",
    "LLMExtractor",
    "MetadataExtractor",
    "NoExtraction",
]
