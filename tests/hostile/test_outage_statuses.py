"""Every operation of the OpenAPI document, with the database refusing connections,
answers a status its entry lists, as problem+json with a registered `code`: a status an
operation can answer and its entry does not list fails here (the server-level limits,
414 and 431, are checked under gunicorn in tests/platform/test_gunicorn.py)."""

from __future__ import annotations

import json
import socket
import uuid
from typing import Any

from flask_jwt_extended import create_access_token

from tests.conftest import make_test_app, unregistered_code
from tests.hostile.conftest import all_operations
from tests.hostile.corpus import Case, minimal_body, url_for_case


def refused_database_url() -> str:
    """A PostgreSQL address where nothing listens (a port just freed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/absent"


def path_values(path: str) -> dict[str, str]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return {name: str(uuid.uuid4()) for name in names}


def test_every_operation_answers_a_documented_status_when_the_database_is_away(tmp_path):
    app = make_test_app(refused_database_url(), tmp_path, DATABASE_CONNECT_TIMEOUT_SECONDS=1)
    client = app.test_client()
    with app.app_context():
        token = create_access_token(identity=str(uuid.uuid4()), additional_claims={"stamp": "s"})
    failures = []
    seen: set[int] = set()
    for op in all_operations():
        kwargs: dict[str, Any] = {}
        body = op.body
        if body is not None and body[0] == "application/json":
            kwargs["data"] = json.dumps(minimal_body(body[1], op.resolve))
            kwargs["content_type"] = "application/json"
        url = url_for_case(op, Case("outage", None), path_values(op.path))
        for headers in ({}, {"Authorization": f"Bearer {token}"}):
            response = client.open(url, method=op.method, headers=headers, **kwargs)
            response.get_data()
            status = response.status_code
            seen.add(status)
            if status == 500 or str(status) not in op.spec["responses"]:
                failures.append(f"{op.id}: {status} (documented {sorted(op.documented)})")
            elif status >= 400 and response.mimetype != "application/problem+json":
                failures.append(f"{op.id}: {status} as {response.mimetype}")
            elif status >= 400 and unregistered_code(response):
                failures.append(f"{op.id}: {unregistered_code(response)}")
            response.close()
    assert not failures, "\n".join(failures)
    assert 503 in seen  # the outage was met, not avoided
