"""Async twins of synchronous methods: the same signature, run in a worker thread.

The memory's work is blocking (SQLite, Chroma, the embedder, a judge's model), so each ``a*``
method of :class:`~shared_core.memory.TemporalMemory` runs its synchronous twin with
:func:`asyncio.to_thread`: the event loop stays free and both paths share one implementation.
Where an LLM may be called (an async expander, LLM judge or LLM extractor), the memory writes
the ``a*`` method out instead: its reader or writer awaits the LLM on the running loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

Owner = TypeVar("Owner")
Params = ParamSpec("Params")
Result = TypeVar("Result")


def async_twin(
    method: Callable[Concatenate[Owner, Params], Result],
) -> Callable[Concatenate[Owner, Params], Coroutine[Any, Any, Result]]:
    """``method`` as a coroutine method with the same parameters, named ``a<name>``. The twin
    looks the method up on the instance when called, so a subclass's override (or a test's
    stand-in) is what runs."""
    name = method.__name__

    @functools.wraps(method)
    async def twin(self: Owner, /, *args: Params.args, **kwargs: Params.kwargs) -> Result:
        bound: Callable[Params, Result] = getattr(self, name)
        return await asyncio.to_thread(bound, *args, **kwargs)

    twin.__name__ = f"a{name}"
    twin.__qualname__ = twin.__qualname__.rsplit(".", 1)[0] + f".a{name}"
    twin.__doc__ = f":meth:`{name}` without blocking the event loop (a worker thread)."
    return twin
