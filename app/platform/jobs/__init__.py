"""Durable background work: a job is a row written in the same transaction as the change
that asks for it (a rollback leaves none, a commit always has it), run later, at least
once, by a worker process (`flask worker`), with retries and back-off.

Ours rather than a queue library: the well-kept ones keep jobs in a broker of their own, so
enqueueing cannot share the request's database transaction, and none gives the same
guarantees on PostgreSQL (row locks, SKIP LOCKED) and on SQLite. Submodules: `kinds` (job
kinds and the registry), `queue` (enqueue, claim, outcomes, backlog), `worker` (the lanes'
threads, `run_due()` for tests), `listener` (the worker's metrics listener).
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
