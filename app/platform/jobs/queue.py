"""The queue's reads and writes: enqueue in the caller's transaction, claim a due job
under a lease, record what became of it, clean up, and measure the backlog.

Claiming: on PostgreSQL `SELECT ... FOR UPDATE SKIP LOCKED` picks the oldest due job no
other worker is claiming, then the lease is written and committed; on SQLite the claim
runs under `BEGIN IMMEDIATE` (the database's write lock), so claims take turns. Either
way no two workers hold one job's lease at once. A claim among fair kinds also leaves out
the keys that have a job running; such claims take turns per lane (an advisory lock), so
two workers cannot both take a job of the same key.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.orm import Session, scoped_session

from app.models.base import new_id, utcnow
from app.models.job import Job, JobState
from app.platform.database import begin_immediate, lock_for_write
from app.platform.jobs.kinds import JobKind, Registry, Task, job_kinds
from app.platform.metrics import JOBS_DEAD

log = logging.getLogger(__name__)

AnySession = Session | scoped_session[Any]
ERROR_MAX_LENGTH = 2000


def app_session() -> Any:
    """The current app's scoped session (Flask-SQLAlchemy's; the platform does not import
    app.extensions, which builds on it)."""
    return current_app.extensions["sqlalchemy"].session


def enqueue(
    kind: str,
    payload: Mapping[str, Any],
    *,
    delay: timedelta | None = None,
    session: AnySession | None = None,
    fair_key: str | None = None,
) -> Job:
    """Add a job of a registered `kind` to the caller's transaction: it exists if and
    only if that transaction commits. `payload` must be plain JSON (ids as strings); keep
    secrets out of it, as the row outlives the work (`JOBS_KEEP_DONE_HOURS`). A fair
    kind's jobs of one `fair_key` run one at a time."""
    job_kinds()[kind]  # an unknown kind is a programming error: fail where it is made
    now = utcnow()
    job = Job(
        id=new_id(),  # known at once: a caller may name its job (a key for idempotence)
        kind=kind,
        payload=json.loads(json.dumps(dict(payload))),  # TypeError here, not in a worker
        state=JobState.QUEUED,
        run_after_utc=now + delay if delay else now,
        attempts=0,
        created_utc=now,
        fair_key=fair_key,
    )
    (session or app_session()).add(job)
    return job


def enqueue_many(
    kind: str,
    payloads: Sequence[Mapping[str, Any]],
    *,
    delay: timedelta | None = None,
    session: AnySession | None = None,
) -> list[uuid.UUID]:
    """`enqueue` of many jobs of one kind in one multi-row INSERT (an event's mail to
    thousands of watchers); their ids, in the order of `payloads`."""
    job_kinds()[kind]
    now = utcnow()
    rows = [
        {
            "id": new_id(),
            "kind": kind,
            "payload": json.loads(json.dumps(dict(payload))),
            "state": JobState.QUEUED,
            "run_after_utc": now + delay if delay else now,
            "attempts": 0,
            "created_utc": now,
        }
        for payload in payloads
    ]
    if rows:
        (session or app_session()).execute(insert(Job), rows)
    return [row["id"] for row in rows]


def _due(now: datetime, names: tuple[str, ...], *, fair: bool = False) -> Any:
    due = select(Job).where(
        Job.state == JobState.QUEUED,
        Job.run_after_utc <= now,
        Job.kind.in_(names),
        or_(Job.locked_until_utc.is_(None), Job.locked_until_utc < now),
    )
    if fair:
        running = select(Job.fair_key).where(
            Job.state == JobState.QUEUED,
            Job.kind.in_(names),
            Job.locked_until_utc >= now,
            Job.fair_key.is_not(None),
        )
        due = due.where(or_(Job.fair_key.is_(None), Job.fair_key.not_in(running)))
    return due.order_by(Job.run_after_utc).limit(1)


def claim(session: AnySession, kinds: Registry, worker: str, now: datetime) -> Task | None:
    """Take the lease of the oldest due job of a kind in `kinds` and commit it; None when
    nothing is due. A job whose earlier runs all died with their worker (leases ran out
    `max_attempts` times) is marked dead instead of being run again."""
    names = kinds.names
    statement = _due(now, names, fair=kinds.fair)
    while names:
        if session.get_bind().dialect.name == "sqlite":
            # Look before taking the write lock: an idle worker polls without holding up
            # the web requests that write.
            found = session.scalar(statement.with_only_columns(Job.id))
            session.rollback()
            if found is None:
                return None
            begin_immediate(session.connection())
        elif kinds.fair:
            # The running keys are read under the lane's lock, held until the claim
            # commits: the next claimer sees this one's lease.
            lock_for_write(session, "jobs:claim:" + ",".join(kinds.lane_names), reread=False)
        job = session.scalars(statement.with_for_update(skip_locked=True)).first()
        if job is None:
            session.rollback()
            return None
        kind = kinds[job.kind]
        if job.attempts >= kind.max_attempts:
            earlier = f"; before that {job.last_error}" if job.last_error else ""
            _bury(job, now, f"the lease ran out: its worker stopped during the run{earlier}")
            dead = (job.kind, job.id, job.attempts, job.last_error)
            session.commit()
            count_dead(*dead)
            continue
        job.attempts += 1
        job.locked_until_utc = now + kind.lease
        job.locked_by = worker
        task = Task(
            id=job.id,
            kind=job.kind,
            payload=job.payload,
            attempt=job.attempts,
            config=current_app.config,
        )
        session.commit()
        return task
    return None


def _held(task: Task, worker: str) -> Any:
    """The job of `task` while `worker` still holds its lease."""
    return (
        update(Job)
        .where(Job.id == task.id, Job.state == JobState.QUEUED, Job.locked_by == worker)
        .execution_options(synchronize_session=False)
    )


def finish(session: AnySession, task: Task, worker: str, now: datetime) -> bool:
    """Mark the job done in the handler's transaction (the caller commits). False when
    the lease was lost meanwhile (another worker has it): the job may run twice."""
    result = session.execute(
        _held(task, worker).values(
            state=JobState.DONE, finished_utc=now, locked_until_utc=None, locked_by=None
        )
    )
    return bool(getattr(result, "rowcount", 0))


def fail(
    session: AnySession,
    task: Task,
    kind: JobKind,
    worker: str,
    error: BaseException,
    now: datetime,
    *,
    retry_delay: timedelta | None,
) -> JobState | None:
    """Record a failed run (the caller commits): the job waits `retry_delay`, or is dead
    when that is None, its attempts are spent or the retry would pass its `max_age`.
    None when the lease was lost meanwhile (another worker runs the job now)."""
    message = f"{type(error).__name__}: {error}"[:ERROR_MAX_LENGTH]
    job = session.get(Job, task.id, populate_existing=True)
    if job is None or job.state is not JobState.QUEUED or job.locked_by != worker:
        return None
    retry_at = now + retry_delay if retry_delay is not None else None
    if (
        retry_at is None
        or job.attempts >= kind.max_attempts
        or retry_at - job.created_utc > kind.max_age
    ):
        _bury(job, now, message)
        return JobState.DEAD
    job.run_after_utc = retry_at
    job.locked_until_utc = job.locked_by = None
    job.last_error = message
    return JobState.QUEUED


def _bury(job: Job, now: datetime, message: str) -> None:
    job.state = JobState.DEAD
    job.finished_utc = now
    job.locked_until_utc = job.locked_by = None
    job.last_error = message[:ERROR_MAX_LENGTH]


def count_dead(kind: str, job_id: Any, attempts: int, error: str | None) -> None:
    """Count and log a job given up (once its dead mark is committed)."""
    JOBS_DEAD.labels(kind=kind).inc()
    log.error("job %s (%s) is dead after %d run(s): %s", job_id, kind, attempts, error)


def remove_finished(
    session: AnySession, *, now: datetime, keep_done: timedelta, keep_dead: timedelta
) -> int:
    """Delete done jobs older than `keep_done` and dead ones older than `keep_dead` (the
    caller commits). How many went."""
    result = session.execute(
        delete(Job)
        .where(
            or_(
                (Job.state == JobState.DONE) & (Job.finished_utc < now - keep_done),
                (Job.state == JobState.DEAD) & (Job.finished_utc < now - keep_dead),
            )
        )
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)


@dataclass(frozen=True)
class LaneBacklog:
    """One lane's jobs due and not being run, and how long the oldest has been due."""

    waiting: int
    oldest_waiting_seconds: float | None


@dataclass(frozen=True)
class Backlog:
    """Jobs due and not being run (`waiting`), how long the oldest of them has been due,
    and how many are dead: a growing age means no worker runs, or too few. `lanes` splits
    the waiting jobs by lane (every lane of the app, kinds no lane knows under `unknown`)."""

    waiting: int
    oldest_waiting_seconds: float | None
    dead: int
    lanes: Mapping[str, LaneBacklog] = field(default_factory=dict)


UNKNOWN_LANE = "unknown"


def backlog(session: AnySession, now: datetime | None = None) -> Backlog:
    moment = now or utcnow()
    rows = session.execute(
        select(Job.kind, func.count(), func.min(Job.run_after_utc))
        .where(
            Job.state == JobState.QUEUED,
            Job.run_after_utc <= moment,
            or_(Job.locked_until_utc.is_(None), Job.locked_until_utc < moment),
        )
        .group_by(Job.kind)
    ).all()
    dead = session.scalar(select(func.count()).where(Job.state == JobState.DEAD)) or 0
    kinds = job_kinds()
    lanes: dict[str, tuple[int, datetime | None]] = dict.fromkeys(kinds.lanes(), (0, None))
    for kind, count, oldest in rows:
        known = kinds.get(kind)
        lane = known.lane if known is not None else UNKNOWN_LANE
        waiting, earliest = lanes.get(lane, (0, None))
        lanes[lane] = (waiting + int(count), _earlier(earliest, oldest))
    total = sum(waiting for waiting, _ in lanes.values())
    oldest_of_all = None
    for _, earliest in lanes.values():
        oldest_of_all = _earlier(oldest_of_all, earliest)
    return Backlog(
        waiting=total,
        oldest_waiting_seconds=_age(moment, oldest_of_all),
        dead=int(dead),
        lanes={
            lane: LaneBacklog(waiting, _age(moment, earliest))
            for lane, (waiting, earliest) in sorted(lanes.items())
        },
    )


def _earlier(one: datetime | None, other: datetime | None) -> datetime | None:
    if one is None or other is None:
        return one or other
    return min(one, other)


def _age(now: datetime, since: datetime | None) -> float | None:
    return (now - since).total_seconds() if since is not None else None
