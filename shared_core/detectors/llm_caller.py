"""How an LLM detector calls its LLM and keeps its counters: one home for the LLM judge
(:class:`~shared_core.detectors.LLMConflictDetector`) and the group detector
(:class:`~shared_core.detectors.LLMGroupDetector`).

:class:`DetectorCalls` calls the :data:`~shared_core.llm_calls.TextLLM` (sync or awaited, see
:mod:`shared_core.llm_calls`), counts every call and every failed one, turns a failure into a
:class:`~shared_core.errors.DetectorError` or a logged warning as the detector's ``on_error``
says, and keeps the detector's stats (a frozen dataclass with ``calls`` and ``errors``
counters) under one lock, so one detector may serve concurrent callers.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from shared_core.errors import DetectorError, NeedsAsyncError
from shared_core.llm_calls import TextLLM, aask, ask, generated_tokens

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    Stats = TypeVar("Stats", bound=DataclassInstance)
else:
    Stats = TypeVar("Stats")

OnError = Literal["raise", "skip"]


class DetectorCalls(Generic[Stats]):
    """Calls a detector's LLM and counts, in ``stats``, what happened.

    ``who`` names the detector in messages (``"LLM group detector 'x'"``); ``skipped`` says
    what a failed call means under ``on_error="skip"`` (logged on ``logger``, the detector's);
    ``fix`` is appended to the message for an answer that is not a str; ``instead`` names the
    detector's async method for :class:`~shared_core.errors.NeedsAsyncError`. With
    ``count_tokens``, the tokens the LLM reports generating during each call (see
    :func:`~shared_core.llm_calls.generated_tokens`) are added to ``stats.generated_tokens``.
    """

    def __init__(
        self,
        llm: TextLLM,
        stats: Stats,
        *,
        who: str,
        on_error: OnError,
        logger: logging.Logger,
        skipped: str,
        fix: str = "",
        instead: str = "afind_conflicts",
        count_tokens: bool = False,
    ) -> None:
        self.llm = llm
        self.who = who
        self.on_error: OnError = on_error
        self._logger = logger
        self._skipped = skipped
        self._fix = fix
        self._instead = instead
        self._count_tokens = count_tokens
        self._lock = threading.Lock()
        self._stats = stats

    @property
    def stats(self) -> Stats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats

    def count(self, **deltas: int) -> None:
        """Add ``deltas`` to the named counters."""
        with self._lock:
            current = self._stats
            self._stats = replace(
                current, **{name: getattr(current, name) + n for name, n in deltas.items()}
            )

    def ask(self, prompt: str) -> str | None:
        """The LLM's answer, or None when the call failed and ``on_error`` is ``"skip"``."""
        self.count(calls=1)
        before = self._tokens()
        try:
            answer = ask(self.llm, prompt, who=self.who, instead=self._instead)
        except NeedsAsyncError:
            raise  # a misuse of the sync path, not a failed call: never skipped
        except Exception as exc:
            self._failed(f"raised {type(exc).__name__}: {exc}", exc)
            return None
        finally:
            self._add_tokens(before)
        return self._checked(answer)

    async def aask(self, prompt: str) -> str | None:
        """:meth:`ask` for async callers (the LLM awaited, or run in a worker thread)."""
        self.count(calls=1)
        before = self._tokens()
        try:
            answer = await aask(self.llm, prompt)
        except Exception as exc:
            self._failed(f"raised {type(exc).__name__}: {exc}", exc)
            return None
        finally:
            self._add_tokens(before)
        return self._checked(answer)

    def _checked(self, answer: object) -> str | None:
        if isinstance(answer, str):
            return answer
        self._failed(f"returned a {type(answer).__name__}, not a str{self._fix}", None)
        return None

    def _failed(self, problem: str, cause: Exception | None) -> None:
        """Count a failed call, then raise DetectorError or log it, as on_error says."""
        self.count(errors=1)
        message = f"{self.who}: the llm callable {problem}"
        if self.on_error == "raise":
            raise DetectorError(message) from cause
        self._logger.warning("%s; %s (on_error='skip')", message, self._skipped)

    def _tokens(self) -> int | None:
        return generated_tokens(self.llm) if self._count_tokens else None

    def _add_tokens(self, before: int | None) -> None:
        after = self._tokens()
        if before is None or after is None:
            return
        with self._lock:
            current: Any = self._stats
            spent = (current.generated_tokens or 0) + max(after - before, 0)
            self._stats = replace(current, generated_tokens=spent)


__all__ = ["DetectorCalls"]
