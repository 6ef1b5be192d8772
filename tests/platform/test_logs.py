"""Logs carry the request id and never a trackable secret."""

from __future__ import annotations

import logging

import pytest

from app.platform.logs import JsonFormatter, RedactingFormatter, redact, redact_unmatched
from tests.conftest import serve_test_app

PROBE: list[str] = []  # what the probe route logs: a format and its arguments


def add_probe_route(app):
    @app.get("/api/probe-log")
    def probe_log():
        logging.getLogger("app.probe").warning(*PROBE)
        return {}


@pytest.fixture
def app(database_url, tmp_path_factory):
    """The worker's app with this module's probe route, which logs what PROBE holds."""
    yield from serve_test_app(database_url, tmp_path_factory, {}, add_probe_route)


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
        (
            "{'secret_code': 'Kestrel-Vault_73', 'qr_token': 'aB3-x_9', 'text': 'hi'}",
            "{'secret_code': '[redacted]', 'qr_token': '[redacted]', 'text': 'hi'}",
        ),
        (
            '{"secretCode": "LN12345678", "scanUrl": "https://n.example/trackable/aB3-x_9"}',
            # (the entry route takes anything after /trackable/: the rest of the line goes)
            '{"secretCode": "[redacted]", "scanUrl": "https://n.example/trackable/[redacted]',
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
    PROBE[:] = ["visiting /trackable/LNSECRET11"]
    with caplog.at_level(logging.WARNING, logger="app"):
        api.get("/api/probe-log", headers={"X-Request-ID": "rid-42"})
    record = next(r for r in caplog.records if r.name == "app.probe")
    entry = JsonFormatter().format(record)
    assert '"request_id": "rid-42"' in entry  # one name, as on access lines
    assert "LNSECRET11" not in entry


# Percent-encoded forms the server decodes before routing: each one unlocks (or is looked
# up) like the plain form, so none may reach a log with its code.
ENCODED_SECRETS = [
    "GET /trackabl%65/LNSECRET11 HTTP/1.1",
    "GET /%74rackable/LNSECRET11 HTTP/1.1",
    "GET /%74%72%61%63%6B%61%62%6C%65/LNSECRET11 HTTP/1.1",
    "GET /trackable%2FLNSECRET11 HTTP/1.1",
    "GET /trackable%2fLNSECRET11 HTTP/1.1",
    "GET /api/trackables/lookup?%63ode=LNSECRET11 HTTP/1.1",
    "GET /api/trackables/lookup?x=1&c%6Fde=LNSECRET11 HTTP/1.1",
    "GET /api/trackables/lookup?%61ccessCode=LNSECRET11 HTTP/1.1",
    "%63ode=LNSECRET11",
    "GET /de/tr%61ckables/LNSECRET11 HTTP/1.1",
    "GET /de/trackables%2FLNSECRET11 HTTP/1.1",
    # Decoded twice (a proxy that decodes once, then the server): redacted all the same.
    "GET /trackabl%2565/LNSECRET11 HTTP/1.1",
]


@pytest.mark.parametrize("line", ENCODED_SECRETS)
def test_percent_encoded_secrets_are_redacted(line):
    redacted = redact(line)
    assert "LNSECRET11" not in redacted
    assert "[redacted]" in redacted


def test_a_redacted_encoded_path_stays_one_printable_token():
    """The decoded path is written re-encoded: a `%0A` in it cannot start a forged line."""
    redacted = redact('"GET /trackabl%65/LNSECRET11%0A%22forged HTTP/1.1" 302')
    assert redacted == '"GET /trackable/[redacted]%0A%22forged HTTP/1.1" 302'
    assert redact("GET /api/notes%20x/%0A?q=1 HTTP/1.1") == "GET /api/notes%20x/%0A?q=1 HTTP/1.1"


@pytest.mark.parametrize("line", ENCODED_SECRETS)
def test_app_log_lines_redact_percent_encoded_secrets(app, api, caplog, line):
    PROBE[:] = ["request %s", line]
    with caplog.at_level(logging.WARNING, logger="app"):
        api.get("/api/probe-log")
    record = next(r for r in caplog.records if r.name == "app.probe")
    assert "LNSECRET11" not in JsonFormatter().format(record)
    assert "LNSECRET11" not in RedactingFormatter("%(message)s").format(record)


def test_the_development_servers_access_log_is_redacted(app, caplog):
    """`flask run` logs each request through the `werkzeug` logger."""
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        logging.getLogger("werkzeug").info(
            '%s - - "%s" %s -', "127.0.0.1", "GET /trackabl%65/LNSECRET11 HTTP/1.1", "302"
        )
    assert caplog.records
    assert all("LNSECRET11" not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("GET /LNJ7CAG1RF HTTP/1.1", "GET unmatched HTTP/1.1"),
        ("GET /sunflower-my-own-code?x=1 HTTP/1.1", "GET unmatched HTTP/1.1"),
        ("/LN-7K3M9Q/extra", "unmatched"),
        ("/de/ab12cd?c=LNJ7CAG1RF", "unmatched"),
    ],
)
def test_a_path_no_route_matched_is_logged_without_its_segments(line, expected):
    """Bring-your-own codes have no shape: nothing of an unmatched path is kept."""
    assert redact_unmatched(line) == expected
