"""Trackables: the MINIMAL concepts the notes area needs now.

The trackables area extends this module (codes, activation, groups, journey, visibility,
watch lists, ...). Kept here for now: the trackable itself with its public fields, the
note <-> trackable association (gated notes depend on it) and the account-stored unlocks of
a signed-in viewer (the policy's "viewer who unlocked one of its trackables").
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, Index, String, Table
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import GUID, Base, UtcDateTime, new_id, utcnow


class Trackable(Base):
    __tablename__ = "trackables"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    # No owner scope means unactivated (contract: Trackable activation).
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id"), default=None, index=True
    )
    # No foreign key yet: the teams table arrives with the teams area.
    team_id: Mapped[uuid.UUID | None] = mapped_column(GUID, default=None)
    public_code: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    last_activity_utc: Mapped[datetime] = mapped_column(default=utcnow)


# Which trackables are attached to which notes. Attach/detach through services.notes so
# the note's stored discoverability follows (a gated note leaves discovery on first attach).
note_trackables = Table(
    "note_trackables",
    Base.metadata,
    Column("note_id", GUID, ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True),
    Column("trackable_id", GUID, ForeignKey("trackables.id", ondelete="CASCADE"), primary_key=True),
    Column("attached_utc", UtcDateTime(), nullable=False, default=utcnow),
)
Index("ix_note_trackables_trackable_id", note_trackables.c.trackable_id)


class TrackableUnlock(Base):
    """A signed-in viewer unlocked this trackable (secret code or QR); kept on the account
    so later devices reopen it (decisions: Access sessions for secret codes)."""

    __tablename__ = "trackable_unlocks"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    trackable_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("trackables.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    unlocked_utc: Mapped[datetime] = mapped_column(default=utcnow)
