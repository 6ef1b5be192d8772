"""Schemas of the compliance routes (contract: Content report (read shape), Compliance).

Report records dump services.compliance' ReportView: the contract's read shape for every
viewer, and the reviewer fields (`ticketNumber` aside) only for super-admins.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import current_app
from marshmallow import ValidationError, fields, post_dump, pre_dump, validate, validates

from app.api.base import Guid, Regexp, RequestSchema, Schema, UtcDateTime
from app.api.pages import PageQuerySchema
from app.models.compliance import (
    CONTENT_TYPE_LABELS,
    LONG_TEXT_MAX_LENGTH,
    PAGE_TYPE_LABELS,
    SHORT_TEXT_MAX_LENGTH,
    STATUS_LABELS,
    URL_MAX_LENGTH,
    ContentType,
    PageType,
    ReportStatus,
)
from app.services import compliance

# Serialized size of a client's `clientContext` object.
CLIENT_CONTEXT_MAX_BYTES = 8192
ERROR_MESSAGE_MAX_LENGTH = 4000
STACK_TRACE_MAX_LENGTH = 20000
TICKET_PATTERN = r"^[Ee][Rr][Rr]-[0-9A-Za-z]{8}$"  # case-blind, and ECMAScript too


def _enum_description(labels: dict[Any, str]) -> str:
    return ", ".join(f"{int(value)} {label}" for value, label in labels.items())


def short_text(example: str = "", **kwargs: Any) -> fields.String:
    return fields.String(
        load_default="",
        validate=validate.Length(max=SHORT_TEXT_MAX_LENGTH),
        metadata={"example": example, **kwargs},
    )


def long_text(example: str = "", **kwargs: Any) -> fields.String:
    return fields.String(
        load_default="",
        validate=validate.Length(max=LONG_TEXT_MAX_LENGTH),
        metadata={"example": example, **kwargs},
    )


def site_url_error(value: str) -> str | None:
    """Why `value` is not a URL of this site (a relative path or under PUBLIC_BASE_URL)."""
    text = value.strip()
    if not text:
        return None
    if any(ord(char) < 32 or char == "\\" for char in text):
        return "Control characters and backslashes are not allowed."
    if text.startswith("/") and not text.startswith("//"):
        return None
    parts, own = urlsplit(text), urlsplit(current_app.config["PUBLIC_BASE_URL"])
    if (parts.scheme.lower(), parts.netloc.lower()) == (own.scheme.lower(), own.netloc.lower()):
        return None
    return "Give a path on this site (/...) or a URL under this site's address."


# --- output --------------------------------------------------------------------------------


class ErrorReportResultSchema(Schema):
    ticket_number = fields.String(required=True, metadata={"example": "ERR-7K3M9Q2T"})
    used_existing_ticket = fields.Boolean(required=True, metadata={"example": True})
    explanation_saved = fields.Boolean(required=True, metadata={"example": True})
    tracked_in_support_tickets = fields.Boolean(required=True, metadata={"example": True})
    tracked_content_report_id = Guid(
        required=True, allow_none=True, metadata={"example": "9b2e4f10-6c3a-4d8e-b1f2-0a9c8d7e6f5a"}
    )


FOR_REVIEWERS = "Sent only when the caller is a super-admin."
REVIEWER_FIELDS = (
    "reviewUrl",
    "errorDetails",
    "clientContext",
    "trackInSupportTickets",
    "occurrences",
    "reporterUserName",
    "reporterEmail",
)


class ContentReportSchema(Schema):
    """A content report (contract: Content report (read shape)). `reviewUrl`,
    `errorDetails`, `clientContext`, `trackInSupportTickets`, `occurrences`,
    `reporterUserName` and `reporterEmail` are present for super-admins only."""

    content_report_id = Guid(required=True, attribute="id")
    reporter_user_id = Guid(required=True, allow_none=True)
    page_type = fields.Integer(required=True, metadata={"example": 2})
    page_type_label = fields.Method(
        "_page_type_label", required=True, metadata={"example": "Note page"}
    )
    content_type = fields.Integer(required=True, metadata={"example": 5})
    content_type_label = fields.Method(
        "_content_type_label", required=True, metadata={"example": "Title and content"}
    )
    status = fields.Integer(required=True, metadata={"example": 0})
    status_label = fields.Method("_status_label", required=True, metadata={"example": "Reported"})
    page_title = fields.String(required=True, metadata={"example": "Tempelhof field at sunset"})
    page_url = fields.String(
        required=True, metadata={"example": "/en/notes/3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f"}
    )
    page_reference = fields.String(
        required=True, metadata={"example": "3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f"}
    )
    content_label = fields.String(required=True, metadata={"example": "Note text"})
    content_reference = fields.String(required=True, metadata={"example": ""})
    content_preview = fields.String(required=True, metadata={"example": "Buy cheap watches at ..."})
    report_title = fields.String(required=True, metadata={"example": "Spam"})
    report_explanation = fields.String(
        required=True, metadata={"example": "An advert, not a note."}
    )
    resolution_text = fields.String(required=True, metadata={"example": ""})
    reporter_display_name = fields.String(
        required=True, allow_none=True, metadata={"example": "Ada L."}
    )
    reviewer_display_name = fields.String(
        required=True, allow_none=True, metadata={"example": None}
    )
    created_utc = UtcDateTime(required=True)
    reviewed_utc = UtcDateTime(required=True, allow_none=True)
    ticket_number = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "System errors: the ticket number.", "example": None},
    )
    # Reviewer fields: sent to super-admins only (hide_reviewer_fields), so not required.
    review_url = fields.String(
        allow_none=True,
        metadata={
            "description": f"{FOR_REVIEWERS} Where the reported content is read now.",
            "example": "/api/public/notes/3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f",
        },
    )
    error_details = fields.Dict(
        allow_none=True,
        metadata={"description": f"{FOR_REVIEWERS} What failed (type, message, stack trace)."},
    )
    client_context = fields.Dict(allow_none=True, metadata={"description": FOR_REVIEWERS})
    track_in_support_tickets = fields.Boolean(metadata={"description": FOR_REVIEWERS})
    occurrences = fields.Integer(
        metadata={"description": f"{FOR_REVIEWERS} How often this failure was sent."}
    )
    reporter_user_name = fields.Function(
        lambda report: report.reporter.user_name if report.reporter else None,
        allow_none=True,
        metadata={"description": f"{FOR_REVIEWERS} The reporter's user name, null if unknown."},
    )
    reporter_email = fields.Function(
        lambda report: report.reporter.email if report.reporter else None,
        allow_none=True,
        metadata={"description": f"{FOR_REVIEWERS} The reporter's email, null if unknown."},
    )

    def _page_type_label(self, report: Any) -> str:
        return PAGE_TYPE_LABELS[PageType(report.page_type)]

    def _content_type_label(self, report: Any) -> str:
        return CONTENT_TYPE_LABELS[ContentType(report.content_type)]

    def _status_label(self, report: Any) -> str:
        return STATUS_LABELS[ReportStatus(report.status)]

    @pre_dump(pass_collection=False)
    def unwrap(self, view: compliance.ReportView, **kwargs: Any) -> Any:
        return view.report

    @post_dump(pass_collection=False, pass_original=True)
    def hide_reviewer_fields(
        self, data: dict[str, Any], view: compliance.ReportView, **kwargs: Any
    ) -> dict[str, Any]:
        if not view.for_reviewer:
            for name in REVIEWER_FIELDS:
                data.pop(name, None)
        return data


# --- input ---------------------------------------------------------------------------------


class ReportCreateSchema(RequestSchema):
    """A content report or a website support request (page type 6, content type 8)."""

    read_models = (ContentReportSchema,)

    page_type = fields.Integer(
        required=True,
        strict=True,
        validate=validate.OneOf([int(value) for value in PageType]),
        metadata={"description": _enum_description(PAGE_TYPE_LABELS), "example": 2},
    )
    content_type = fields.Integer(
        required=True,
        strict=True,
        validate=validate.OneOf([int(value) for value in ContentType]),
        metadata={"description": _enum_description(CONTENT_TYPE_LABELS), "example": 5},
    )
    page_title = short_text("Tempelhof field at sunset")
    page_url = fields.String(
        load_default="",
        validate=validate.Length(max=URL_MAX_LENGTH),
        metadata={
            "description": "A path on this site, or a URL under its public address.",
            "example": "/en/notes/3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f",
        },
    )
    page_reference = short_text(
        "3f0c1d9e-8a5b-4c2d-9e7f-1a2b3c4d5e6f",
        description="What the page shows: a note, trackable, team or user id, a public "
        "code, a team slug or a user name.",
    )
    content_label = short_text("Note text")
    content_reference = short_text(
        "", description="The reported part, e.g. a comment id on a note page."
    )
    content_preview = long_text(
        "Buy cheap watches at ...", description="The content as the reporter saw it."
    )
    report_title = short_text("Spam")
    report_explanation = long_text("This note advertises a shop and has nothing to do here.")

    @validates("page_url")
    def check_page_url(self, value: str, **kwargs: Any) -> None:
        error = site_url_error(value)
        if error:
            raise ValidationError(error)


class ReportReviewSchema(RequestSchema):
    read_models = (ContentReportSchema,)

    status = fields.Integer(
        required=True,
        strict=True,
        validate=validate.OneOf([int(value) for value in ReportStatus]),
        metadata={"description": _enum_description(STATUS_LABELS), "example": 2},
    )
    resolution_text = fields.String(
        validate=validate.Length(max=LONG_TEXT_MAX_LENGTH),
        allow_none=True,
        metadata={
            "description": "Needed (not blank) to resolve; absent keeps the current one.",
            "example": "Removed the note and warned its owner.",
        },
    )


class ReportListQuerySchema(PageQuerySchema):
    status = fields.Integer(validate=validate.OneOf([int(value) for value in ReportStatus]))
    page_type = fields.Integer(validate=validate.OneOf([int(value) for value in PageType]))
    include_untracked_errors = fields.Boolean(
        load_default=False,
        metadata={"description": "Also list 500 tickets nobody asked to track."},
    )


class ErrorReportSchema(RequestSchema):
    """Either `ticketNumber` (a 500's ticket) or a new client-side error."""

    read_models = ()  # a report of a failure: the answer is a receipt, not a record

    ticket_number = fields.String(
        validate=Regexp(TICKET_PATTERN, error="Not a ticket number (ERR-XXXXXXXX)."),
        metadata={"example": "ERR-7K3M9Q2T"},
    )
    user_explanation = long_text("I saved a note and the app showed an error.")
    track_in_support_tickets = fields.Boolean(load_default=False, metadata={"example": True})
    client_context = fields.Dict(
        load_default=None,
        allow_none=True,
        metadata={"example": {"appVersion": "1.4.2", "os": "Android 15"}},
    )
    page_marker_type = short_text("URL", description="URL, app screen or background task.")
    page_marker = short_text("/en/notes/mine")
    request_culture = fields.String(
        load_default="", validate=validate.Length(max=35), metadata={"example": "en-US"}
    )
    request_url = fields.String(
        load_default="",
        validate=validate.Length(max=URL_MAX_LENGTH),
        metadata={"example": "/api/notes/mine"},
    )
    http_method = fields.String(
        load_default="", validate=validate.Length(max=16), metadata={"example": "POST"}
    )
    response_status_code = fields.Integer(
        load_default=None,
        allow_none=True,
        strict=True,
        validate=validate.Range(0, 999),
        metadata={"example": 502},
    )
    exception_type = short_text("TimeoutException")
    exception_message = fields.String(
        load_default="",
        validate=validate.Length(max=ERROR_MESSAGE_MAX_LENGTH),
        metadata={"example": "The request timed out."},
    )
    stack_trace = fields.String(
        load_default="",
        validate=validate.Length(max=STACK_TRACE_MAX_LENGTH),
        metadata={"example": "at SyncWorker.push (SyncWorker.kt:88)"},
    )

    @validates("client_context")
    def check_client_context(self, value: dict[str, Any] | None, **kwargs: Any) -> None:
        import orjson

        if value is not None and len(orjson.dumps(value)) > CLIENT_CONTEXT_MAX_BYTES:
            raise ValidationError(f"At most {CLIENT_CONTEXT_MAX_BYTES} bytes of JSON.")
