"""Local LLMs that go wherever the core takes a :data:`~shared_core.llm_calls.TextLLM`."""

from shared_core.llms.llama_cpp import LLMStats, LocalLLM

__all__ = ["LLMStats", "LocalLLM"]
