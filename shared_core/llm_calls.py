"""Text-in/text-out LLM callables, sync or async, and how the core calls them.

The LLM judge (:class:`~shared_core.detectors.LLMConflictDetector`), the LLM extractor
(:class:`~shared_core.judging.LLMExtractor`) and the query expander
(``MemoryConfig(expander=...)``) take a :data:`TextLLM`, one of:

- a function ``str -> str`` (sync);
- a coroutine function ``async str -> str`` (async-only; an object whose ``__call__`` is a
  coroutine function counts too), found with :func:`inspect.iscoroutinefunction`;
- an :class:`AsyncTextLLM`: a sync callable that also has a native async form, ``acall``.
  The bridges (``text_llm(...)`` of both adapters) return one, a :class:`TextLLMPair`, over the
  framework's ``invoke`` / ``ainvoke`` or ``complete`` / ``acomplete``.

Sync paths (``find_conflicts``, ``extract``, ``search``, ``invoke``, ``query``, ...) call the
sync form. An async-only callable is run to completion on a fresh event loop
(:func:`asyncio.run`) when no loop runs in the calling thread; inside a running loop it is
refused with :class:`~shared_core.errors.NeedsAsyncError`, which names the async method to
await: blocking the running loop on a coroutine that may need that loop would deadlock, and
running it on another loop breaks clients bound to the first one.

Async paths (``afind_conflicts``, ``aextract``, ``asearch``, ``ainvoke``, ``aquery``, ...)
await ``acall`` or the async-only callable on the running loop, and run a sync callable in a
worker thread, so the loop stays free either way.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from shared_core.errors import InvalidInputError, NeedsAsyncError

TextLLM = Callable[[str], str] | Callable[[str], Awaitable[str]]
"""What the LLM judge, the LLM extractor and the query expander accept (see the module)."""

V = TypeVar("V")


@runtime_checkable
class AsyncTextLLM(Protocol):
    """An LLM callable with a sync form (``__call__``) and a native async form (``acall``)."""

    def __call__(self, prompt: str, /) -> str: ...

    def acall(self, prompt: str, /) -> Awaitable[str]: ...


class TextLLMPair:
    """One LLM's sync and async forms as one :class:`AsyncTextLLM` (what the bridges return).

    ``name`` (also its ``__name__``) shows in its repr and in error messages."""

    def __init__(
        self,
        sync: Callable[[str], str],
        asynchronous: Callable[[str], Awaitable[str]],
        *,
        name: str,
    ) -> None:
        if not callable(sync) or not callable(asynchronous):
            raise InvalidInputError(
                "sync / asynchronous", "must both be callable", "pass str -> str and its async form"
            )
        self._sync = sync
        self._async = asynchronous
        self.name = self.__name__ = name

    def __call__(self, prompt: str, /) -> str:
        return self._sync(prompt)

    async def acall(self, prompt: str, /) -> str:
        return await self._async(prompt)

    def __repr__(self) -> str:
        return f"TextLLMPair({self.name})"


def check_llm(llm: object, field: str = "llm") -> None:
    """InvalidInputError unless ``llm`` is callable (sync, async or both)."""
    if not callable(llm):
        raise InvalidInputError(
            field,
            f"is a {type(llm).__name__}, not callable",
            "pass a function str -> str, an async one, or text_llm(model)",
        )


def is_async_only(llm: object) -> bool:
    """Whether ``llm`` has no sync form: a coroutine function, or an object whose ``__call__``
    is one (an :class:`AsyncTextLLM` has a sync form)."""
    if isinstance(llm, AsyncTextLLM):
        return False
    if inspect.iscoroutinefunction(llm):
        return True
    return callable(llm) and inspect.iscoroutinefunction(type(llm).__call__)


def is_native_async(llm: object) -> bool:
    """Whether an async path can await ``llm`` instead of running it in a worker thread."""
    return isinstance(llm, AsyncTextLLM) or is_async_only(llm)


def ask(llm: TextLLM, prompt: str, *, who: str, instead: str) -> Any:
    """``llm``'s answer to ``prompt`` for a sync caller (see the module for async-only ones).

    ``who`` names the caller and ``instead`` its async method, for :class:`NeedsAsyncError`.
    The answer is returned as the callable gave it: the caller checks that it is a ``str``.
    """
    answer: Any = llm(prompt)
    if not inspect.isawaitable(answer):
        return answer
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread: run it to completion on a fresh one
        return asyncio.run(_awaited(answer))
    if inspect.iscoroutine(answer):
        answer.close()  # never started; closing it keeps "never awaited" warnings away
    raise NeedsAsyncError(
        f"{who}: the llm callable is async-only and an event loop is running in this thread, "
        f"so a sync call cannot wait for it; await {instead} (or the async method that "
        "reached it: asearch, ainvoke, aquery, ...), or pass a callable with a sync form too "
        "(text_llm(model) returns one)"
    )


async def aask(llm: TextLLM, prompt: str) -> Any:
    """``llm``'s answer to ``prompt`` for an async caller: a native async form is awaited on
    the running loop, a sync callable runs in a worker thread."""
    answer: Any
    if isinstance(llm, AsyncTextLLM):
        answer = llm.acall(prompt)
    elif is_async_only(llm):
        answer = llm(prompt)
    else:
        answer = await asyncio.to_thread(llm, prompt)
    if inspect.isawaitable(answer):
        answer = await answer
    return answer


def generated_tokens(llm: object) -> int | None:
    """The tokens ``llm`` reports having generated (its ``stats.generated_tokens``, as
    :class:`~shared_core.llms.LocalLLM` keeps), or None when it keeps no such counter."""
    tokens = getattr(getattr(llm, "stats", None), "generated_tokens", None)
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


class PromptCache(Generic[V]):
    """A least-recently-used map from a prompt to what was read from its answer, holding at
    most ``size`` entries (0 holds none); safe to share between threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, prompt: str) -> V | None:
        """The value kept for ``prompt`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(prompt)
            if value is not None:
                self._entries.move_to_end(prompt)
            return value

    def put(self, prompt: str, value: V) -> None:
        """Keep ``value`` for ``prompt``, dropping the least recently used beyond ``size``."""
        if self.size == 0:
            return
        with self._lock:
            self._entries[prompt] = value
            self._entries.move_to_end(prompt)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


__all__ = [
    "AsyncTextLLM",
    "PromptCache",
    "TextLLM",
    "TextLLMPair",
    "aask",
    "ask",
    "check_llm",
    "generated_tokens",
    "is_async_only",
    "is_native_async",
]
