"""Lazy: one build shared by every thread, and a failed build is tried again."""

from __future__ import annotations

import threading
import time

import pytest

from shared_core.lazy import Lazy


def test_many_threads_share_one_build() -> None:
    calls: list[int] = []

    def build() -> object:
        calls.append(1)
        time.sleep(0.01)  # widen the window in which other threads ask
        return object()

    lazy = Lazy(build)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len({id(value) for value in seen}) == 1
    assert lazy.built


def test_a_failed_build_is_not_cached() -> None:
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk hiccup")
        return "loaded"

    lazy = Lazy(build)
    with pytest.raises(OSError, match="hiccup"):
        lazy.get()
    assert not lazy.built
    assert lazy.get() == "loaded"
    assert lazy.get() == "loaded"
    assert len(attempts) == 2
