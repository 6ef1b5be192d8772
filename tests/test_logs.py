"""Logs carry the request id and never a trackable secret."""

from __future__ import annotations

import logging

import pytest

from app.logs import JsonFormatter, redact
from tests.conftest import make_test_app


@pytest.fixture
def app(database_url, tmp_path):
    """An app of this module's own: a test adds a route to it."""
    app = make_test_app(database_url, tmp_path)
    with app.app_context():
        yield app


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("GET /trackable/LNK7M2Q9XT HTTP/1.1", "GET /trackable/[redacted] HTTP/1.1"),
        ("GET /trackable/pasted/with/slashes HTTP/1.1", "GET /trackable/[redacted] HTTP/1.1"),
        (
            "GET /api/trackables/lookup?code=LN7K&x=1",
            "GET /api/trackables/lookup?code=[redacted]&x=1",
        ),
        (
            '{"accessCode": "LN12345678", "body": "hi"}',
            '{"accessCode": "[redacted]", "body": "hi"}',
        ),
        ("GET /de/trackables/LNK7M2Q9XT HTTP/1.1", "GET /de/trackables/[redacted] HTTP/1.1"),
        (
            "GET /en/trackables/active/0b0c6c1e-6a35-4a4e-9d57-1d2b1b3a2f10 HTTP/1.1",
            "GET /en/trackables/active/0b0c6c1e-6a35-4a4e-9d57-1d2b1b3a2f10 HTTP/1.1",
        ),
        ("GET /api/trackables/abc HTTP/1.1", "GET /api/trackables/abc HTTP/1.1"),
        (
            "GET /api/notes/public/bounds?minLatitude=1",
            "GET /api/notes/public/bounds?minLatitude=1",
        ),
    ],
)
def test_secrets_are_redacted(line, expected):
    assert redact(line) == expected


def test_app_log_lines_carry_the_request_id(app, api, caplog):
    @app.get("/api/probe-log")
    def probe_log():
        logging.getLogger("app.probe").warning("visiting /trackable/LNSECRET11")
        return {}

    with caplog.at_level(logging.WARNING, logger="app"):
        api.get("/api/probe-log", headers={"X-Request-ID": "rid-42"})
    record = next(r for r in caplog.records if r.name == "app.probe")
    entry = JsonFormatter().format(record)
    assert '"requestId": "rid-42"' in entry
    assert "LNSECRET11" not in entry
