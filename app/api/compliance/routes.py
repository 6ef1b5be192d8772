"""Compliance routes (contract: Compliance; Content report; Authentication item 3): content
reports and support requests, error tickets, the reporter's reads and super-admin review.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app, request

from app.api.base import Blueprint
from app.api.compliance.schemas import (
    ContentReportSchema,
    ErrorReportResultSchema,
    ErrorReportSchema,
    ReportCreateSchema,
    ReportListQuerySchema,
    ReportReviewSchema,
)
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.auth import current_viewer
from app.extensions import db, limiter
from app.integrations.client_ip import resolve_client_ip
from app.services import compliance

blp = Blueprint(
    "compliance",
    __name__,
    url_prefix="/api/compliance",
    description="Content reports, error tickets and support requests",
)

CAPPED_LIST_HEADERS = {
    "X-Result-Truncated": {
        "description": "`true` when more reports matched than the cap returned.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}


def compliance_rate_limit() -> str:
    return str(current_app.config["RATE_LIMIT_COMPLIANCE"])


# Reports and error posts share one budget per client address.
rate_limited = limiter.shared_limit(compliance_rate_limit, scope="compliance")


def sender() -> str:
    return compliance.client_key(current_viewer(), resolve_client_ip(request), current_app.config)


@blp.route("/reports", methods=["POST"])
@rate_limited
@blp.auth(optional=True)
@blp.arguments(ReportCreateSchema)
@blp.response(201, ContentReportSchema, description="The new report.")
@blp.alt_response(
    200,
    schema=ContentReportSchema,
    description="The same client reported the same content within the window: its report.",
)
def create_report(data: dict[str, Any]) -> Any:
    """Report content or send a support request

    Anonymous or signed in (the report is then the caller's). Website support requests are
    page type 6 with content type 8; system errors go to `POST /api/compliance/errors`.
    `pageUrl` is a path on this site or a URL under its address. A title or an explanation
    is needed. Rate limited per client (`limits.rateLimits.compliance` of the status).
    """
    filed = compliance.file_report(
        current_viewer(), sender=sender(), config=current_app.config, **data
    )
    db.session.commit()
    return filed.view, 201 if filed.created else 200


@blp.route("/errors", methods=["POST"])
@rate_limited
@blp.auth(optional=True)
@blp.arguments(ErrorReportSchema)
@blp.response(200, ErrorReportResultSchema)
def report_error(data: dict[str, Any]) -> Any:
    """Explain an error ticket or report a client-side error

    With `ticketNumber` (from a 500's problem details): that ticket is reused, the
    explanation added and, with `trackInSupportTickets`, it becomes a support ticket
    (`trackedContentReportId`); an unknown number is 404. Without it: a new client-side
    error ticket. Stack traces and messages are seen by super-admins only.
    """
    viewer = current_viewer()
    ticket = data.pop("ticket_number", None)
    common = {
        name: data.pop(name)
        for name in ("user_explanation", "track_in_support_tickets", "client_context")
    }
    if ticket:
        outcome = compliance.explain_ticket(viewer, ticket_number=ticket, **common)
    else:
        outcome = compliance.report_client_error(
            viewer, sender=sender(), config=current_app.config, **common, **data
        )
    db.session.commit()
    return outcome


@blp.route("/reports/mine", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, ContentReportSchema(many=True), headers=LINK_HEADERS)
def list_my_reports(query: dict[str, Any]) -> Any:
    """List my reports

    The caller's reports, support requests and explained error tickets, newest first;
    paged with `limit` and `cursor`.
    """
    return list_answer(compliance.my_reports(current_viewer(), page=query["page"]))


@blp.route("/reports/<uuid:content_report_id>", methods=["GET"])
@blp.auth()
@blp.response(200, ContentReportSchema)
def get_report(content_report_id: UUID) -> Any:
    """Get a report

    The caller's own report, or any report for a super-admin; 404 otherwise.
    """
    return compliance.get_report(current_viewer(), content_report_id)


@blp.route("/reports", methods=["GET"])
@blp.auth()
@blp.arguments(ReportListQuerySchema, location="query")
@blp.response(200, ContentReportSchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS})
def list_reports(query: dict[str, Any]) -> Any:
    """List all reports for review

    Super-admins only (403 otherwise). Newest first, filtered by `status` and `pageType`,
    with the reporter's identity when known and the last review note; at most
    `REPORT_LIST_CAP` (500), `X-Result-Truncated: true` when cut, or paged with `limit`
    and `cursor`. System errors appear when tracked as support tickets
    (`includeUntrackedErrors=true` lists all).
    """
    found = compliance.list_reports(
        current_viewer(), cap=current_app.config["REPORT_LIST_CAP"], **query
    )
    return list_answer(found)


@blp.route("/reports/<uuid:content_report_id>", methods=["PUT"])
@blp.auth()
@blp.arguments(ReportReviewSchema)
@blp.response(200, ContentReportSchema)
def review_report(data: dict[str, Any], content_report_id: UUID) -> Any:
    """Review a report

    Super-admins only (403 otherwise). Sets `status` (0 reported, 1 reviewing, 2
    resolved) and `resolutionText`; resolving needs a resolution text that is not blank.
    Records the reviewer's display name and the time.
    """
    view = compliance.review_report(current_viewer(), content_report_id, **data)
    db.session.commit()
    return view
