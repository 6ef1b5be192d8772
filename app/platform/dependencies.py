"""The services an instance uses beside its database, as readiness and /metrics report them.

An area registers what it needs (`add_dependency`: the object store, by images and
exports), with a check that raises when the service does not answer within its own short
timeout. /readyz lists every dependency with whether it answered; the database and the
Redis of the rate limits make it 503 (app.platform.probes), a registered one only reports:
the instance still serves everything else. Each check also sets the
`location_notes_dependency_up` and `..._check_seconds` gauges (app.platform.metrics); the
read replica's lag, `location_notes_replica_lag_seconds`, is recorded here too."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask

from app.platform import metrics

EXTENSION = "dependencies"


@dataclass(frozen=True)
class Dependency:
    name: str  # as /readyz and the metrics' label name it: "objectStore"
    check: Callable[[], None]  # raises when the service does not answer
    serves: str  # what waits on it, for the operator: "image uploads and downloads"


def add_dependency(app: Flask, name: str, check: Callable[[], None], *, serves: str) -> None:
    app.extensions.setdefault(EXTENSION, {})[name] = Dependency(name, check, serves)


def record(name: str, up: bool, seconds: float) -> dict[str, Any]:
    """One dependency's state, in the metrics and as /readyz lists it."""
    metrics.DEPENDENCY_UP.labels(name).set(1 if up else 0)
    metrics.DEPENDENCY_CHECK_SECONDS.labels(name).set(seconds)
    return {"up": up, "checkSeconds": round(seconds, 3)}


def record_replica_lag(seconds: float | None) -> None:
    """The read replica's last measured lag (None: not measured, exported as +Inf)."""
    metrics.REPLICA_LAG_SECONDS.set(math.inf if seconds is None else seconds)


def check_registered(app: Flask) -> dict[str, dict[str, Any]]:
    """Every registered dependency checked now, by name."""
    found = {}
    for dependency in app.extensions.get(EXTENSION, {}).values():
        started = time.monotonic()
        try:
            dependency.check()
        except Exception:  # any error of its client means "not answering"
            up = False
        else:
            up = True
        found[dependency.name] = {
            **record(dependency.name, up, time.monotonic() - started),
            "serves": dependency.serves,
        }
    return found
