"""Error reporting to Sentry (app.platform.telemetry.error_reports), through a transport
that keeps the envelopes in memory: only unexpected errors are reported, tagged with the
request id and the ticket, named by the route's template, and nothing in an envelope
names a trackable code, a person, or their cookies, token or address."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk
from flask import Flask
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from app.extensions import db
from app.platform.telemetry import stop_telemetry
from tests.conftest import ApiClient, _empty_all_tables, make_test_app
from tests.factories import make_user
from tests.platform.failing import failing_lookup, failing_view

SECRET = "LN7QK4M2XT"
CLIENT_ADDRESS = "203.0.113.77"
EMAIL = "olga.finder@example.org"
COOKIE = "cookie-value-4d1f"
DSN = "https://public@sentry.example.org/1"
TICKET = re.compile(r"ERR-[0-9A-Z]{8}")


class RecordingTransport(Transport):
    """Keeps every envelope the client would send; sends nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.envelopes: list[Envelope] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)


@pytest.fixture(scope="module")
def transport() -> RecordingTransport:
    return RecordingTransport()


@pytest.fixture(scope="module")
def reporting_app(
    database_url: str, tmp_path_factory: pytest.TempPathFactory, transport: RecordingTransport
) -> Iterator[Flask]:
    app = make_test_app(
        database_url,
        tmp_path_factory.mktemp("reporting"),
        SENTRY_DSN=DSN,
        SENTRY_TRANSPORT=transport,
    )
    try:
        yield app
    finally:
        stop_telemetry(app)


@pytest.fixture
def reporting(reporting_app: Flask, transport: RecordingTransport) -> Iterator[Flask]:
    with reporting_app.app_context():
        transport.envelopes.clear()
        try:
            yield reporting_app
        finally:
            reporting_app.config["SENTRY_TRACES_SAMPLE_RATE"] = 0.0
            db.session.rollback()
            _empty_all_tables()
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def client(reporting: Flask) -> ApiClient:
    return ApiClient(reporting.test_client())


def endpoint_of(app: Flask, template: str) -> str:
    return next(rule.endpoint for rule in app.url_map.iter_rules() if rule.rule == template)


def events(transport: RecordingTransport) -> list[dict[str, Any]]:
    return [event for envelope in transport.envelopes if (event := envelope.get_event())]


def sent(transport: RecordingTransport) -> str:
    """Everything the client would have sent, as text."""
    return b"".join(envelope.serialize() for envelope in transport.envelopes).decode()


def test_an_unexpected_error_is_reported_by_route_with_request_id_and_ticket(
    reporting, client, transport, monkeypatch
):
    monkeypatch.setitem(
        reporting.view_functions, endpoint_of(reporting, "/trackable/<path:code>"), failing_view
    )
    response = client.get(
        f"/trackable/{SECRET}?code={SECRET}",
        environ_base={"REMOTE_ADDR": CLIENT_ADDRESS},
        headers={
            "X-Forwarded-For": CLIENT_ADDRESS,
            "From": EMAIL,
            "Cookie": f"ln_trackable_access={COOKIE}",
            "Authorization": "Bearer not-a-real-token-7c1e",
            "User-Agent": "FinderApp/2.1",
        },
    )
    assert response.status_code == 500
    (ticket,) = set(TICKET.findall(response.get_data(as_text=True)))
    (event,) = events(transport)
    assert event["transaction"] == "/trackable/<path:code>"
    assert event["request"]["url"] == "http://localhost/trackable/<path:code>"
    assert event["request"]["method"] == "GET"
    assert event["request"]["headers"] == {"User-Agent": "FinderApp/2.1"}
    assert set(event["request"]) == {"url", "method", "headers"}  # no query, cookies, body, env
    assert "user" not in event
    assert event["tags"]["request_id"] == response.headers["X-Request-ID"]
    assert event["tags"]["ticket"] == ticket
    (exception,) = event["exception"]["values"]
    assert exception["type"] == "RuntimeError"
    assert "cannot answer /trackable/[redacted]" in exception["value"]
    assert all("vars" not in frame for frame in exception["stacktrace"]["frames"])
    text = sent(transport)
    for leak in (SECRET, SECRET.lower(), CLIENT_ADDRESS, EMAIL, COOKIE, "not-a-real-token"):
        assert leak not in text, leak
    assert "Authorization" not in text
    assert "Cookie" not in text


def test_a_lookup_failing_is_reported_without_its_code(reporting, client, transport, monkeypatch):
    """The lookup's query, and the code quoted bare by the failure (normalised)."""
    monkeypatch.setattr("app.services.trackables.lookup_code", failing_lookup)
    owner = make_user("olga_finder", email=EMAIL)
    db.session.commit()
    signed_in = client.as_user(owner)
    response = signed_in.get(f"/api/trackables/lookup?code={SECRET[:5]}%20{SECRET[5:].lower()}")
    assert response.status_code == 500
    (event,) = events(transport)
    assert event["transaction"] == "/api/trackables/lookup"
    assert event["exception"]["values"][0]["value"] == "lookup of [redacted] failed"
    text = sent(transport)
    for leak in (SECRET, SECRET[5:].lower(), EMAIL, "olga_finder", str(owner.id), signed_in.token):
        assert leak not in text, leak


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/api/trackables/{SECRET}/nothing", 404),  # no route
        ("/api/public/notes/00000000-0000-4000-8000-000000000000", 404),  # a problem answer
        ("/api/notes/public/nearby?latitude=north", 400),  # validation
    ],
)
def test_a_problem_answer_is_not_reported(reporting, client, transport, path, status):
    response = client.get(path)
    assert response.status_code == status
    assert transport.envelopes == []


def test_breadcrumbs_are_scrubbed_log_lines(reporting, client, transport, monkeypatch):
    import logging

    def noisy(**values: Any) -> Any:
        logging.getLogger("app.test").warning(
            "looking at %s for %s", f"/trackable/{SECRET}", EMAIL, extra={"who": EMAIL}
        )
        raise RuntimeError("failed")

    monkeypatch.setitem(reporting.view_functions, endpoint_of(reporting, "/healthz"), noisy)
    assert client.get("/healthz").status_code == 500
    (event,) = events(transport)
    crumbs = event["breadcrumbs"]["values"]
    (crumb,) = [crumb for crumb in crumbs if crumb.get("category") == "app.test"]
    assert crumb["message"] == "looking at /trackable/[redacted] for [redacted]"
    assert "data" not in crumb
    assert EMAIL not in sent(transport)


def test_a_sampled_transaction_is_named_by_its_route_and_scrubbed(
    reporting_app, reporting, client, transport
):
    sentry_sdk.get_client().options["traces_sample_rate"] = 1.0
    try:
        response = client.get(f"/trackable/{SECRET}?code={SECRET}", headers={"Cookie": COOKIE})
    finally:
        sentry_sdk.get_client().options["traces_sample_rate"] = None
    assert response.status_code in (200, 302, 303, 404)
    (transaction,) = [
        found for envelope in transport.envelopes if (found := envelope.get_transaction_event())
    ]
    assert transaction["transaction"] == "/trackable/<path:code>"
    assert transaction["request"]["url"] == "http://localhost/trackable/<path:code>"
    text = sent(transport)
    assert SECRET not in text
    assert COOKIE not in text


def test_error_reporting_starts_without_personal_data_options(reporting):
    options = sentry_sdk.get_client().options
    assert not sentry_sdk.get_client().should_send_default_pii()
    assert options["include_local_variables"] is False
    assert options["max_request_body_size"] == "never"
    assert options["environment"] == "testing"
    assert options["traces_sample_rate"] is None  # SENTRY_TRACES_SAMPLE_RATE=0: no tracing
