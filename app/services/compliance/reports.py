"""Content reports and support requests (contract: Content report, Content report status,
Compliance): filing, the reporter's reads, the super-admins' list and review.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import selectinload

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound, ValidationFailed
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.base import utcnow
from app.models.compliance import ContentReport, ContentType, PageType, ReportStatus
from app.models.user import User
from app.platform.secret_keys import record_hmac, record_key
from app.policies import reports as policy
from app.services.compliance.references import review_url
from app.services.shared.pages import Listing, Order, Page, read_list


@dataclass(frozen=True)
class ReportView:
    """A report as one viewer reads it: reviewer fields only for super-admins."""

    report: ContentReport
    for_reviewer: bool


@dataclass(frozen=True)
class FiledReport:
    """The outcome of filing: the report, and whether it was already there (a duplicate)."""

    view: ReportView
    created: bool


ReportList = Listing[ReportView]
# Newest first, ties by id (both lists).
ORDER = Order(ContentReport.created_utc.desc(), ContentReport.id)


def client_key(viewer: Viewer, client_ip: str, config: Mapping[str, Any]) -> str:
    """Who sent a report: the account, else a keyed hash of the client's address."""
    if viewer.user_id is not None:
        return f"user:{viewer.user_id}"
    return "ip:" + record_hmac(
        record_key(config, "compliance"), b"compliance:" + client_ip.encode()
    )


def view_of(viewer: Viewer, report: ContentReport) -> ReportView:
    return ReportView(report, policy.sees_reviewer_fields(viewer))


def file_report(
    viewer: Viewer,
    *,
    sender: str,
    config: Mapping[str, Any],
    page_type: int,
    content_type: int,
    **fields: str,
) -> FiledReport:
    """File a content report or a website support request (page type 6, content type 8).

    System errors (page type 5, content type 6) come only through the errors route. The
    same sender reporting the same content again within REPORT_DUPLICATE_WINDOW_MINUTES
    gets the report it already filed.
    """
    _check_types(page_type, content_type)
    text = {name: value.strip() for name, value in fields.items()}
    if not text.get("report_title") and not text.get("report_explanation"):
        raise ValidationFailed(
            {"reportExplanation": ["Say what is wrong: a report title or an explanation."]}
        )
    duplicate = _recent_duplicate(sender, page_type, content_type, text, config)
    if duplicate is not None:
        return FiledReport(view_of(viewer, duplicate), created=False)
    report = ContentReport(
        reporter_user_id=viewer.user_id,
        page_type=page_type,
        content_type=content_type,
        status=ReportStatus.REPORTED,
        review_url=review_url(
            page_type, text.get("page_reference", ""), text.get("content_reference", "")
        ),
        client_key=sender,
        **text,
    )
    report.content_preview = fields.get("content_preview", "")  # the reporter's view, as sent
    db.session.add(report)
    db.session.flush()
    return FiledReport(view_of(viewer, report), created=True)


def _check_types(page_type: int, content_type: int) -> None:
    if page_type == PageType.SYSTEM_ERROR or content_type == ContentType.ERROR_DETAILS:
        raise ValidationFailed(
            {"pageType": ["System errors are reported through POST /api/compliance/errors."]}
        )
    if (page_type == PageType.SUPPORT) != (content_type == ContentType.SUPPORT_REQUEST):
        raise ValidationFailed(
            {"contentType": ["A support request is page type 6 with content type 8."]}
        )


def _recent_duplicate(
    sender: str,
    page_type: int,
    content_type: int,
    text: Mapping[str, str],
    config: Mapping[str, Any],
) -> ContentReport | None:
    since = utcnow() - timedelta(minutes=config["REPORT_DUPLICATE_WINDOW_MINUTES"])
    same = {
        "client_key": sender,
        "page_type": page_type,
        "content_type": content_type,
        "page_url": text.get("page_url", ""),
        "page_reference": text.get("page_reference", ""),
        "content_reference": text.get("content_reference", ""),
    }
    if page_type == PageType.SUPPORT:  # a support request is its own content
        same["report_title"] = text.get("report_title", "")
        same["report_explanation"] = text.get("report_explanation", "")
    query = (
        select(ContentReport)
        .filter_by(**same)
        .where(ContentReport.created_utc >= since)
        .order_by(ContentReport.created_utc.desc())
        .limit(1)
    )
    return db.session.scalar(query)


def get_report(viewer: Viewer, report_id: uuid.UUID) -> ReportView:
    """One report: the reporter's own, or any for a super-admin (404 otherwise)."""
    return view_of(viewer, policy.get_visible(viewer, report_id))


def my_reports(viewer: Viewer, *, page: Page | None = None) -> ReportList:
    """The caller's reports, newest first (their own data: not capped), or one `page`."""
    query = (
        select(ContentReport)
        .where(ContentReport.reporter_user_id == viewer.account.id)
        .options(selectinload(ContentReport.reporter), selectinload(ContentReport.reviewer))
    )
    found = read_list(query, ORDER, page=page, scalars=True)
    return found.with_items([view_of(viewer, report) for report in found.items])


def list_reports(
    viewer: Viewer,
    *,
    cap: int,
    status: int | None = None,
    page_type: int | None = None,
    include_untracked_errors: bool = False,
    page: Page | None = None,
) -> ReportList:
    """Every report for review, newest first, at most `cap` or one `page` (super-admins;
    403 otherwise).

    Tracked system errors join the workflow only when their sender asked to track them
    (contract: Content report); `include_untracked_errors` lists the others too.
    """
    policy.require_review(viewer)
    query = select(ContentReport)
    if status is not None:
        query = query.where(ContentReport.status == status)
    if page_type is not None:
        query = query.where(ContentReport.page_type == page_type)
    if not include_untracked_errors:
        query = query.where(
            (ContentReport.page_type != PageType.SYSTEM_ERROR)
            | ContentReport.track_in_support_tickets.is_(True)
        )
    query = query.options(
        selectinload(ContentReport.reporter), selectinload(ContentReport.reviewer)
    )
    found = read_list(query, ORDER, page=page, cap=cap, scalars=True)
    return found.with_items([view_of(viewer, report) for report in found.items])


def review_report(
    viewer: Viewer, report_id: uuid.UUID, *, status: int, resolution_text: str | None = None
) -> ReportView:
    """Set a report's status (contract: Content report status). Super-admins only (403);
    resolved (2) needs a resolution text that is not blank (decisions: Compliance)."""
    policy.require_review(viewer)
    report = policy.get_visible(viewer, report_id)
    _apply_review(
        report,
        status,
        resolution_text,
        reviewer_user_id=viewer.account.id,
        reviewer_display_name=viewer.account.display_text,
    )
    return view_of(viewer, report)


def operator_reports(*, status: int | None = None, limit: int = 50) -> list[ContentReport]:
    """For operators without a web client (`flask reports list`): the review list's
    reports, newest first."""
    query = select(ContentReport).where(
        (ContentReport.page_type != PageType.SYSTEM_ERROR)
        | ContentReport.track_in_support_tickets.is_(True)
    )
    if status is not None:
        query = query.where(ContentReport.status == status)
    query = query.order_by(ContentReport.created_utc.desc(), ContentReport.id).limit(limit)
    return list(db.session.scalars(query.options(selectinload(ContentReport.reporter))))


def operator_resolve(report_id: uuid.UUID, resolution_text: str, *, reviewer: str) -> ContentReport:
    """Resolve a report from the command line (`flask reports resolve ID TEXT`): the same
    rule as the route (a text that is not blank), the operator's name as reviewer."""
    report = db.session.get(ContentReport, report_id)
    if report is None:
        raise NotFound("No such content report.", code=Code.REPORT_NOT_FOUND)
    _apply_review(
        report,
        ReportStatus.RESOLVED,
        resolution_text,
        reviewer_user_id=None,
        reviewer_display_name=reviewer,
    )
    return report


def _apply_review(
    report: ContentReport,
    status: int,
    resolution_text: str | None,
    *,
    reviewer_user_id: uuid.UUID | None,
    reviewer_display_name: str,
) -> None:
    text = report.resolution_text if resolution_text is None else resolution_text.strip()
    if status == ReportStatus.RESOLVED and not text:
        raise ValidationFailed({"resolutionText": ["Resolving a report needs a resolution text."]})
    report.status = status
    report.resolution_text = text
    report.reviewer_user_id = reviewer_user_id
    report.reviewer_display_name = reviewer_display_name[:100]
    report.reviewed_utc = utcnow()
    db.session.flush()


def detach_account_reports(user: User, counts: DeletionCounts) -> None:
    """Account clean-up: the user's reports stay for moderation without their reporter
    (the display name is read from the account, so it goes too); reviews they made keep
    the reviewer's name as shown then, without the account."""
    db.session.execute(
        update(ContentReport)
        .where(ContentReport.reporter_user_id == user.id)
        .values(reporter_user_id=None)
    )
    db.session.execute(
        update(ContentReport)
        .where(ContentReport.reviewer_user_id == user.id)
        .values(reviewer_user_id=None)
    )
