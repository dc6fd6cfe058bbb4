"""PromptCache (shared_core.llm_calls), the one LRU prompt cache of the LLM judge and the LLM
group detector, and generated_tokens, the one reader of an LLM's token counter."""

from __future__ import annotations

from types import SimpleNamespace

from shared_core.llm_calls import PromptCache, generated_tokens


def test_the_least_recently_used_prompt_is_dropped_first() -> None:
    cache: PromptCache[str] = PromptCache(2)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # "b" is now the least recently used
    cache.put("c", "C")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")


def test_a_prompt_put_again_is_replaced_not_duplicated() -> None:
    cache: PromptCache[tuple[int, ...]] = PromptCache(2)
    cache.put("a", (1,))
    cache.put("b", ())
    cache.put("a", (2,))
    cache.put("c", (3,))  # drops "b", the least recently used
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ((2,), None, (3,))


def test_size_zero_keeps_nothing() -> None:
    cache: PromptCache[str] = PromptCache(0)
    cache.put("a", "A")
    assert cache.get("a") is None


def test_generated_tokens_reads_an_int_counter_only() -> None:
    assert generated_tokens(SimpleNamespace(stats=SimpleNamespace(generated_tokens=7))) == 7
    assert generated_tokens(SimpleNamespace(stats=SimpleNamespace(generated_tokens=True))) is None
    assert generated_tokens(lambda prompt: prompt) is None
