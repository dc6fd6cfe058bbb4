"""Multi-query expansion (GC-Mem): a text-in/text-out LLM rewrites a query into variants.

The LLM is a :data:`~shared_core.llm_calls.TextLLM` (sync, async or both): :func:`expand_query`
calls its sync form, :func:`aexpand_query` awaits its async form.
"""

from __future__ import annotations

import re

from shared_core.errors import ExtractorError, NeedsAsyncError
from shared_core.llm_calls import TextLLM, aask, ask

EXPANSION_TEMPLATE = (
    "Rewrite the search query between <<< and >>> into {n} different phrasings that ask for "
    "the same information. Write one phrasing per line, with no numbering and nothing else.\n\n"
    "Query: <<<{query}>>>"
)
MAX_ANSWER_CHARS = 20_000  # a runaway answer is cut, not parsed whole
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")


def expand_query(
    llm: TextLLM, query: str, n: int, *, template: str = EXPANSION_TEMPLATE
) -> list[str]:
    """Up to ``n`` distinct rewrites of ``query`` (the query itself is not among them).

    Lines are stripped of bullets, numbering and quotes; empty lines and repeats are skipped.
    A failing call raises :class:`~shared_core.errors.ExtractorError`.
    """
    try:
        answer = ask(llm, template.format(n=n, query=query), who="the query expander",
                     instead="asearch")  # fmt: skip
    except NeedsAsyncError:
        raise
    except Exception as exc:
        raise ExtractorError(f"the query expander failed: {exc}") from exc
    return read_variants(answer, query, n)


async def aexpand_query(
    llm: TextLLM, query: str, n: int, *, template: str = EXPANSION_TEMPLATE
) -> list[str]:
    """:func:`expand_query` for async callers: the expander's async form is awaited."""
    try:
        answer = await aask(llm, template.format(n=n, query=query))
    except Exception as exc:
        raise ExtractorError(f"the query expander failed: {exc}") from exc
    return read_variants(answer, query, n)


def read_variants(answer: object, query: str, n: int) -> list[str]:
    """The rewrites in an expander's ``answer`` (see :func:`expand_query`)."""
    if not isinstance(answer, str):
        raise ExtractorError(f"the query expander returned {type(answer).__name__}, not text")
    seen = {query.strip().casefold()}
    variants: list[str] = []
    for line in answer[:MAX_ANSWER_CHARS].splitlines():
        text = _BULLET.sub("", line).strip().strip("\"'").strip()
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            variants.append(text)
        if len(variants) == n:
            break
    return variants
