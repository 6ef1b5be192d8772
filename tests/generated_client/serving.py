"""The service as an integrator's client meets it: gunicorn on the test database with the
worker beside it (it sends the account mail and the webhook deliveries), as `make run`
starts them, its mail written to files (the file mail backend)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.serving import ROOT, gunicorn_serving


@contextmanager
def served_with_worker(
    database_url: str, root: Path, **settings: str
) -> Iterator[tuple[str, Path]]:
    """gunicorn and the worker on `database_url`, their files under `root`, `settings` on
    top: (base URL, mail folder)."""
    outbox = root / "outbox"
    environment = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "MAIL_BACKEND": "file",
        "MAIL_OUTBOX_DIR": str(outbox),
        "RATELIMIT_STORAGE_URI": "memory://",
        "IMAGE_ROOT": str(root / "images"),
        "MAP_TILE_ROOT": str(root / "tiles"),
        "ACCESS_LOG": "off",
        **settings,
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "wsgi", "worker", "--poll-seconds", "0.2"],
        cwd=ROOT,
        env={**os.environ, "LOG_LEVEL": "WARNING", **environment},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with gunicorn_serving(environment) as port:
            yield f"http://127.0.0.1:{port}", outbox
    finally:
        worker.terminate()
        worker.wait(timeout=30)
