"""Identity secrets and counters: refresh tokens, website sessions, sign-in failures,
recovery codes and email codes. Every secret is stored only as a hash (decisions: Identity)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow

DEVICE_MAX_LENGTH = 64


class RefreshToken(Base):
    """One single-use refresh token. Each login starts a family; each refresh marks the
    token used and issues the next one in the same family. Presenting a used token again
    revokes the whole family (someone else holds a copy)."""

    __tablename__ = "refresh_tokens"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    family_id: Mapped[uuid.UUID] = mapped_column(index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # SHA-256, hex
    # The user's security stamp when issued: any stamp rotation also ends the token.
    security_stamp: Mapped[str] = mapped_column(String(64))
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    expires_utc: Mapped[datetime] = mapped_column()
    used_utc: Mapped[datetime | None] = mapped_column(default=None)
    revoked_utc: Mapped[datetime | None] = mapped_column(default=None)
    # Carried from token to token of a family: what signed in (a short label made from the
    # User-Agent, never the header itself) and when. None on tokens issued before they were.
    device: Mapped[str | None] = mapped_column(String(DEVICE_MAX_LENGTH), default=None)
    signed_in_utc: Mapped[datetime | None] = mapped_column(default=None)


class WebsiteSession(Base):
    """A browser signed in on the website. Its cookie holds only a random id; the id's
    SHA-256 is kept here. Sign-out deletes the row, so a copy of the cookie stops working
    at once; a changed security stamp or SESSION_MAX_AGE_HOURS after `created_utc` ends
    it too. `last_used_utc` is written at most every few minutes."""

    __tablename__ = "website_sessions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # SHA-256, hex
    security_stamp: Mapped[str] = mapped_column(String(64))  # the user's at sign-in
    device: Mapped[str] = mapped_column(String(DEVICE_MAX_LENGTH), default="")
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_utc: Mapped[datetime] = mapped_column(default=utcnow)


class LoginFailure(Base):
    """Consecutive failed sign-ins for one email, registered or not, so that a lockout
    reveals nothing about who has an account. Keyed by a hash of the normalized email:
    addresses typed by strangers are not kept in clear."""

    __tablename__ = "login_failures"

    email_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    failure_count: Mapped[int] = mapped_column(Integer, default=0)
    locked_until_utc: Mapped[datetime | None] = mapped_column(default=None)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)


class RecoveryCode(Base):
    """A two-factor recovery code (keyed hash); deleted when used."""

    __tablename__ = "recovery_codes"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    code_hash: Mapped[str] = mapped_column(String(64))
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)


class EmailCode(Base):
    """The single-use part of a signed email code (confirm email, change email, reset
    password): the code carries a random nonce whose hash is this row. Redeeming deletes
    the row, so a code works once."""

    __tablename__ = "email_codes"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    nonce_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    purpose: Mapped[str] = mapped_column(String(32))
    # The address the code was sent to (for an email change: the new address).
    email: Mapped[str] = mapped_column(String(254))
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    expires_utc: Mapped[datetime] = mapped_column()
