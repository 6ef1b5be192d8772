"""Notification mail: each user's choice of mail and its language, one
row per notification on its way to the mailbox, and the daily digest a user has pending
(services.events.mail).

A notification has at most one mail row (its key), which is what keeps a rerun from
mailing it twice; a user has at most one pending digest (its key), which is what keeps
two fan-outs at once from scheduling two.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow
from app.models.enums import stored_enum

MAIL_LANGUAGE_MAX_LENGTH = 8


class MailChoice(StrEnum):
    """How a user hears of notifications by mail."""

    NONE = "none"
    EACH = "each"  # one mail per notification
    DAILY = "daily"  # at most one digest a day


class MailKind(StrEnum):
    EACH = "each"
    DIGEST = "digest"


class MailState(StrEnum):
    """Waiting for its job (`queued`), mailed (`sent`), or dropped when its job ran
    (`skipped`: read meanwhile, no longer visible, the setting or address changed)."""

    QUEUED = "queued"
    SENT = "sent"
    SKIPPED = "skipped"


class NotificationSettings(Base):
    """A user's mail settings; no row means the defaults (services.events.mail)."""

    __tablename__ = "notification_settings"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    mail: Mapped[MailChoice] = mapped_column(stored_enum(MailChoice, 16))
    language: Mapped[str] = mapped_column(String(MAIL_LANGUAGE_MAX_LENGTH))
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class NotificationMail(Base):
    """One notification's way to its user's mailbox: alone (`each`) or in a digest."""

    __tablename__ = "notification_mails"

    notification_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("notifications.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[MailKind] = mapped_column(stored_enum(MailKind, 16))
    state: Mapped[MailState] = mapped_column(stored_enum(MailState, 16), default=MailState.QUEUED)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    sent_utc: Mapped[datetime | None] = mapped_column(default=None)


# A digest reads its user's queued rows.
Index("ix_notification_mails_queue", NotificationMail.user_id, NotificationMail.state)


class NotificationDigest(Base):
    """A user's next digest: when it is due and the job that sends it. Only that job
    sends it; another (a duplicate, one superseded) finds a different id and does nothing."""

    __tablename__ = "notification_digests"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    due_utc: Mapped[datetime]
    job_id: Mapped[uuid.UUID]
