"""Background jobs in tests: the due jobs run in this process, as a worker would run them
(app.platform.jobs), whenever a test wants their effects; and test-only job kinds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask

from app.platform.jobs import JobKind, Worker, job_kinds
from app.platform.mail import Mail, outbox


def run_jobs(app: Flask, **worker: object) -> int:
    """Run every job due now (each in its own app context, as a worker does); how many."""
    return Worker(app, name="tests", **worker).run_due()  # type: ignore[arg-type]


def delivered_mail(app: Flask) -> list[Mail]:
    """The memory outbox once the worker has sent what is due."""
    run_jobs(app)
    return outbox(app)


@contextmanager
def job_kinds_added(app: Flask, *kinds: JobKind) -> Iterator[None]:
    """`kinds` registered on `app` for the block (the test app is shared)."""
    before = job_kinds(app)
    app.extensions["job_kinds"] = before.with_kinds(*kinds)
    try:
        yield
    finally:
        app.extensions["job_kinds"] = before
