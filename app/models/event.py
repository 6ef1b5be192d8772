"""Events and the inbox: what happened to a trackable or a group, written in the
same transaction as the change (a transactional outbox), and one inbox row per user who
hears of it, written later by the worker's fan-out (services.events).

An area watch (beyond the contract) is a user's map window, optionally with a content
language: its user hears of new public notes and journey stops inside it.

An event keeps ids and the public fields a viewer may see at the time (`fields`), never a
secret or a hidden field. A notification is unique per event and user, so a fan-out run
again after a crash adds nobody twice.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, new_id, utcnow
from app.models.category import LANGUAGE_TAG_MAX_LENGTH

EVENT_TYPE_MAX_LENGTH = 50


class Event(Base):
    __tablename__ = "events"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    event_type: Mapped[str] = mapped_column(String(EVENT_TYPE_MAX_LENGTH))
    # The subject: a trackable's events go with it; a group or note gone leaves the event.
    trackable_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), default=None, index=True
    )
    group_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("trackable_groups.id", ondelete="SET NULL"), default=None
    )
    note_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("notes.id", ondelete="SET NULL"), default=None, index=True
    )
    # The team the subject belongs to when the event is recorded (a team trackable, a
    # team's note or membership): team admins and team webhooks hear of it by this.
    team_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), default=None, index=True
    )
    # Who made the change (None: anonymous, or an account since deleted): never told of it.
    actor_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    fields: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)


class Notification(Base):
    """One user's inbox row for one event."""

    __tablename__ = "notifications"
    __table_args__ = (UniqueConstraint("event_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    event_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE")  # the unique key below leads with it
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # The event's time: the inbox is read newest event first.
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    read_utc: Mapped[datetime | None] = mapped_column(default=None)

    event: Mapped[Event] = relationship(lazy="joined")


# A user's inbox, newest first (read backwards), and its unread count.
Index("ix_notifications_inbox", Notification.user_id, Notification.created_utc, Notification.id)


# The largest window an area watch may span, in degrees of latitude and of longitude. The
# fan-out finds the watches holding a point by a range scan of the index below on
# min_latitude in [latitude - span, latitude], so no watch may be taller than this.
AREA_WATCH_MAX_SPAN_DEGREES = 10.0


class AreaWatch(Base):
    """A user's watched map window; min_longitude > max_longitude crosses the antimeridian."""

    __tablename__ = "area_watches"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    min_latitude: Mapped[float] = mapped_column(Float)
    min_longitude: Mapped[float] = mapped_column(Float)
    max_latitude: Mapped[float] = mapped_column(Float)
    max_longitude: Mapped[float] = mapped_column(Float)
    # Canonical casing (services.shared.languages); None: every language.
    content_language: Mapped[str | None] = mapped_column(
        String(LANGUAGE_TAG_MAX_LENGTH), default=None
    )
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)


# The watches holding a point: a range on min_latitude, the rest checked in the index.
Index(
    "ix_area_watches_box",
    AreaWatch.min_latitude,
    AreaWatch.max_latitude,
    AreaWatch.min_longitude,
    AreaWatch.max_longitude,
)
# A user's watches, newest first (the list, the cap, the account clean-up).
Index("ix_area_watches_user", AreaWatch.user_id, AreaWatch.created_utc, AreaWatch.id)
