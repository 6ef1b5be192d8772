"""The heartbeat that the timed tests discount a stalled test process by."""

import pytest

from tests.heartbeat import Heartbeat


def test_the_heartbeat_discounts_only_the_time_the_process_stood_still():
    heart = Heartbeat()
    heart.beats = [0.0, 0.01, 0.02, 1.42, 1.43, 1.44]  # stood still from 0.02 to 1.42
    assert heart.working(0.0, 1.44) == pytest.approx(0.05)
    assert heart.working(1.0, 1.44) == pytest.approx(0.03)  # a request begun in the stall
    assert heart.working(0.0, 0.02) == pytest.approx(0.02)  # before it: counted whole
