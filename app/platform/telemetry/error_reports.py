"""Unexpected errors reported to Sentry (SENTRY_DSN; the `sentry` extra). Imported only
when a DSN is set.

Only the 500s are reported, each tagged with its ticket and the request id, so support can
match a user's ticket to the report. What an event may carry is decided here, not by the
SDK's defaults: no local variables, body, cookies, query string or client address; headers
from an allow-list; every other string scrubbed (`scrub.scrub_text`). Breadcrumbs are log
lines (message only, scrubbed); no integration records outbound HTTP or SQL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import sentry_sdk
from flask import Flask, g, has_request_context
from sentry_sdk.integrations.atexit import AtexitIntegration
from sentry_sdk.integrations.dedupe import DedupeIntegration
from sentry_sdk.integrations.flask import FlaskIntegration
from sentry_sdk.integrations.logging import LoggingIntegration
from werkzeug.exceptions import HTTPException

from app.errors import ApiError
from app.platform.telemetry.scrub import (
    UNMATCHED,
    current_route,
    origin,
    safe_headers,
    scrub_text,
    scrub_value,
)

REQUEST_ID_TAG, TICKET_TAG = "request_id", "ticket"
BREADCRUMB_KEYS = ("type", "category", "level", "timestamp")

Event = dict[str, Any]


# send_default_pii is left unset, which is off: sentry-sdk 2.75 deprecates the flag (and warns when
# it is passed), and unset means no personal data. The transaction is named by the route's template.
def start(app: Flask, transport: Any = None) -> None:
    """Report to SENTRY_DSN from this process (or to `transport`, in tests)."""
    scrub = scrubber(app)

    def before_send(event: Any, hint: dict[str, Any]) -> Any:
        return None if _client_error(hint) else scrub(event)

    def before_send_transaction(event: Any, hint: dict[str, Any]) -> Any:
        return scrub(event)

    sentry_sdk.init(
        dsn=app.config["SENTRY_DSN"],
        environment=app.config["SENTRY_ENVIRONMENT"] or app.config["ENV_NAME"],
        # 0 (the default): no performance traces at all, not even unsampled ones.
        traces_sample_rate=app.config["SENTRY_TRACES_SAMPLE_RATE"] or None,
        include_local_variables=False,
        max_request_body_size="never",
        max_breadcrumbs=30,
        auto_session_tracking=False,
        # The integrations chosen, not discovered: none records SQL, outbound URLs or the
        # Redis keys of the rate limits (which hold client addresses).
        default_integrations=False,
        auto_enabling_integrations=False,
        integrations=[
            AtexitIntegration(),  # what is queued is sent when a worker exits
            DedupeIntegration(),
            LoggingIntegration(level=logging.INFO, event_level=None),  # breadcrumbs only
            FlaskIntegration(transaction_style="url"),  # names are route templates
        ],
        before_send=before_send,
        before_send_transaction=before_send_transaction,
        before_breadcrumb=breadcrumb,
        transport=transport,
    )


def report(error: BaseException, ticket: str) -> None:
    """Report an unexpected error under the ticket its 500 answered with."""
    with sentry_sdk.new_scope() as scope:
        scope.set_tag(TICKET_TAG, ticket)
        if has_request_context() and g.get("request_id"):
            scope.set_tag(REQUEST_ID_TAG, g.request_id)
        sentry_sdk.capture_exception(error)


def stop() -> None:
    """Send what is queued and stop reporting from this process (tests)."""
    client = sentry_sdk.get_client()
    client.close(timeout=2)
    sentry_sdk.get_global_scope().set_client(None)


def _client_error(hint: dict[str, Any]) -> bool:
    """An exception that answered below 500 (a problem response) is not reported."""
    error = (hint.get("exc_info") or (None, None, None))[1]
    if isinstance(error, HTTPException):
        return (error.code or 500) < 500
    return isinstance(error, ApiError) and error.status < 500


def scrubber(app: Flask) -> Callable[[Event], Event]:
    """The event (error or transaction) as it may leave. A transaction ends after its
    request's context, so its name is kept when it is one of `app`'s route templates."""
    templates: set[str] = set()

    def rules() -> set[str]:
        if not templates:  # read once the app is complete, not when reporting starts
            templates.update(rule.rule for rule in app.url_map.iter_rules())
        return templates

    def scrub(event: Event) -> Event:
        tags = event.pop("tags", None) or {}
        request = event.pop("request", None)
        transaction = event.get("transaction")
        event.pop("user", None)
        event.pop("_meta", None)  # the SDK's notes on what it removed, by header and field
        for value in (event.get("exception") or {}).get("values") or []:
            for frame in (value.get("stacktrace") or {}).get("frames") or []:
                frame.pop("vars", None)
        event = scrub_value(event)
        route = current_route()
        if route is None and transaction in rules():
            route = transaction
        if transaction is not None:
            event["transaction"] = route or UNMATCHED
        if request:
            event["request"] = _request(request, route)
        if has_request_context() and g.get("request_id"):
            tags.setdefault(REQUEST_ID_TAG, g.request_id)
        event["tags"] = tags
        return event

    return scrub


def _request(request: dict[str, Any], route: str | None) -> dict[str, Any]:
    """Method, URL (scheme, host, route template) and the safe headers: no query string,
    cookies, body or environment."""
    headers = request.get("headers") or {}
    site = scrub_text(origin(str(request.get("url") or "")))
    safe: dict[str, Any] = {"url": site + (route or "/" + UNMATCHED)}
    if request.get("method"):
        safe["method"] = str(request["method"])
    if isinstance(headers, dict) and (kept := safe_headers(headers.items())):
        safe["headers"] = kept
    return safe


def breadcrumb(crumb: dict[str, Any], hint: dict[str, Any] | None) -> dict[str, Any]:
    """A log line as a breadcrumb: its kind, level, time and scrubbed message; none of
    the record's extra data."""
    kept = {key: crumb[key] for key in BREADCRUMB_KEYS if key in crumb}
    if crumb.get("message"):
        kept["message"] = scrub_text(str(crumb["message"]))
    return kept
