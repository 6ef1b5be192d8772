"""A test-only job kind that sleeps through its first run, for the tests that stop a real
worker process in the middle of a job. Each run writes `start PID` and `end PID` lines
to the file its payload names."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

from app.platform.jobs import JobKind, Task

LEASE = timedelta(seconds=3)


def sleep_then_mark(task: Task) -> None:
    marks = Path(task.payload["marks"])
    with marks.open("a") as out:
        out.write(f"start {os.getpid()}\n")
    if task.attempt == 1:
        time.sleep(float(task.payload["first_run_seconds"]))
    with marks.open("a") as out:
        out.write(f"end {os.getpid()}\n")


SLOW = JobKind("test.slow", sleep_then_mark, lease=LEASE)
