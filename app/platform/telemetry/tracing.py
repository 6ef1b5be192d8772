"""Traces of requests, database statements and outbound HTTP, sent over OTLP/HTTP
(OpenTelemetry; the `otel` extra). Imported only when tracing is on.

Every span passes `ScrubbingSpanProcessor` before the exporter sees it: only the attributes
listed here are kept, each string scrubbed. Trace context is taken from incoming requests but
never sent out: outbound requests go to webhook receivers and linked sites, not ours.
Instrumented when the app is made (under gunicorn, in the master that preloads it); the
exporter and its thread start in each worker after the fork (app.platform.forking).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import Flask, g
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from opentelemetry.propagators.textmap import (
    CarrierT,
    Getter,
    Setter,
    TextMapPropagator,
    default_getter,
    default_setter,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Link, SpanKind, Status

from app.platform import forking
from app.platform.telemetry.scrub import host_name, origin, scrub_text

log = logging.getLogger(__name__)

SERVICE_NAME = "location-notes"
# The probes and the scrape: frequent, and nothing to learn from (matched on the full URL).
EXCLUDED_URLS = r"^[^?]*://[^/?]+/(?:healthz|readyz|metrics)(?:\?.*)?$"
REQUEST_ID = "location_notes.request_id"  # the X-Request-ID answered (the logs' request id)
TICKET = "location_notes.ticket"  # the ticket number a 500 answered with
SQLALCHEMY_SCOPE = "opentelemetry.instrumentation.sqlalchemy"

# Attributes a span may keep (old and new HTTP and database conventions alike); anything
# else an instrumentation adds (client address, user agent, query, captured headers,
# database user) is dropped.
KEPT = frozenset(
    {
        "http.method",
        "http.request.method",
        "http.scheme",
        "url.scheme",
        "http.flavor",
        "network.protocol.version",
        "http.status_code",
        "http.response.status_code",
        "error.type",
        "http.route",
        "db.system",
        "db.system.name",
        "db.name",
        "db.namespace",
        "db.statement",
        "db.query.text",
        "db.operation",
        "db.operation.name",
        "net.transport",
        "user_agent.synthetic.type",
        REQUEST_ID,
        TICKET,
    }
)
# This service's own address (server spans); the address a request went to (client spans).
KEPT_BY_KIND = {
    SpanKind.SERVER: frozenset(
        {"http.server_name", "http.host", "net.host.name", "net.host.port"}
        | {"server.address", "server.port"}
    ),
    SpanKind.CLIENT: frozenset({"net.peer.name", "net.peer.port", "server.address", "server.port"}),
}
URL_KEYS = ("http.url", "url.full")
PATH_KEYS = ("http.target", "url.path")
NOT_SCRUBBED = frozenset({"http.route", REQUEST_ID, TICKET})  # templates and our own ids
EXCEPTION_KEYS = frozenset(
    {"exception.type", "exception.message", "exception.stacktrace", "exception.escaped"}
)


@dataclass
class Tracing:
    """The app's tracing: its provider, and what `stop` undoes (tests make several apps)."""

    app: Flask
    provider: TracerProvider
    propagator: TextMapPropagator  # the global one before tracing started

    def stop(self) -> None:
        FlaskInstrumentor.uninstrument_app(self.app)
        SQLAlchemyInstrumentor().uninstrument()
        RequestsInstrumentor().uninstrument()
        propagate.set_global_textmap(self.propagator)
        self.provider.shutdown()


class Deferred(SpanProcessor):
    """Spans go to the processor given by `start`; before it, nowhere."""

    def __init__(self) -> None:
        self.inner: SpanProcessor | None = None

    def start(self, inner: SpanProcessor) -> None:
        self.inner = inner

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        if self.inner is not None:
            self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.inner is not None:
            self.inner.on_end(span)

    def shutdown(self) -> None:
        if self.inner is not None:
            self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis) if self.inner is not None else True


# The app's tracer provider is passed to each instrumentation, not set as the global one.
def start(app: Flask, exporter: SpanExporter | None = None) -> Tracing:
    """Instrument Flask, SQLAlchemy and requests for `app`, exporting to the OTLP/HTTP
    endpoint of the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, ...), or to
    `exporter`. Call it before any engine is made and any before-request hook added: the
    request's span then covers every hook, a refusal by the rate limiter included."""
    endpoint = _traces_endpoint(app.config)

    def batches() -> BatchSpanProcessor:
        if exporter is not None:
            return BatchSpanProcessor(exporter)
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint))

    resource = Resource.create(
        {"service.name": SERVICE_NAME, "deployment.environment.name": app.config["ENV_NAME"]}
    )
    provider = TracerProvider(resource=resource)  # sampler: OTEL_TRACES_SAMPLER, default all
    # The exporter's thread starts in the process that serves (app.platform.forking): under
    # gunicorn, in each worker after the fork; spans of the master's start are not kept.
    exporting = Deferred()
    provider.add_span_processor(ScrubbingSpanProcessor(exporting))
    forking.in_each_process(lambda: exporting.start(batches()))
    FlaskInstrumentor.instrument_app(
        app,
        tracer_provider=provider,
        excluded_urls=EXCLUDED_URLS,
        enable_commenter=False,
        response_hook=_note_request_id,
    )
    # Engines made from now on (the app's, its replica's) are traced: the statement as
    # sent, with its placeholders (the instrumentation never reads the bound parameters),
    # and no comment added to the SQL. Its declared range stops below SQLAlchemy 2.1,
    # which keeps the engine events and `create_engine` it hooks; tests/platform/
    # test_tracing.py runs it on the locked version.
    SQLAlchemyInstrumentor().instrument(
        tracer_provider=provider, enable_commenter=False, skip_dep_check=True
    )
    RequestsInstrumentor().instrument(tracer_provider=provider, request_hook=_note_host)
    previous = propagate.get_global_textmap()
    propagate.set_global_textmap(InboundOnly(previous))
    return Tracing(app, provider, previous)


def _traces_endpoint(config: Mapping[str, Any]) -> str | None:
    """The settings' endpoint (instance/config.py may set it too) with the traces path, as
    the exporter makes it of the variable; None leaves the exporter to its own variables
    (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT first) and default."""
    base = str(config.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "")
    if not base or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return None
    return base.rstrip("/") + "/v1/traces"


def report(error: BaseException, ticket: str) -> None:
    """The request's span records the unexpected error and the ticket it answered with."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute(TICKET, ticket)
        span.record_exception(error)


def _note_request_id(span: trace.Span, status: str, headers: Sequence[tuple[str, str]]) -> None:
    if span is None or not span.is_recording():
        return
    for name, value in headers:
        if name.lower() == "x-request-id":
            span.set_attribute(REQUEST_ID, value)
            return
    request_id = g.get("request_id")
    if request_id:
        span.set_attribute(REQUEST_ID, request_id)


def _note_host(span: trace.Span, request: Any) -> None:
    """The outbound request's host as named in its Host header: the URL holds the checked
    address the connection was pinned to (app.integrations.outbound)."""
    host = request.headers.get("Host") if request.headers is not None else None
    name = host_name(host) if host else None
    if name and span.is_recording():
        span.set_attribute("server.address", name)


class InboundOnly(TextMapPropagator):
    """Trace context read from incoming requests, never written into outgoing ones."""

    def __init__(self, inner: TextMapPropagator) -> None:
        self.inner = inner

    def extract(
        self,
        carrier: CarrierT,
        context: Context | None = None,
        getter: Getter[CarrierT] = default_getter,  # type: ignore[assignment]
    ) -> Context:
        return self.inner.extract(carrier, context, getter)

    def inject(
        self,
        carrier: CarrierT,
        context: Context | None = None,
        setter: Setter[CarrierT] = default_setter,  # type: ignore[assignment]
    ) -> None:
        return None

    @property
    def fields(self) -> set[str]:
        return set()


# A request is named by its route's template (GET /trackable/<path:code>; GET alone when no route
# matched), with no path, query or client address; an outbound request keeps its scheme and host
# only.
class ScrubbingSpanProcessor(SpanProcessor):
    """Hands `inner` a scrubbed copy of each finished span (`scrubbed`); a database span
    outside any request or job (the worker's polling, start-up checks) is not exported."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        scope = span.instrumentation_scope
        if span.parent is None and scope is not None and scope.name == SQLALCHEMY_SCOPE:
            return
        try:
            clean = scrubbed(span)
        except Exception:  # a span that cannot be scrubbed is not sent, nor does it fail a request
            log.warning("a span of %s was not exported", span.kind, exc_info=True)
            return
        self.inner.on_end(clean)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def scrubbed(span: ReadableSpan) -> ReadableSpan:
    """A copy of `span` that says nothing of who made the request or of its codes."""
    original = dict(span.attributes or {})
    kept = KEPT | KEPT_BY_KIND.get(span.kind, frozenset())
    attributes = {
        key: value if key in NOT_SCRUBBED else _scrub_attribute(value)
        for key, value in original.items()
        if key in kept
    }
    name = scrub_text(span.name)
    if span.kind is SpanKind.SERVER:
        name = _server_naming(original, attributes)
    elif span.kind is SpanKind.CLIENT and any(key in original for key in URL_KEYS):
        host = original.get("server.address")
        for key in URL_KEYS:
            if key in original:
                attributes[key] = origin(str(original[key]), str(host) if host else None)
    status = span.status
    if status.description:
        status = Status(status.status_code, scrub_text(status.description))
    return ReadableSpan(
        name=name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=[_scrubbed_event(event) for event in span.events],
        links=[Link(link.context) for link in span.links],
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _server_naming(original: Mapping[str, Any], attributes: dict[str, Any]) -> str:
    """A request's span is `METHOD route`, its path the route (none when no route matched)."""
    route = original.get("http.route")
    method = str(original.get("http.request.method") or original.get("http.method") or "HTTP")
    if method == "_OTHER":
        method = "HTTP"
    for key in PATH_KEYS:
        if key in original and route:
            attributes[key] = route
    return f"{method} {route}" if route else method


def _scrub_attribute(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, tuple | list):
        return tuple(scrub_text(item) if isinstance(item, str) else item for item in value)
    return value


def _scrubbed_event(event: Any) -> Event:
    attributes = {
        key: _scrub_attribute(value)
        for key, value in (event.attributes or {}).items()
        if key in EXCEPTION_KEYS
    }
    return Event(event.name, attributes, event.timestamp)
