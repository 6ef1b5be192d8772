"""The worker: claims due jobs and runs them, one at a time per thread, until told to stop.

`flask worker` runs `serve` (app/cli.py), and `make run` starts one beside gunicorn: a
thread per lane (WORKER_LANES sets how many), so account mail never waits behind a
webhook delivery. Any number of workers may run, on any number of machines: the claim
(app.platform.jobs.queue) is all they share. SIGTERM or SIGINT lets the current jobs
finish, then the worker exits; SIGKILL loses nothing either, a job's lease runs out and
another run follows. Tests drive `Worker.run_due()` in-process (tests/jobs.py).
"""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from flask import Flask

from app.models.base import utcnow
from app.models.job import WORKER_NAME_MAX_LENGTH, JobState
from app.platform.jobs.kinds import GiveUp, JobKind, Registry, Task, job_clean_ups, job_kinds
from app.platform.jobs.listener import serve_metrics
from app.platform.jobs.queue import (
    AnySession,
    app_session,
    claim,
    count_dead,
    fail,
    finish,
    remove_finished,
)
from app.platform.metrics import JOBS_DONE, JOBS_FAILED, JOBS_RETRIED, JOBS_RUN

log = logging.getLogger(__name__)

CLEAN_UP_EVERY = timedelta(hours=1)
LONGEST_IDLE_WAIT_SECONDS = 30.0  # between tries while the database is away


def worker_name() -> str:
    """This worker in leases and logs: host, process, and a suffix for two in one process."""
    name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    return name[-WORKER_NAME_MAX_LENGTH:]


class Worker:
    """Runs the jobs of `app`'s registered kinds, or of one `lane` of them. `clock` and
    `rng` are for tests (time travel past a back-off, a fixed jitter)."""

    def __init__(
        self,
        app: Flask,
        *,
        name: str | None = None,
        clock: Callable[[], datetime] = utcnow,
        rng: random.Random | None = None,
        lane: str | None = None,
    ) -> None:
        self.app = app
        self.name = name or worker_name()
        self.clock = clock
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not a secret
        self.lane = lane
        self._cleaned_at: datetime | None = None

    def kinds(self) -> Registry:
        """The kinds this worker claims (read each time: tests change the app's)."""
        every = job_kinds(self.app)
        if self.lane is None:
            return every
        return every.lanes().get(self.lane) or Registry()

    def run_one(self) -> bool:
        """Claim one due job and run it; False when none is due."""
        with self.app.app_context():
            session = app_session()
            try:
                task = claim(session, self.kinds(), self.name, self.clock())
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
                if self.lane is None:
                    self.clean_up()  # a lane's threads leave it to `serve`
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
        JOBS_RUN.labels(kind=task.kind).inc()
        try:
            kind.run(task)
            held = finish(session, task, self.name, self.clock())
            session.commit()
        except Exception as error:
            session.rollback()
            JOBS_FAILED.labels(kind=task.kind).inc()
            self._record_failure(session, task, kind, error)
            return
        JOBS_DONE.labels(kind=task.kind).inc()
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
            JOBS_RETRIED.labels(kind=task.kind).inc()
            log.warning(
                "job %s (%s) run %d failed, next try in about %ds: %s: %s",
                task.id, task.kind, task.attempt, (delay or timedelta()).total_seconds(),
                type(error).__name__, error,
                exc_info=error if task.attempt == 1 else None,
            )  # fmt: skip


def lane_threads(app: Flask, setting: str | None = None) -> dict[str, int]:
    """How many threads each lane of `app`'s kinds gets: one, unless `setting` (or
    WORKER_LANES) says otherwise, as `lane=threads` pairs (`webhooks=4,exports=0`; 0
    leaves a lane to other workers). An unknown lane or a bad count is a ValueError."""
    known = job_kinds(app).lanes()
    plan = dict.fromkeys(known, 1)
    text = setting if setting is not None else str(app.config.get("WORKER_LANES") or "")
    for entry in filter(None, (part.strip() for part in text.split(","))):
        lane, _, count = entry.partition("=")
        lane = lane.strip()
        if lane not in known:
            raise ValueError(f"WORKER_LANES names no lane {lane!r} (lanes: {', '.join(known)})")
        if not count.strip().isdigit():
            raise ValueError(f"WORKER_LANES: {entry!r} is not lane=threads")
        plan[lane] = int(count)
    return plan


def serve(
    app: Flask,
    *,
    poll_seconds: float,
    once: bool = False,
    name: str | None = None,
    lanes: Mapping[str, int] | None = None,
) -> int:
    """Run a worker in this process until SIGTERM or SIGINT (each lets the current jobs
    finish), or with `once` until nothing is due. A thread per lane thread of `lanes`
    (default `lane_threads(app)`); this thread tidies up (`Worker.clean_up`). How many
    jobs ran."""
    stop = threading.Event()
    base = name or worker_name()
    tidier = Worker(app, name=base)

    def request_stop(signum: int, frame: Any) -> None:
        log.info("worker %s: %s, stopping after the current jobs", base,
                 signal.Signals(signum).name)  # fmt: skip
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    plan = {lane: count for lane, count in (lanes or lane_threads(app)).items() if count > 0}
    log.info(
        "worker %s started (kinds: %s; lanes: %s)",
        base,
        ", ".join(job_kinds(app).names),
        ", ".join(f"{lane}={count}" for lane, count in plan.items()),
    )
    bind = str(app.config.get("WORKER_METRICS_BIND") or "").strip()
    listener = serve_metrics(app, bind) if bind and not once else None
    try:
        if once:
            return tidier.run(stop, poll_seconds=poll_seconds, once=True)
        return _serve_lanes(app, base, plan, stop, tidier, poll_seconds)
    finally:
        if listener is not None:
            listener.shutdown()
            listener.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("worker %s stopped", base)


def _serve_lanes(
    app: Flask,
    base: str,
    plan: Mapping[str, int],
    stop: threading.Event,
    tidier: Worker,
    poll_seconds: float,
) -> int:
    ran: list[int] = []
    failed: list[str] = []

    def work(worker: Worker) -> None:
        try:
            ran.append(worker.run(stop, poll_seconds=poll_seconds))
        except BaseException:
            log.exception("worker %s: its thread failed; the worker stops", worker.name)
            failed.append(worker.name)
            stop.set()  # a lane without its thread: exit, and let the supervisor restart

    threads = [
        threading.Thread(
            target=work,
            args=(Worker(app, name=f"{base}:{lane}{index}", lane=lane),),
            name=f"jobs-{lane}-{index}",
            daemon=True,
        )
        for lane, count in plan.items()
        for index in range(count)
    ]
    for thread in threads:
        thread.start()
    failures = 0
    while not stop.is_set():
        try:
            tidier.clean_up()
            failures = 0
        except Exception:
            failures += 1
            log.warning("worker %s: the clean-up failed (%d in a row)", base, failures,
                        exc_info=failures == 1)  # fmt: skip
        stop.wait(min(2.0**failures, LONGEST_IDLE_WAIT_SECONDS))
    for thread in threads:
        thread.join()
    if failed:
        raise RuntimeError(f"the threads {', '.join(failed)} failed (logged above)")
    return sum(ran)
