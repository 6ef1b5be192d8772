"""The wire's timestamp (app.platform.wire): UTC, milliseconds, `Z`, whatever the input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.platform.wire import wire_time


@pytest.mark.parametrize(
    ("moment", "written"),
    [
        (datetime(2026, 12, 6, 8, 20, 4, 123456, tzinfo=UTC), "2026-12-06T08:20:04.123Z"),
        (datetime(2026, 12, 6, 8, 20, 4), "2026-12-06T08:20:04.000Z"),  # naive: UTC
        (
            datetime(2026, 12, 6, 9, 20, 4, 999999, tzinfo=timezone(timedelta(hours=1))),
            "2026-12-06T08:20:04.999Z",  # truncated, never rounded into the next second
        ),
    ],
    ids=["aware", "naive", "another-zone"],
)
def test_a_moment_is_written_in_utc_with_milliseconds_and_z(moment, written):
    assert wire_time(moment) == written
