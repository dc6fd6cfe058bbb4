"""LlamaIndex adapter for temporal-rag (filled in by issue 6)."""
