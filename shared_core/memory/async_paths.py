"""The async paths of :class:`~shared_core.memory.TemporalMemory` that may call an LLM.

``aadd`` / ``aadd_many`` (an extractor with an async form, the LLM extractor's), ``asearch`` /
``acontext`` (an async expander, a detector with an async form such as the LLM judge) await
the LLM on the running loop and run the blocking work (embedding, the ledger, the index) in a
worker thread, one hop each. Without an LLM to await, they do what the other twins do: the
synchronous method in a worker thread. Both paths give the same results (tests check it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from shared_core.facts import DEFAULT_NAMESPACE, ObjectValue
from shared_core.memory.context import pack_context
from shared_core.memory.hits import Added, Hit
from shared_core.memory.options import CONTEXT_K, SearchChanges, SearchOptions
from shared_core.memory.writing import Item, aplan_items

if TYPE_CHECKING:
    from shared_core.memory.core import TemporalMemory


async def add(
    memory: TemporalMemory,
    text: str,
    *,
    subject: str | None = None,
    relation: str | None = None,
    object: ObjectValue | None = None,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    namespace: str = DEFAULT_NAMESPACE,
    metadata: Mapping[str, Any] | None = None,
) -> Added:
    """:meth:`add` for async callers: an extractor's async form is awaited (see the module)."""
    if subject is None and relation is None and object is None:
        items = await add_many(
            memory,
            [text],
            metadatas=[metadata or {}],
            namespace=namespace,
            valid_from=valid_from,
            valid_to=valid_to,
        )
        return items[0]
    return await asyncio.to_thread(
        memory.add,
        text,
        subject=subject,
        relation=relation,
        object=object,
        valid_from=valid_from,
        valid_to=valid_to,
        namespace=namespace,
        metadata=metadata,
    )  # a keyed fact goes through no extractor


async def add_many(
    memory: TemporalMemory,
    items: Iterable[Item],
    *,
    metadatas: Sequence[Mapping[str, Any]] | None = None,
    namespace: str = DEFAULT_NAMESPACE,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    replacing: Sequence[str] = (),
    merge_prose: bool = True,
) -> list[Added]:
    """:meth:`add_many` for async callers: an extractor's async form (``aextract``) is awaited
    on the running loop, one text after another; embedding and writing run in a worker
    thread."""
    options: dict[str, Any] = {"replacing": replacing, "merge_prose": merge_prose}
    if not hasattr(memory.extractor, "aextract"):
        return await asyncio.to_thread(
            memory.add_many,
            items,
            metadatas=metadatas,
            namespace=namespace,
            valid_from=valid_from,
            valid_to=valid_to,
            **options,
        )
    plans = await aplan_items(
        memory.extractor,
        list(items),
        metadatas,
        namespace=namespace,
        valid_from=valid_from,
        valid_to=valid_to,
    )
    return await asyncio.to_thread(memory._write_plans, plans, **options)


async def search(
    memory: TemporalMemory,
    query: str,
    options: SearchOptions | None = None,
    /,
    **changes: Unpack[SearchChanges],
) -> list[Hit]:
    """:meth:`search` for async callers: the expander's and the detector's async forms are
    awaited on the running loop (an LLM judge's, say); embedding, the index and the ledger
    are read in a worker thread, and a detector without an async form runs in one too."""
    asked = (options if options is not None else SearchOptions()).merged(**changes)
    request = memory._query(query, asked)
    variants = await memory._reader.avariants(request)
    hits = await asyncio.to_thread(memory._ranked, request, variants)
    return await memory._reader.afinish(request, hits)


async def context(
    memory: TemporalMemory,
    query: str,
    options: SearchOptions | None = None,
    /,
    *,
    token_budget: int = 512,
    count_tokens: Callable[[str], int] | None = None,
    **changes: Unpack[SearchChanges],
) -> str:
    """:meth:`context` for async callers (its search is :func:`search`)."""
    base = options if options is not None else SearchOptions(k=CONTEXT_K)
    hits = await search(memory, query, base.merged(**changes))
    return pack_context(hits, token_budget=token_budget, count_tokens=count_tokens)
