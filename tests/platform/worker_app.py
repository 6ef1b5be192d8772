"""The app of the worker processes tests/platform/test_jobs.py starts (`flask --app
tests.platform.worker_app worker`): the test database named in WORKER_TEST_DATABASE_URL,
and the test-only job kind of `slow_job` beside the app's own."""

from __future__ import annotations

import os

from app import create_app
from app.platform.jobs import job_kinds
from tests.platform.slow_job import SLOW

app = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": os.environ["WORKER_TEST_DATABASE_URL"],
        "MAIL_BACKEND": "memory",
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "INFO",
    }
)
app.extensions["job_kinds"] = job_kinds(app).with_kinds(SLOW)
