"""The app of the worker processes that the fan-out crash tests start.

Run as `flask --app tests.api.notifications.fanout_worker_app worker`: the test database
named in FANOUT_TEST_DATABASE_URL, and the real fan-out job wrapped so that a test can see
which process ran which event and stop it in the middle of a delivery. Environment
variables tune each run; each is explained where it is read.
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
from app.services.webhooks import delivery
from app.services.webhooks.delivery import DRAIN

# Each run appends `start EVENT` then, after the real fan-out has written its inbox rows
# (in the job's transaction, not yet committed), `written EVENT` to the file
# `FANOUT_MARKS_DIR/PID`: which process ran which event. With FANOUT_HOLD_SECONDS set, a
# first run then sleeps that long before returning, so the test can kill the worker in the
# middle of a delivery.
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


# WEBHOOK_TEST_PORT lets webhook deliveries reach a test's receiver on 127.0.0.1 at that
# port; DRAIN_BUDGET_SECONDS sets the webhook drain job's budget (and so how long a killed
# run's deliveries stay claimed).
_port = os.environ.get("WEBHOOK_TEST_PORT")
if os.environ.get("DRAIN_BUDGET_SECONDS"):
    delivery.DRAIN_BUDGET = timedelta(seconds=float(os.environ["DRAIN_BUDGET_SECONDS"]))
app = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": os.environ["FANOUT_TEST_DATABASE_URL"],
        "MAIL_BACKEND": "memory",
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "INFO",
        **(
            {"WEBHOOKS_ALLOW_LOOPBACK": True, "WEBHOOK_ALLOWED_PORTS": [80, 443, int(_port)]}
            if _port
            else {}
        ),
    }
)


# FANOUT_LEASE_SECONDS shortens the fan-out job's lease so another worker may take the job
# soon after; DRAIN_LEASE_SECONDS shortens the webhook drain job's lease likewise.
def _leased(name: str, setting: str, **changes: object) -> object:
    kind = job_kinds(app)[name]
    lease = os.environ.get(setting)
    return dataclasses.replace(
        kind, lease=timedelta(seconds=float(lease)) if lease else kind.lease, **changes
    )


_kinds = {
    FAN_OUT: _leased(FAN_OUT, "FANOUT_LEASE_SECONDS", run=watched_fan_out),
    DRAIN: _leased(DRAIN, "DRAIN_LEASE_SECONDS"),
}
app.extensions["job_kinds"] = Registry(
    [_kinds.get(name) or job_kinds(app)[name] for name in job_kinds(app).names]  # type: ignore[misc]
)
