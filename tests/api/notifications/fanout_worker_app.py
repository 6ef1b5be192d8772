"""The app of the worker processes the crash tests start (`flask --app
tests.api.notifications.fanout_worker_app worker`): the test database named in
FANOUT_TEST_DATABASE_URL, and the real fan-out job wrapped so that a test can see and
stop it.

Each run appends `start EVENT` then, after the real fan-out has written its inbox rows
(in the job's transaction, not yet committed), `written EVENT` to the file
`FANOUT_MARKS_DIR/PID`: which process ran which event. With FANOUT_HOLD_SECONDS set, a
first run then sleeps that long before returning, so the test can kill the worker in the
middle of a delivery; FANOUT_LEASE_SECONDS shortens the job's lease so another worker
may take the job soon after.
"""

from __future__ import annotations

import dataclasses
import os
import time
from datetime import timedelta
from pathlib import Path

from app import create_app
from app.platform.jobs import Registry, Task, job_kinds
from app.services.events.fanout import fan_out
from app.services.events.recording import FAN_OUT

MARKS = Path(os.environ["FANOUT_MARKS_DIR"])
HOLD_SECONDS = float(os.environ.get("FANOUT_HOLD_SECONDS", "0"))


def mark(line: str) -> None:
    with (MARKS / str(os.getpid())).open("a") as out:
        out.write(line + "\n")


def watched_fan_out(task: Task) -> None:
    mark(f"start {task.payload['eventId']}")
    fan_out(task)
    mark(f"written {task.payload['eventId']}")
    if HOLD_SECONDS and task.attempt == 1:
        time.sleep(HOLD_SECONDS)


app = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": os.environ["FANOUT_TEST_DATABASE_URL"],
        "MAIL_BACKEND": "memory",
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "INFO",
    }
)
_real = job_kinds(app)[FAN_OUT]
_lease = os.environ.get("FANOUT_LEASE_SECONDS")
_watched = dataclasses.replace(
    _real,
    run=watched_fan_out,
    lease=timedelta(seconds=float(_lease)) if _lease else _real.lease,
)
app.extensions["job_kinds"] = Registry(
    [_watched if name == FAN_OUT else job_kinds(app)[name] for name in job_kinds(app).names]
)
