"""Compliance rules: tracked system errors (and, later, reports and support tickets)."""

from __future__ import annotations

import logging
import secrets
import traceback

from flask import has_request_context, request

from app.extensions import db
from app.models.compliance import ContentReport, ContentType, PageType

log = logging.getLogger("app.errors")

TICKET_ALPHABET = "0123456789ABCDEFGHJKMNPQRTVWXYZ"


def new_ticket_number() -> str:
    """A short ticket a person can read out to support, e.g. ERR-7K3M9Q2T."""
    return "ERR-" + "".join(secrets.choice(TICKET_ALPHABET) for _ in range(8))


def track_unexpected_error(error: BaseException) -> str:
    """Log an unexpected failure and store it as a tracked system error; return its ticket.

    The failed request's session may be unusable, so it is rolled back first and the error
    is written in its own transaction. If even that fails, the ticket is still logged.
    """
    ticket = new_ticket_number()
    method = request.method if has_request_context() else ""
    path = request.path if has_request_context() else ""
    log.error("unexpected error, ticket %s, %s %s", ticket, method, path, exc_info=error)
    details = {
        "exceptionType": type(error).__name__,
        "httpMethod": method,
        "requestUrl": path,
        "responseStatusCode": 500,
        "stackTrace": "".join(traceback.format_exception(error))[-20000:],
        "source": "server",
    }
    try:
        db.session.rollback()
        db.session.add(
            ContentReport(
                page_type=PageType.SYSTEM_ERROR,
                content_type=ContentType.ERROR_DETAILS,
                page_title="Unexpected server error",
                page_url=path,
                page_reference=ticket,
                content_label="Error details",
                content_preview=f"{type(error).__name__} on {method} {path}",
                report_title=f"Server error {ticket}",
                ticket_number=ticket,
                error_details=details,
            )
        )
        db.session.commit()
    except Exception:  # the ticket was logged above; storing it is best effort
        log.exception("could not store tracked error %s", ticket)
        db.session.rollback()
    return ticket
