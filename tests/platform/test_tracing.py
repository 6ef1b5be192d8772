"""Tracing (app.platform.telemetry.tracing) into an in-memory exporter: requests are named
by their route's template, SQL and outbound HTTP are traced, and no trackable code or
personal data (ids, e-mail addresses, user names, client addresses) is in any span."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from flask import Flask
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from app.extensions import db
from app.integrations.outbound import OutboundSettings, fetch_page
from app.platform.telemetry import stop_telemetry
from tests.conftest import ApiClient, _empty_all_tables, make_test_app
from tests.factories import make_trackable, make_user
from tests.integrations.local_site import Site
from tests.platform.failing import failing_view

SECRET = "LN7QK4M2XT"
PUBLIC = "LN-7QK4M2"
CLIENT_ADDRESS = "203.0.113.77"
EMAIL = "olga.finder@example.org"


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture(scope="module")
def traced_app(
    database_url: str, tmp_path_factory: pytest.TempPathFactory, exporter: InMemorySpanExporter
) -> Iterator[Flask]:
    app = make_test_app(
        database_url,
        tmp_path_factory.mktemp("traced"),
        OTEL_TRACING=True,
        TRACING_EXPORTER=exporter,
    )
    try:
        yield app
    finally:
        stop_telemetry(app)


@pytest.fixture
def traced(traced_app: Flask, exporter: InMemorySpanExporter) -> Iterator[Flask]:
    with traced_app.app_context():
        finished(traced_app, exporter)  # spans of earlier tests still in the batch
        exporter.clear()
        try:
            yield traced_app
        finally:
            db.session.rollback()
            _empty_all_tables()
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def client(traced: Flask) -> ApiClient:
    return ApiClient(traced.test_client())


def finished(app: Flask, exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    assert app.extensions["telemetry"].tracing.provider.force_flush()
    return list(exporter.get_finished_spans())


def everything_in(spans: list[ReadableSpan]) -> str:
    """Every name, attribute, event and status of the spans, as one text."""
    return json.dumps(
        [
            {
                "name": span.name,
                "attributes": dict(span.attributes or {}),
                "events": [(event.name, dict(event.attributes or {})) for event in span.events],
                "status": span.status.description,
                "resource": dict(span.resource.attributes),
            }
            for span in spans
        ],
        default=str,
    )


def servers(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [span for span in spans if span.kind is SpanKind.SERVER]


def test_a_request_with_a_code_in_its_path_is_named_by_its_route(traced, client, exporter):
    owner = make_user("olga", email=EMAIL)
    make_trackable(owner, public_code=PUBLIC, secret_code=SECRET)
    db.session.commit()
    response = client.get(
        f"/trackable/{SECRET}?code={SECRET}",
        environ_base={"REMOTE_ADDR": CLIENT_ADDRESS},
        headers={"X-Forwarded-For": CLIENT_ADDRESS, "Cookie": f"code={SECRET}"},
    )
    assert response.status_code in (302, 303)
    (span,) = servers(finished(traced, exporter))
    assert span.name == "GET /trackable/<path:code>"
    assert span.attributes["http.route"] == "/trackable/<path:code>"
    assert span.attributes["http.target"] == "/trackable/<path:code>"
    assert span.attributes["http.status_code"] == response.status_code
    assert span.attributes["location_notes.request_id"] == response.headers["X-Request-ID"]
    text = everything_in(finished(traced, exporter))
    for secret in (SECRET, SECRET.lower(), CLIENT_ADDRESS):
        assert secret not in text


def test_the_lookup_query_and_the_signed_in_user_stay_out_of_every_span(traced, client, exporter):
    owner = make_user("olga_finder", email=EMAIL)
    make_trackable(owner, public_code=PUBLIC, secret_code=SECRET)
    db.session.commit()
    signed_in = client.as_user(owner)
    response = signed_in.get(
        f"/api/trackables/lookup?code={SECRET}", environ_base={"REMOTE_ADDR": CLIENT_ADDRESS}
    )
    assert response.status_code == 200
    assert response.get_json()["found"] is True
    spans = finished(traced, exporter)
    (server,) = servers(spans)
    assert server.name == "GET /api/trackables/lookup"
    assert "url.query" not in server.attributes
    assert "http.url" not in server.attributes
    statements = [span for span in spans if "db.statement" in (span.attributes or {})]
    assert statements, "the request's SQL is traced"
    assert all(span.parent is not None for span in statements)
    assert all(span.context.trace_id == server.context.trace_id for span in statements)
    text = everything_in(spans)
    for personal in (
        SECRET,
        SECRET.lower(),
        CLIENT_ADDRESS,
        EMAIL,
        "olga_finder",
        str(owner.id),
        owner.id.hex,
        signed_in.token,
    ):
        assert personal not in text, personal


def test_a_path_no_route_matches_is_named_by_its_method_only(traced, client, exporter):
    response = client.get(f"/api/{SECRET}/nothing?code={SECRET}")
    assert response.status_code == 404
    (span,) = servers(finished(traced, exporter))
    assert span.name == "GET"
    assert "http.route" not in span.attributes
    assert "http.target" not in span.attributes
    assert SECRET not in everything_in([span])


def test_the_probes_and_the_metrics_are_not_traced(traced, client, exporter):
    assert client.get("/healthz").status_code == 200
    client.get("/readyz")
    client.get("/metrics")
    assert servers(finished(traced, exporter)) == []
    assert finished(traced, exporter) == []  # /readyz's SQL outside a request is not kept


def test_an_unexpected_error_is_recorded_with_its_ticket(traced, client, exporter, monkeypatch):
    endpoint = next(
        rule.endpoint
        for rule in traced.url_map.iter_rules()
        if rule.rule == "/trackable/<path:code>"
    )
    monkeypatch.setitem(traced.view_functions, endpoint, failing_view)
    response = client.get(
        f"/trackable/{SECRET}", headers={"From": EMAIL, "X-Forwarded-For": CLIENT_ADDRESS}
    )
    assert response.status_code == 500
    (ticket,) = set(re.findall(r"ERR-[0-9A-Z]{8}", response.get_data(as_text=True)))  # the page
    (span,) = servers(finished(traced, exporter))
    assert span.attributes["location_notes.ticket"] == ticket
    (event,) = [event for event in span.events if event.name == "exception"]
    assert event.attributes["exception.type"] == "RuntimeError"
    assert event.attributes["exception.message"] == (
        "cannot answer /trackable/[redacted]? for {'code': '[redacted]'}: [redacted] at [redacted]"
    )
    text = everything_in([span])
    for personal in (SECRET, EMAIL, CLIENT_ADDRESS):
        assert personal not in text


def test_an_outbound_request_keeps_its_scheme_and_host_only(traced, exporter):
    with Site() as site:
        settings = OutboundSettings(
            allow_loopback=True, allowed_ports=frozenset({site.port}), timeout_seconds=3
        )
        page = fetch_page(site.url(f"/title?code={SECRET}", host="localhost"), settings)
    assert page.title
    (span,) = [span for span in finished(traced, exporter) if span.kind is SpanKind.CLIENT]
    assert span.attributes["http.url"] == f"http://localhost:{site.port}"
    assert span.attributes["server.address"] == "localhost"
    assert "title" not in everything_in([span])
    assert SECRET not in everything_in([span])
    # No trace context is sent to a site that is not ours.
    (headers,) = site.headers_seen
    assert "traceparent" not in headers
    assert "baggage" not in headers


def test_an_address_literal_target_is_not_named(traced, exporter):
    with Site() as site:
        settings = OutboundSettings(
            allow_loopback=True, allowed_ports=frozenset({site.port}), timeout_seconds=3
        )
        fetch_page(site.url("/title"), settings)
    (span,) = [span for span in finished(traced, exporter) if span.kind is SpanKind.CLIENT]
    assert span.attributes["http.url"] == f"http://[redacted]:{site.port}"
    assert "127.0.0.1" not in everything_in([span])


def test_tracing_reads_its_settings(monkeypatch):
    from app.platform.telemetry import tracing_wanted
    from app.platform.telemetry.tracing import _traces_endpoint

    assert not tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_TRACING": False})
    assert tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_TRACING": True})
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}
    assert _traces_endpoint(endpoint) == "http://collector:4318/v1/traces"
    assert _traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_TRACING": True}) is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://elsewhere/v1/traces")
    assert _traces_endpoint(endpoint) is None  # the exporter's more specific variable wins
