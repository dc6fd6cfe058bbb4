"""What a ``TemporalVectorStore`` search asks and returns: options, scores, MMR."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document

from langchain_temporal.documents import stored_document
from shared_core.adapter_toolkit import read_times
from shared_core.errors import InvalidInputError
from shared_core.facts import Fact
from shared_core.memory import Hit, SearchOptions
from shared_core.memory.options import OPTION_NAMES

SEARCH_KWARGS = (*(name for name in OPTION_NAMES if name != "k"), "search_options")
"""What a search takes besides ``k``: every other search option, or ``search_options``."""


def in_order(ids: Sequence[str], facts: Sequence[Fact]) -> list[Document]:
    """The facts as Documents, in the order their ids were asked."""
    documents = [stored_document(fact) for fact in facts]
    rank = {found: position for position, found in enumerate(ids)}
    return sorted(documents, key=lambda document: rank.get(document.id or "", len(rank)))


def scored(hits: Sequence[Hit]) -> list[tuple[Document, float]]:
    """(Document, cosine similarity) per hit."""
    return [(stored_document(hit.fact), hit.score) for hit in hits]


def call_options(base: SearchOptions, k: int | None, given: Mapping[str, Any]) -> SearchOptions:
    """The options of one search: ``base`` (or ``given["search_options"]``) changed by ``k``
    and the other keywords (times may be ISO-8601 strings or epoch seconds)."""
    unknown = sorted(set(given) - set(SEARCH_KWARGS))
    if unknown:
        raise InvalidInputError(
            unknown[0], "is not a search option", f"use k or {', '.join(SEARCH_KWARGS)}"
        )
    changes = dict(given)
    chosen = changes.pop("search_options", None)
    if chosen is not None and not isinstance(chosen, SearchOptions):
        raise InvalidInputError(
            "search_options", f"is a {type(chosen).__name__}", "pass SearchOptions(...) or None"
        )
    asked = (chosen or base).merged(**read_times(changes))  # type: ignore[arg-type]
    return asked.merged(k=k)


def mmr_options(
    options: SearchOptions, fetch_k: int, lambda_mult: float
) -> tuple[SearchOptions, SearchOptions]:
    """The options asked and those fetching MMR's candidates (``fetch_k`` of them, or ``k``)."""
    if not isinstance(fetch_k, int) or isinstance(fetch_k, bool) or fetch_k < 1:
        raise InvalidInputError("fetch_k", f"is {fetch_k!r}", "pass an int >= 1")
    if (
        not isinstance(lambda_mult, int | float)
        or isinstance(lambda_mult, bool)
        or not 0 <= lambda_mult <= 1
    ):
        raise InvalidInputError("lambda_mult", f"is {lambda_mult!r}", "pass a number in [0, 1]")
    return options, replace(options, k=max(fetch_k, options.k))


def diverse(
    query: Sequence[float],
    hits: Sequence[Hit],
    vectors: Mapping[str, Sequence[float]],
    k: int,
    lambda_mult: float,
) -> list[Document]:
    """Maximal marginal relevance over the hits' stored vectors (langchain_core's)."""
    import numpy as np  # only when asked: importing the adapter loads nothing heavy
    from langchain_core.vectorstores.utils import maximal_marginal_relevance

    ranked = [hit for hit in hits if hit.fact.id in vectors]
    if not ranked:
        return []
    chosen = maximal_marginal_relevance(
        np.asarray(query, dtype=np.float64),
        [list(vectors[hit.fact.id]) for hit in ranked],
        lambda_mult=lambda_mult,
        k=k,
    )
    return [stored_document(ranked[index].fact) for index in chosen]


def relevance(score: float) -> float:
    """A cosine similarity as LangChain's relevance in [0, 1] (clipped)."""
    return 0.0 if math.isnan(score) else min(1.0, max(0.0, score))
