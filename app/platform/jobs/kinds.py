"""The kinds of job a worker knows: each names its handler, how it is retried and its
lane.

Areas declare their kinds (a `JobKind` each) and the factory installs them in one list
(`create_app`), as it does the area hooks; a worker runs only the kinds it knows, so a
kind added by a newer release waits for a worker that knows it. A lane is a queue of its
own with threads of its own in the worker (app.platform.jobs.worker), so slow work in one
lane never holds up another.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import Flask, current_app


@dataclass(frozen=True)
class Task:
    """What a handler is given: the job's id (a key for idempotent work), its kind and
    payload, which run this is (1 the first; a rerun after a crash counts too) and the
    app's settings."""

    id: uuid.UUID
    kind: str
    payload: Mapping[str, Any]
    attempt: int
    config: Mapping[str, Any]


Handler = Callable[[Task], None]

DEFAULT_LANE = "default"


class GiveUp(Exception):
    """Raised by a handler when the job can never succeed: it is marked dead at once."""


@dataclass(frozen=True)
class JobKind:
    """A registered kind of job.

    `run` does the work in the worker's transaction, which commits together with the
    job's `done` mark; an exception rolls the work back and the job is tried again after
    `retry_delay`, until `max_attempts` runs or `max_age` since it was enqueued, then it
    is dead. `lease` bounds one run: a worker silent for longer is taken for dead and
    the job is run again elsewhere, so handlers must tolerate a rerun (at least once).
    `lane` names the queue its jobs wait in; with `fair`, jobs enqueued with the same
    `fair_key` (an account) run one at a time, so one key never takes more than one of
    the lane's threads.
    """

    name: str
    run: Handler
    max_attempts: int = 10
    max_age: timedelta = timedelta(days=1)
    lease: timedelta = timedelta(minutes=5)
    first_retry: timedelta = timedelta(seconds=30)
    longest_retry: timedelta = timedelta(hours=1)
    lane: str = DEFAULT_LANE
    fair: bool = False

    def retry_delay(self, attempt: int, rng: random.Random | None = None) -> timedelta:
        """Exponential back-off with jitter after failed run `attempt` (1, 2, ...): the
        ceiling doubles from `first_retry` up to `longest_retry`, and the wait is drawn
        between half the ceiling and the ceiling, so jobs that failed together (a mail
        server down) do not all come back in the same second."""
        ceiling = min(self.longest_retry, self.first_retry * 2 ** min(attempt - 1, 32))
        share = (rng or random).uniform(0.5, 1.0)
        return ceiling * share


class Registry:
    """The job kinds of an app, by name (immutable: `with_kinds` makes a new one)."""

    def __init__(self, kinds: Iterable[JobKind] = ()) -> None:
        self._kinds: dict[str, JobKind] = {}
        for kind in kinds:
            if kind.name in self._kinds:
                raise ValueError(f"job kind {kind.name!r} registered twice")
            self._kinds[kind.name] = kind

    def get(self, name: str) -> JobKind | None:
        return self._kinds.get(name)

    def __getitem__(self, name: str) -> JobKind:
        found = self._kinds.get(name)
        if found is None:
            raise LookupError(f"no job kind {name!r} is registered")
        return found

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._kinds))

    @property
    def fair(self) -> bool:
        """Whether a claim must leave out keys already running (some kind is `fair`)."""
        return any(kind.fair for kind in self._kinds.values())

    @property
    def lane_names(self) -> tuple[str, ...]:
        return tuple(sorted({kind.lane for kind in self._kinds.values()}))

    def lanes(self) -> dict[str, Registry]:
        """The kinds of each lane, by lane name (sorted)."""
        found: dict[str, list[JobKind]] = {}
        for kind in self._kinds.values():
            found.setdefault(kind.lane, []).append(kind)
        return {lane: Registry(found[lane]) for lane in sorted(found)}

    def with_kinds(self, *kinds: JobKind) -> Registry:
        return Registry([*self._kinds.values(), *kinds])


# Run by each worker on its clean-up path (hourly), in an app context; the worker commits.
# Given the worker's clock and the app's settings; returns how many rows went.
CleanUp = Callable[[datetime, Mapping[str, Any]], int]


def install_job_kinds(
    app: Flask, kinds: Iterable[JobKind], clean_ups: Iterable[CleanUp] = ()
) -> None:
    """`kinds` are the jobs a worker runs; `clean_ups` what it removes now and then beside
    finished jobs (the areas' records kept for a time, such as webhook deliveries)."""
    app.extensions["job_kinds"] = Registry(kinds)
    app.extensions["job_clean_ups"] = tuple(clean_ups)


def job_clean_ups(app: Flask) -> tuple[CleanUp, ...]:
    found: tuple[CleanUp, ...] = app.extensions.get("job_clean_ups", ())
    return found


def job_kinds(app: Flask | None = None) -> Registry:
    """The job kinds of `app` (default: the current app)."""
    target = app if app is not None else current_app
    registry: Registry = target.extensions.get("job_kinds") or Registry()
    return registry
