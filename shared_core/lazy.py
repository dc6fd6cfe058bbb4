"""A value built on first use, once, even when several threads ask at the same time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """Holds ``build``'s result after the first :meth:`get` (double-checked under a lock).

    A ``build`` that raises leaves nothing cached, so the next :meth:`get` tries again.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    @property
    def built(self) -> bool:
        """Whether the value exists yet."""
        return self._built

    def get(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]
