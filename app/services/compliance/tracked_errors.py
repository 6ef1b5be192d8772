"""Tracked system errors (contract: Compliance; decisions: Wire format, Compliance): the
ticket every unexpected 500 answers with, and POST /api/compliance/errors, which explains
such a ticket or reports a client-side error. A tracked error is a content report with
page type 5 and content type 6; its stack trace and message stay server-side.

Bounded per client: identical failures of one client within ERROR_TICKET_WINDOW_MINUTES
share one ticket (its `occurrences` count), and a client gets at most
ERROR_TICKETS_PER_CLIENT new tickets in that window; beyond it, its latest ticket answers.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from flask import current_app, has_request_context, request
from sqlalchemy import func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.base import utcnow
from app.models.compliance import (
    EXPLANATIONS_MAX_LENGTH,
    ContentReport,
    ContentType,
    PageType,
    ReportStatus,
)

log = logging.getLogger("app.errors")

TICKET_ALPHABET = "0123456789ABCDEFGHJKMNPQRTVWXYZ"
STACK_TRACE_MAX_LENGTH = 20000
EXPLANATION_SEPARATOR = "\n\n---\n\n"


def new_ticket_number() -> str:
    """A short ticket a person can read out to support, e.g. ERR-7K3M9Q2T."""
    return "ERR-" + "".join(secrets.choice(TICKET_ALPHABET) for _ in range(8))


@dataclass(frozen=True)
class ErrorReportOutcome:
    """The answer of POST /api/compliance/errors."""

    ticket_number: str
    used_existing_ticket: bool
    explanation_saved: bool
    tracked_in_support_tickets: bool
    tracked_content_report_id: Any


# --- unexpected 500s ---------------------------------------------------------------------


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()


def _failure_fingerprint(error: BaseException, method: str, route: str) -> str:
    """What failed, where: the exception type, the route and the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return _fingerprint(type(error).__qualname__, method, route, where)


def _request_client_key() -> str | None:
    if not has_request_context():
        return None
    from app.integrations.client_ip import resolve_client_ip
    from app.services.compliance.reports import client_key

    return client_key(Viewer(), resolve_client_ip(request), current_app.config)


def track_unexpected_error(error: BaseException) -> str:
    """Log an unexpected failure and store it as a tracked system error; return its ticket.

    The failed request's session may be unusable, so it is rolled back first and the error
    is written in its own transaction. If even that fails, the ticket is still logged.
    """
    method = request.method if has_request_context() else ""
    path = request.path if has_request_context() else ""
    route = request.url_rule.rule if has_request_context() and request.url_rule else path
    ticket = new_ticket_number()
    try:
        db.session.rollback()
        ticket = _store_unexpected(error, ticket, method, path, route)
        db.session.commit()
    except Exception:  # the ticket is logged below; storing it is best effort
        log.exception("could not store tracked error %s", ticket)
        db.session.rollback()
    log.error("unexpected error, ticket %s, %s %s", ticket, method, path, exc_info=error)
    return ticket


def _store_unexpected(error: BaseException, ticket: str, method: str, path: str, route: str) -> str:
    """Store the failure under a new ticket, or count it on the client's ticket for the
    same failure, or (over the client's budget) on its latest ticket. Returns the ticket."""
    sender = _request_client_key()
    fingerprint = _failure_fingerprint(error, method, route)
    config = current_app.config
    if sender is not None:
        since = utcnow() - timedelta(minutes=config["ERROR_TICKET_WINDOW_MINUTES"])
        recent = (
            select(ContentReport)
            .where(
                ContentReport.client_key == sender,
                ContentReport.page_type == PageType.SYSTEM_ERROR,
                ContentReport.created_utc >= since,
            )
            .order_by(ContentReport.created_utc.desc())
        )
        same = db.session.scalar(recent.where(ContentReport.fingerprint == fingerprint).limit(1))
        if same is None and _count(recent) >= config["ERROR_TICKETS_PER_CLIENT"]:
            same = db.session.scalar(recent.limit(1))
        if same is not None and same.ticket_number:
            same.occurrences += 1
            return same.ticket_number
    details = {
        "exceptionType": type(error).__name__,
        "httpMethod": method,
        "requestUrl": path,
        "responseStatusCode": 500,
        "stackTrace": "".join(traceback.format_exception(error))[-STACK_TRACE_MAX_LENGTH:],
        "source": "server",
    }
    db.session.add(
        ContentReport(
            page_type=PageType.SYSTEM_ERROR,
            content_type=ContentType.ERROR_DETAILS,
            page_title="Unexpected server error",
            page_url=path[:2048],
            page_reference=ticket,
            content_label="Error details",
            content_preview=f"{type(error).__name__} on {method} {route}"[:300],
            report_title=f"Server error {ticket}",
            ticket_number=ticket,
            error_details=details,
            client_key=sender,
            fingerprint=fingerprint,
        )
    )
    return ticket


def _count(query: Any) -> int:
    return db.session.scalar(select(func.count()).select_from(query.subquery())) or 0


# --- POST /api/compliance/errors ---------------------------------------------------------


def explain_ticket(
    viewer: Viewer,
    *,
    ticket_number: str,
    user_explanation: str = "",
    track_in_support_tickets: bool = False,
    client_context: Mapping[str, Any] | None = None,
) -> ErrorReportOutcome:
    """Add the caller's explanation to the ticket a 500 answered with (404 when unknown),
    and track it as a support ticket when asked."""
    report = db.session.scalar(
        select(ContentReport).where(
            ContentReport.ticket_number == ticket_number.upper(),
            ContentReport.page_type == PageType.SYSTEM_ERROR,
        )
    )
    if report is None:
        raise NotFound("No error ticket has this number.", code=Code.ERROR_TICKET_NOT_FOUND)
    return _record(viewer, report, user_explanation, track_in_support_tickets, client_context)


def report_client_error(
    viewer: Viewer,
    *,
    sender: str,
    config: Mapping[str, Any],
    user_explanation: str = "",
    track_in_support_tickets: bool = False,
    client_context: Mapping[str, Any] | None = None,
    **error: Any,
) -> ErrorReportOutcome:
    """A new client-side error ticket with every field; the same client sending the same
    error again within the window gets the ticket it already has."""
    fingerprint = _fingerprint(
        error.get("page_marker_type"),
        error.get("page_marker"),
        error.get("request_url"),
        error.get("http_method"),
        error.get("response_status_code"),
        error.get("exception_type"),
        error.get("exception_message"),
        error.get("stack_trace"),
    )
    since = utcnow() - timedelta(minutes=config["ERROR_TICKET_WINDOW_MINUTES"])
    same = db.session.scalar(
        select(ContentReport)
        .where(
            ContentReport.client_key == sender,
            ContentReport.fingerprint == fingerprint,
            ContentReport.created_utc >= since,
        )
        .limit(1)
    )
    if same is not None:
        same.occurrences += 1
        return _record(viewer, same, user_explanation, track_in_support_tickets, client_context)
    ticket = new_ticket_number()
    marker = error.get("page_marker") or error.get("request_url") or ""
    report = ContentReport(
        reporter_user_id=viewer.user_id,
        page_type=PageType.SYSTEM_ERROR,
        content_type=ContentType.ERROR_DETAILS,
        status=ReportStatus.REPORTED,
        page_title=f"Client error on {marker}"[:300] if marker else "Client error",
        page_url=str(error.get("request_url") or "")[:2048],
        page_reference=ticket,
        content_label="Error details",
        content_preview=str(error.get("exception_type") or "Client-side error")[:300],
        report_title=f"Client error {ticket}",
        ticket_number=ticket,
        error_details={**_camel(error), "source": "client"},
        client_key=sender,
        fingerprint=fingerprint,
    )
    db.session.add(report)
    outcome = _record(viewer, report, user_explanation, track_in_support_tickets, client_context)
    return ErrorReportOutcome(
        ticket,
        False,
        outcome.explanation_saved,
        outcome.tracked_in_support_tickets,
        outcome.tracked_content_report_id,
    )


def _camel(values: Mapping[str, Any]) -> dict[str, Any]:
    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part.capitalize() for part in rest)

    return {camel(name): value for name, value in values.items()}


def _record(
    viewer: Viewer,
    report: ContentReport,
    explanation: str,
    track: bool,
    client_context: Mapping[str, Any] | None,
) -> ErrorReportOutcome:
    saved = _add_explanation(report, explanation.strip())
    if track:
        report.track_in_support_tickets = True
    if report.reporter_user_id is None and viewer.user_id is not None:
        report.reporter_user_id = viewer.user_id
    if client_context is not None:
        report.client_context = dict(client_context)
    db.session.flush()
    tracked = report.track_in_support_tickets
    return ErrorReportOutcome(
        ticket_number=report.ticket_number or "",
        used_existing_ticket=True,
        explanation_saved=saved,
        tracked_in_support_tickets=tracked,
        tracked_content_report_id=report.id if tracked else None,
    )


def _add_explanation(report: ContentReport, explanation: str) -> bool:
    """Append an explanation; False when there is none, or no room left on the ticket."""
    if not explanation:
        return False
    current = report.report_explanation or ""
    if explanation == current or current.endswith(EXPLANATION_SEPARATOR + explanation):
        return True  # the same explanation sent again
    combined = current + EXPLANATION_SEPARATOR + explanation if current else explanation
    if len(combined) > EXPLANATIONS_MAX_LENGTH:
        return False
    report.report_explanation = combined
    return True
