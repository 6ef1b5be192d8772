"""Error reporting and tracing (app.platform.telemetry): off by default, with nothing
imported or instrumented; a setting whose extra is missing refuses the start; and the
scrubbing that whatever leaves the service passes through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sentry_sdk
from flask import Flask
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from opentelemetry.sdk.trace import TracerProvider

import app.platform.telemetry as telemetry
from app.platform.telemetry import MissingExtra, reporting
from app.platform.telemetry.scrub import origin, scrub_text
from tests.conftest import make_test_app

ROOT = Path(__file__).resolve().parents[2]
SECRET = "LN7QK4M2XT"


# --- off by default ----------------------------------------------------------------------


def test_without_settings_nothing_reports_or_traces(app: Flask):
    state = app.extensions[telemetry.EXTENSION]
    assert state.reporters == []
    assert state.tracing is None
    assert not sentry_sdk.get_client().is_active()
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)
    assert not getattr(app, "_is_instrumented_by_opentelemetry", False)
    assert not RequestsInstrumentor().is_instrumented_by_opentelemetry
    assert not SQLAlchemyInstrumentor().is_instrumented_by_opentelemetry

    def track(error: Exception) -> str:
        return "ERR-00000000"

    assert reporting(app, track) is track  # the 500s are tracked as before, nothing more


def test_without_settings_neither_library_is_even_imported(tmp_path: Path):
    """A fresh process making the app loads no Sentry or OpenTelemetry module."""
    script = (
        "import sys\n"
        "from app import create_app\n"
        f"create_app({{'TESTING': True, 'SQLALCHEMY_DATABASE_URI': 'sqlite:///{tmp_path}/a.db',"
        " 'RATELIMIT_STORAGE_URI': 'memory://', 'MAIL_BACKEND': 'memory'})\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sentry_sdk', 'opentelemetry'}))\n"
    )
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SENTRY_", "OTEL_"))
    }
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"')) == []


# --- a setting without its extra -----------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "package", "module", "extra"),
    [
        (
            {"SENTRY_DSN": "https://public@sentry.example.org/1"},
            "sentry_sdk",
            "error_reports",
            "sentry",
        ),
        ({"OTEL_TRACING": True}, "opentelemetry", "tracing", "otel"),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
            "opentelemetry",
            "tracing",
            "otel",
        ),
    ],
)
def test_a_setting_whose_extra_is_missing_refuses_the_start(
    database_url, tmp_path, monkeypatch, settings, package, module, extra
):
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed
    monkeypatch.delitem(sys.modules, f"app.platform.telemetry.{module}", raising=False)
    monkeypatch.delattr(telemetry, module, raising=False)
    with pytest.raises(MissingExtra) as refused:
        make_test_app(database_url, tmp_path, **settings)
    message = str(refused.value)
    assert f"`{extra}` extra is not installed" in message
    assert f"requirements/{extra}.txt" in message
    assert f"make run EXTRAS={extra}" in message
    assert next(iter(settings)) in message


# --- scrubbing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"GET /trackable/{SECRET}?x=1", "GET /trackable/[redacted]?x=1"),
        (f"/api/trackables/lookup?code={SECRET}&a=b", "/api/trackables/lookup?code=[redacted]&a=b"),
        (f"/trackabl%65/{SECRET}", "/trackable/[redacted]"),
        ("mail olga.finder+x@example.co.uk now", "mail [redacted] now"),
        ("user 550e8400-e29b-41d4-a716-446655440000 gone", "user [redacted] gone"),
        ("from 203.0.113.77.", "from [redacted]."),
        ("peer 10.0.0.5:5432", "peer [redacted]:5432"),
        ("peer [2001:db8::1]:443 and ::1", "peer [[redacted]]:443 and [redacted]"),
        ("mapped ::ffff:192.0.2.1", "mapped [redacted]"),
        # What only looks like an address stays.
        ("at 12:30:45 on 2026-11-25T12:30:45Z", "at 12:30:45 on 2026-11-25T12:30:45Z"),
        ("sentry-sdk 2.75.0, version 1.2.3.4.5", "sentry-sdk 2.75.0, version 1.2.3.4.5"),
        ("std::vector", "std::vector"),
        (
            "(psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint"
            ' "uq_users_user_name"\nDETAIL:  Key (user_name)=(olga_finder) already exists.\n\n'
            "[SQL: INSERT INTO users (user_name) VALUES (%(user_name)s)]\n"
            "[parameters: {'user_name': 'olga_finder'}]\n"
            "(Background on this error at: https://sqlalche.me/e/20/gkpj)",
            "(psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint"
            ' "uq_users_user_name"\n[redacted]\n\n'
            "[SQL: INSERT INTO users (user_name) VALUES (%(user_name)s)]\n"
            "[redacted]\n"
            "(Background on this error at: https://sqlalche.me/e/20/gkpj)",
        ),
    ],
)
def test_text_leaving_the_service_is_scrubbed(text, expected):
    assert scrub_text(text) == expected


def test_the_current_requests_codes_are_scrubbed_wherever_they_appear(app: Flask):
    with app.test_request_context(f"/trackable/{SECRET}?accessCode=ab12-cd34"):
        assert scrub_text(f"code {SECRET.lower()} and AB12CD34") == "code [redacted] and [redacted]"
    with app.test_request_context(
        "/api/trackables/lookup", method="POST", json={"code": "ln 7qk4 m2xt"}
    ):
        assert scrub_text(f"no match for {SECRET}") == "no match for [redacted]"
    with app.test_request_context("/api/trackables/labels", method="POST", json={
        "items": [{"secretCode": SECRET, "qrToken": "q" * 100}]
    }):  # fmt: skip
        assert scrub_text(f"{SECRET} {'Q' * 100}") == "[redacted] [redacted]"
    with app.test_request_context("/healthz"):
        assert scrub_text(f"no code here: {SECRET}") == f"no code here: {SECRET}"


@pytest.mark.parametrize(
    ("url", "host", "expected"),
    [
        ("https://hooks.example.org/in/abc?token=1", None, "https://hooks.example.org"),
        ("https://user:pw@hooks.example.org:8443/x", None, "https://hooks.example.org:8443"),
        ("http://93.184.215.14:8080/page?code=1", "example.org", "http://example.org:8080"),
        ("https://93.184.215.14/page", None, "https://[redacted]"),
        ("http://[2001:db8::1]/x", None, "http://[redacted]"),
        ("http://example.org:80/x", None, "http://example.org"),
    ],
)
def test_an_outbound_url_keeps_its_scheme_host_and_port(url, host, expected):
    assert origin(url, host) == expected
