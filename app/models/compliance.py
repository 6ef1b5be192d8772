"""Content reports, tracked system errors and support tickets (contract: Compliance)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import IntEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, new_id, utcnow
from app.models.user import User

# Field bounds (decisions are silent; docs/contract/compliance.md, Compliance).
SHORT_TEXT_MAX_LENGTH = 300
URL_MAX_LENGTH = 2048
LONG_TEXT_MAX_LENGTH = 4000
# A ticket gathers explanations from whoever holds its number, up to this much in all.
EXPLANATIONS_MAX_LENGTH = 20_000
CLIENT_KEY_LENGTH = 64  # hex HMAC-SHA256


class PageType(IntEnum):
    PROFILE = 0
    TEAM = 1
    NOTE = 2
    TRACKABLE = 3
    TRACKABLE_GROUP = 4
    SYSTEM_ERROR = 5
    SUPPORT = 6


class ContentType(IntEnum):
    TITLE = 0
    DESCRIPTION = 1
    COMMENT = 2
    BODY = 3
    BIO = 4
    TITLE_AND_CONTENT = 5
    ERROR_DETAILS = 6
    IMAGE = 7
    SUPPORT_REQUEST = 8


class ReportStatus(IntEnum):
    REPORTED = 0
    REVIEWING = 1
    RESOLVED = 2


# The one table of labels (pageTypeLabel, contentTypeLabel, statusLabel on the wire).
PAGE_TYPE_LABELS = {
    PageType.PROFILE: "Profile page",
    PageType.TEAM: "Team page",
    PageType.NOTE: "Note page",
    PageType.TRACKABLE: "Trackable page",
    PageType.TRACKABLE_GROUP: "Trackable group page",
    PageType.SYSTEM_ERROR: "System error",
    PageType.SUPPORT: "Support page",
}
CONTENT_TYPE_LABELS = {
    ContentType.TITLE: "Title",
    ContentType.DESCRIPTION: "Description",
    ContentType.COMMENT: "Comment",
    ContentType.BODY: "Body",
    ContentType.BIO: "Bio",
    ContentType.TITLE_AND_CONTENT: "Title and content",
    ContentType.ERROR_DETAILS: "Error details",
    ContentType.IMAGE: "Image",
    ContentType.SUPPORT_REQUEST: "Support request",
}
STATUS_LABELS = {
    ReportStatus.REPORTED: "Reported",
    ReportStatus.REVIEWING: "Reviewing",
    ReportStatus.RESOLVED: "Resolved",
}


class ContentReport(Base):
    """One report; a tracked system error is a report with page type 5, content type 6.

    The reporter's display name is read from the account, so detaching the reporter
    (account deletion: the foreign key is SET NULL) removes it too. The reviewer's is
    copied at review time: the moderation record keeps who decided.
    """

    __tablename__ = "content_reports"
    __table_args__ = (
        # De-duplication and per-client budgets look up a client's recent reports.
        Index("ix_content_reports_client_key_created_utc", "client_key", "created_utc"),
        Index("ix_content_reports_created_utc", "created_utc"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    reporter_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    reviewer_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    page_type: Mapped[int] = mapped_column(Integer)
    content_type: Mapped[int] = mapped_column(Integer)
    status: Mapped[int] = mapped_column(Integer, default=ReportStatus.REPORTED)
    page_title: Mapped[str] = mapped_column(String(300), default="")
    page_url: Mapped[str] = mapped_column(String(2048), default="")
    page_reference: Mapped[str] = mapped_column(String(300), default="")
    content_label: Mapped[str] = mapped_column(String(300), default="")
    content_reference: Mapped[str] = mapped_column(String(300), default="")
    content_preview: Mapped[str] = mapped_column(Text, default="")
    report_title: Mapped[str] = mapped_column(String(300), default="")
    report_explanation: Mapped[str] = mapped_column(Text, default="")
    resolution_text: Mapped[str] = mapped_column(Text, default="")
    # Tracked system errors: the ticket a 500 answered with, and what happened (kept
    # server-side for reviewers; never part of a client-facing error body).
    ticket_number: Mapped[str | None] = mapped_column(String(32), unique=True)
    track_in_support_tickets: Mapped[bool] = mapped_column(Boolean, default=False)
    error_details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    client_context: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Who decided the last review, as shown then (kept when that account goes).
    reviewer_display_name: Mapped[str | None] = mapped_column(String(100))
    # Where a reviewer opens the reported content, when the reference named content this
    # service holds (a relative API path); shown to super-admins only.
    review_url: Mapped[str | None] = mapped_column(String(URL_MAX_LENGTH))
    # The sender: "user:<id>" or a keyed hash of the client address (de-duplication and
    # the per-client budget of tracked errors), never shown.
    client_key: Mapped[str | None] = mapped_column(String(CLIENT_KEY_LENGTH + 8))
    # Identical server failures of one client share a ticket: a hash of what failed.
    fingerprint: Mapped[str | None] = mapped_column(String(64))
    occurrences: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    reviewed_utc: Mapped[datetime | None] = mapped_column()

    reporter: Mapped[User | None] = relationship(User, foreign_keys=[reporter_user_id])
    reviewer: Mapped[User | None] = relationship(User, foreign_keys=[reviewer_user_id])

    @property
    def reporter_display_name(self) -> str | None:
        return self.reporter.display_text if self.reporter is not None else None
