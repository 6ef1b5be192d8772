"""Who may see or review content reports (contract: Compliance; Authentication item 3).

- A report is seen by its reporter and by super-admins; for anyone else it is 404, like
  a missing one (a report must not reveal that it exists).
- Reviewing (the list of all reports, status changes) is for super-admins; other signed-in
  callers get 403.
- What a failure's stack trace and message say, the sender's client context and the link
  to the reported content are reviewer fields: only super-admins see them.
"""

from __future__ import annotations

import uuid

from app.auth import Viewer
from app.error_codes import Code
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.compliance import ContentReport


def can_view(viewer: Viewer, report: ContentReport) -> bool:
    if viewer.is_superadmin:
        return True
    return viewer.user_id is not None and viewer.user_id == report.reporter_user_id


def get_visible(viewer: Viewer, report_id: uuid.UUID) -> ContentReport:
    """The report, or 404 when it does not exist or the viewer may not see it."""
    report = db.session.get(ContentReport, report_id)
    if report is None or not can_view(viewer, report):
        raise NotFound("No such content report.", code=Code.REPORT_NOT_FOUND)
    return report


def can_review(viewer: Viewer) -> bool:
    return viewer.is_superadmin


def require_review(viewer: Viewer) -> None:
    """403 unless the viewer is a super-admin."""
    if not can_review(viewer):
        raise Forbidden("Only super-admins review content reports.", code=Code.SUPERADMIN_REQUIRED)


def sees_reviewer_fields(viewer: Viewer) -> bool:
    """Stack traces, client context, review links: super-admins only."""
    return viewer.is_superadmin
