"""Content reports, tracked system errors and support tickets (contract: Compliance)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import IntEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow


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


class ContentReport(Base):
    """One report; a tracked system error is a report with page type 5, content type 6."""

    __tablename__ = "content_reports"

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
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    reviewed_utc: Mapped[datetime | None] = mapped_column()
