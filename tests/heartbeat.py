"""Time limits in tests that survive a stalled test process: `Heartbeat` notes when the
process could not run at all, so a limit is checked on the time the service had."""

from __future__ import annotations

import threading
import time

BEAT_SECONDS = 0.01


class Heartbeat:
    """Notes when this process could not run at all: a thread that wakes every
    BEAT_SECONDS. A beat that comes late means every thread of the process stood still
    (a full garbage collection of the long-lived test worker, or the other xdist worker
    holding both cores); CI once saw a 1.4 s gap. Time limits on the service's answers
    are checked on a request's time less such gaps (`working`); a request that waits
    with the GIL released, as every wait for the database does, keeps the beat going."""

    def __init__(self) -> None:
        self.beats: list[float] = [time.monotonic()]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while not self.stop.wait(BEAT_SECONDS):
            self.beats.append(time.monotonic())

    def start(self) -> None:
        self.thread.start()

    def end(self) -> None:
        self.stop.set()
        self.thread.join()

    def working(self, started: float, ended: float) -> float:
        """Seconds of `started`..`ended` during which the process was able to run."""
        stalled = 0.0
        for before, after in zip(self.beats, self.beats[1:], strict=False):
            if after - before > 5 * BEAT_SECONDS:
                overlap = min(after, ended) - max(before, started)
                stalled += max(0.0, overlap - BEAT_SECONDS)
        return ended - started - stalled
