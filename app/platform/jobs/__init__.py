"""Durable background work: a job is a row written in the same transaction as the change
that asks for it (a rollback leaves none, a commit always has it), run later, at least
once, by a worker process (`flask worker`), with retries and back-off.

Ours rather than a queue library: the well-kept ones (Celery, RQ, Dramatiq, Huey, ...)
keep jobs in a broker of their own, so enqueueing cannot share the request's database
transaction, and none gives the same guarantees on PostgreSQL (row locks, SKIP LOCKED)
and on SQLite (the embedded default). One table and one claim query suffice here.

- `kinds`: what a job kind is (handler, retries, lease, lane) and the app's registry;
- `queue`: enqueue, claim, outcomes, clean-up, the backlog that /readyz reports;
- `worker`: the lanes' threads, their signals, and `run_due()` for tests;
- `listener`: the worker's own metrics listener (WORKER_METRICS_BIND).
"""

from app.platform.jobs.kinds import GiveUp, JobKind, Registry, Task, install_job_kinds, job_kinds
from app.platform.jobs.listener import parse_bind
from app.platform.jobs.queue import Backlog, backlog, enqueue, enqueue_many
from app.platform.jobs.worker import Worker, lane_threads, serve

__all__ = [
    "Backlog",
    "GiveUp",
    "JobKind",
    "Registry",
    "Task",
    "Worker",
    "backlog",
    "enqueue",
    "enqueue_many",
    "install_job_kinds",
    "job_kinds",
    "lane_threads",
    "parse_bind",
    "serve",
]
