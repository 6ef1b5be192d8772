"""The OpenAPI document is usable by an integrator: a client generated from the served
`/api/openapi.json` with openapi-python-client (no warning, no operation left out) runs
the scripted flow of flow.py against the service under gunicorn, on the test database
(SQLite, or PostgreSQL with TEST_DATABASE_URL)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.generated_client.flow import Flow
from tests.generated_client.generation import generate_client
from tests.generated_client.serving import served_with_worker


@pytest.fixture
def served(app, database_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """gunicorn and the worker on the test database: (base URL, mail folder). `app`
    empties the tables afterwards, as after any test."""
    with served_with_worker(database_url, tmp_path) as served:
        yield served


@pytest.mark.processes
def test_a_client_generated_from_the_document_runs_the_integrator_flow(served, tmp_path):
    base_url, outbox = served
    with urllib.request.urlopen(f"{base_url}/api/openapi.json", timeout=30) as answer:  # noqa: S310 - our own server
        document = json.load(answer)
    package = generate_client(document, tmp_path / "client")
    Flow(package, document, base_url, outbox).run()
