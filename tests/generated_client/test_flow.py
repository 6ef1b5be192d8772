"""The OpenAPI document is usable by an integrator: a client generated from the served
`/api/openapi.json` with openapi-python-client (no warning, no operation left out) runs
the scripted flow of flow.py against the service under gunicorn, on the test database
(SQLite, or PostgreSQL with TEST_DATABASE_URL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.generated_client.flow import Flow
from tests.generated_client.generation import generate_client
from tests.serving import gunicorn_serving


@pytest.fixture
def served(app, database_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """gunicorn on the test database, its mail written to files: (base URL, mail folder).
    `app` empties the tables afterwards, as after any test."""
    outbox = tmp_path / "outbox"
    settings = {
        "APP_ENV": "testing",
        "DATABASE_URL": database_url,
        "MAIL_BACKEND": "file",
        "MAIL_OUTBOX_DIR": str(outbox),
        "RATELIMIT_STORAGE_URI": "memory://",
        "IMAGE_ROOT": str(tmp_path / "images"),
        "MAP_TILE_ROOT": str(tmp_path / "tiles"),
        "ACCESS_LOG": "off",
    }
    # The worker beside the server, as `make run` starts them: it sends the account mail.
    worker = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "wsgi", "worker", "--poll-seconds", "0.2"],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "LOG_LEVEL": "WARNING", **settings},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with gunicorn_serving(settings) as port:
            yield f"http://127.0.0.1:{port}", outbox
    finally:
        worker.terminate()
        worker.wait(timeout=30)


@pytest.mark.processes
def test_a_client_generated_from_the_document_runs_the_integrator_flow(served, tmp_path):
    base_url, outbox = served
    with urllib.request.urlopen(f"{base_url}/api/openapi.json", timeout=30) as answer:  # noqa: S310 - our own server
        document = json.load(answer)
    package = generate_client(document, tmp_path / "client")
    Flow(package, document, base_url, outbox).run()
