"""Time: aware datetimes at the edges, integer epoch microseconds (UTC) inside.

Naive datetimes are rejected, never guessed. Inside the ledger an instant is an ``int`` of
microseconds since the Unix epoch in UTC: exact, totally ordered, cheap to compare and the native
type of every store. ``OPEN`` stands for "no end" (an open validity, a record still believed).
"""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from shared_core.errors import InvalidInputError, InvalidInputTypeError

Instant = int
"""Microseconds since 1970-01-01T00:00:00Z."""

TimeInput = datetime | str | int | float
"""A time as callers may pass one (:func:`to_datetime` reads it): an aware datetime, an ISO-8601
string with a UTC offset (``"2024-05-01T00:00:00Z"``) or epoch seconds."""

OPEN: Instant = 2**63 - 1
"""Sentinel for an open end (never a missing value: stores filter on it)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_AWARE_FIX = "pass a timezone-aware datetime, e.g. datetime(2024, 5, 1, tzinfo=timezone.utc)"


@runtime_checkable
class Clock(Protocol):
    """Source of record time (when the memory learned something)."""

    def now(self) -> datetime:
        """The current time as an aware datetime."""
        ...


class SystemClock:
    """The system clock, in UTC: the default record clock of every ledger and memory."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to; for tests, demos and replaying logs.

    Pass the same clock to the ledger and the memory so that record times follow it. Safe to
    share between threads.

    Args:
        start: the time :meth:`now` returns until :meth:`set` or :meth:`advance` moves it.

    Raises:
        InvalidInputError: ``start`` is not a timezone-aware datetime.
    """

    def __init__(self, start: datetime) -> None:
        self._now = require_aware(start, "start")
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (it may go backwards; the ledger keeps record time monotonic)."""
        with self._lock:
            self._now = require_aware(when, "when")

    def advance(self, delta: timedelta = timedelta(seconds=1)) -> datetime:
        """Move forward by ``delta`` and return the new time."""
        with self._lock:
            self._now = self._now + delta
            return self._now


def require_aware(value: object, field: str) -> datetime:
    """Return ``value`` if it is a timezone-aware datetime, else raise a clear error."""
    if not isinstance(value, datetime):
        raise InvalidInputError(
            field, f"expected a datetime, got {type(value).__name__}", _AWARE_FIX
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(field, f"naive datetime {value.isoformat()}", _AWARE_FIX)
    return value


def _microseconds(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_FIRST: Instant = _microseconds(datetime.min.replace(tzinfo=UTC) - _EPOCH)
_LAST: Instant = _microseconds(datetime.max.replace(tzinfo=UTC) - _EPOCH)


def to_instant(value: datetime, field: str = "datetime") -> Instant:
    """Aware datetime -> epoch microseconds (UTC).

    An aware datetime near year 1 or 9999 whose offset carries it outside years 1-9999 in UTC
    (``datetime.max`` at -14:00, say) is refused: it could never be turned back into a datetime.
    """
    instant = _microseconds(require_aware(value, field) - _EPOCH)
    if not _FIRST <= instant <= _LAST:
        raise InvalidInputError(
            field,
            f"{value.isoformat()} is outside years 1-9999 once converted to UTC",
            "pass a datetime between 0001-01-01 and 9999-12-31 in UTC",
        )
    return instant


def from_instant(value: Instant) -> datetime:
    """Epoch microseconds -> aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=value)


def optional_instant(value: datetime | None, field: str) -> Instant | None:
    """Like :func:`to_instant` but passes ``None`` through."""
    return None if value is None else to_instant(value, field)


def parse_datetime(text: str, field: str) -> datetime:
    """Parse an ISO-8601 string that carries a UTC offset (``Z`` or ``+02:00``)."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise InvalidInputError(
            field, f"{text!r} is not an ISO-8601 datetime", "use e.g. 2024-05-01T00:00:00Z"
        ) from exc
    if value.tzinfo is None:
        raise InvalidInputError(
            field, f"{text!r} has no UTC offset", "append Z or an offset, e.g. 2024-05-01T00:00Z"
        )
    return value


def to_datetime(value: object, field: str) -> datetime | None:
    """An aware datetime from an aware datetime, an ISO-8601 string with an offset or epoch
    seconds (:data:`TimeInput`); ``None`` stays ``None``. The one reader of times that callers
    pass: the memory and every adapter accept the same, with the same messages."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return require_aware(value, field)
    if isinstance(value, str):
        return parse_datetime(value, field)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            if not math.isfinite(value):
                raise ValueError(f"{value} is not finite")
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInputError(
                field, f"{value!r} is not a usable epoch time ({exc})", "use finite epoch seconds"
            ) from exc
    raise InvalidInputTypeError(
        field,
        f"type {type(value).__name__} is not a time",
        "use an aware datetime, an ISO-8601 string with an offset, or epoch seconds",
    )
