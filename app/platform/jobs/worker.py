"""The worker: claims due jobs and runs them one at a time, until told to stop.

`flask worker` runs `serve` (app/cli.py), and `make run` starts one beside gunicorn. Any
number of workers may run, on any number of machines: the claim (app.platform.jobs.queue)
is all they share. SIGTERM or SIGINT lets the current job finish, then the worker exits;
SIGKILL loses nothing either, the job's lease runs out and another run follows. Tests
drive `Worker.run_due()` in-process (tests/jobs.py).
"""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from flask import Flask

from app.models.base import utcnow
from app.models.job import WORKER_NAME_MAX_LENGTH, JobState
from app.platform.jobs.kinds import GiveUp, JobKind, Task, job_clean_ups, job_kinds
from app.platform.jobs.queue import (
    DONE,
    RETRIED,
    AnySession,
    app_session,
    claim,
    count_dead,
    fail,
    finish,
    remove_finished,
)

log = logging.getLogger(__name__)

CLEAN_UP_EVERY = timedelta(hours=1)
LONGEST_IDLE_WAIT_SECONDS = 30.0  # between tries while the database is away


def worker_name() -> str:
    """This worker in leases and logs: host, process, and a suffix for two in one process."""
    name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    return name[-WORKER_NAME_MAX_LENGTH:]


class Worker:
    """Runs the jobs of `app`'s registered kinds. `clock` and `rng` are for tests (time
    travel past a back-off, a fixed jitter)."""

    def __init__(
        self,
        app: Flask,
        *,
        name: str | None = None,
        clock: Callable[[], datetime] = utcnow,
        rng: random.Random | None = None,
    ) -> None:
        self.app = app
        self.name = name or worker_name()
        self.clock = clock
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not a secret
        self._cleaned_at: datetime | None = None

    def run_one(self) -> bool:
        """Claim one due job and run it; False when none is due."""
        with self.app.app_context():
            session = app_session()
            try:
                task = claim(session, job_kinds(self.app), self.name, self.clock())
                if task is None:
                    return False
                self._run(session, task)
                return True
            finally:
                session.remove()

    def run_due(self, limit: int | None = None) -> int:
        """Run due jobs until none is left (or `limit` ran); how many ran."""
        ran = 0
        while (limit is None or ran < limit) and self.run_one():
            ran += 1
        return ran

    def run(self, stop: threading.Event, *, poll_seconds: float, once: bool = False) -> int:
        """Run jobs until `stop` is set, waiting `poll_seconds` whenever none is due; with
        `once`, until none is due. A database error is logged and waited out (longer
        each time, up to half a minute): the worker outlives an outage."""
        ran = failures = 0
        while not stop.is_set():
            try:
                self.clean_up()
                if self.run_one():
                    ran, failures = ran + 1, 0
                    continue
                failures = 0
            except Exception:
                if once:
                    raise
                failures += 1
                log.warning("worker %s: claiming failed (%d in a row)", self.name, failures,
                            exc_info=failures == 1)  # fmt: skip
            if once:
                break
            backing_off = poll_seconds * 2 ** min(failures, 10)
            stop.wait(min(backing_off, max(poll_seconds, LONGEST_IDLE_WAIT_SECONDS)))
        return ran

    def clean_up(self) -> int:
        """Delete finished jobs past their keeping time, and run the areas' clean-ups
        (install_job_kinds), at most once per CLEAN_UP_EVERY."""
        now = self.clock()
        if self._cleaned_at is not None and now - self._cleaned_at < CLEAN_UP_EVERY:
            return 0
        config = self.app.config
        with self.app.app_context():
            session = app_session()
            try:
                removed = remove_finished(
                    session,
                    now=now,
                    keep_done=timedelta(hours=float(config["JOBS_KEEP_DONE_HOURS"])),
                    keep_dead=timedelta(days=float(config["JOBS_KEEP_DEAD_DAYS"])),
                )
                for tidy in job_clean_ups(self.app):
                    removed += tidy(now, config)
                session.commit()
            finally:
                session.remove()
        self._cleaned_at = now
        if removed:
            log.info("worker %s removed %d finished job(s) and expired record(s)",
                     self.name, removed)  # fmt: skip
        return removed

    def _run(self, session: AnySession, task: Task) -> None:
        kind = job_kinds(self.app)[task.kind]
        try:
            kind.run(task)
            held = finish(session, task, self.name, self.clock())
            session.commit()
        except Exception as error:
            session.rollback()
            self._record_failure(session, task, kind, error)
            return
        DONE.inc()
        if not held:
            log.warning("job %s (%s) finished after its lease ran out: it may run again",
                        task.id, task.kind)  # fmt: skip

    def _record_failure(
        self, session: AnySession, task: Task, kind: JobKind, error: Exception
    ) -> None:
        delay = None if isinstance(error, GiveUp) else kind.retry_delay(task.attempt, self.rng)
        state = fail(session, task, kind, self.name, error, self.clock(), retry_delay=delay)
        session.commit()
        if state is JobState.DEAD:
            count_dead(task.kind, task.id, task.attempt, f"{type(error).__name__}: {error}")
        elif state is JobState.QUEUED:
            RETRIED.inc()
            log.warning(
                "job %s (%s) run %d failed, next try in about %ds: %s: %s",
                task.id, task.kind, task.attempt, (delay or timedelta()).total_seconds(),
                type(error).__name__, error,
                exc_info=error if task.attempt == 1 else None,
            )  # fmt: skip


def serve(app: Flask, *, poll_seconds: float, once: bool = False, name: str | None = None) -> int:
    """Run a worker in this process until SIGTERM or SIGINT (each lets the current job
    finish), or with `once` until nothing is due. How many jobs ran."""
    stop = threading.Event()
    worker = Worker(app, name=name)

    def request_stop(signum: int, frame: Any) -> None:
        log.info("worker %s: %s, stopping after the current job", worker.name,
                 signal.Signals(signum).name)  # fmt: skip
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    log.info("worker %s started (kinds: %s)", worker.name, ", ".join(job_kinds(app).names))
    try:
        return worker.run(stop, poll_seconds=poll_seconds, once=once)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("worker %s stopped", worker.name)
