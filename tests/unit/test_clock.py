"""Time at the edges: aware datetimes only, exact microsecond instants inside."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.clock import (
    Clock,
    ManualClock,
    SystemClock,
    from_instant,
    parse_datetime,
    to_instant,
)
from shared_core.errors import InvalidInputError

aware = st.datetimes(
    min_value=datetime(1, 1, 2),  # noqa: DTZ001 - hypothesis bounds are naive by design
    max_value=datetime(9999, 12, 30),  # noqa: DTZ001
    timezones=st.just(UTC),
)


@given(aware)
def test_instants_round_trip_exactly(value: datetime) -> None:
    assert from_instant(to_instant(value)) == value


@given(aware, aware)
def test_instants_keep_the_order(a: datetime, b: datetime) -> None:
    assert (a < b) == (to_instant(a) < to_instant(b))


def test_naive_datetimes_are_refused_not_guessed() -> None:
    with pytest.raises(InvalidInputError, match="naive") as caught:
        to_instant(datetime(2024, 1, 1), "valid_at")  # noqa: DTZ001
    assert caught.value.field == "valid_at"
    with pytest.raises(InvalidInputError, match="no UTC offset"):
        parse_datetime("2024-01-01T00:00:00", "--valid-at")
    with pytest.raises(InvalidInputError, match="not an ISO-8601"):
        parse_datetime("yesterday", "--valid-at")


def test_parse_datetime_accepts_offsets() -> None:
    assert parse_datetime("2024-01-01T02:00+02:00", "x") == datetime(2024, 1, 1, tzinfo=UTC)
    assert parse_datetime("2024-01-01T00:00Z", "x") == datetime(2024, 1, 1, tzinfo=UTC)


def test_clocks() -> None:
    manual = ManualClock(datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=1))))
    assert isinstance(manual, Clock)
    assert isinstance(SystemClock(), Clock)
    later = manual.advance(timedelta(days=1))
    assert manual.now() == later
    manual.set(datetime(2020, 1, 1, tzinfo=UTC))
    assert manual.now().year == 2020
    assert SystemClock().now().tzinfo is not None
    with pytest.raises(InvalidInputError):
        ManualClock(datetime(2024, 1, 1))  # noqa: DTZ001
