"""User accounts (identity)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow

USER_NAME_MAX_LENGTH = 32


class User(Base):
    __tablename__ = "users"
    # What the notes' stored copy of their owner's name refers to (models.note): a unique
    # index (not a constraint) so SQLite adds it without rebuilding the table.
    __table_args__ = (Index("uq_users_id_user_name", "id", "user_name", unique=True),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254))
    # Lower-cased email: uniqueness and lookups are case-insensitive on every database.
    normalized_email: Mapped[str] = mapped_column(String(254), unique=True)
    user_name: Mapped[str] = mapped_column(String(USER_NAME_MAX_LENGTH), unique=True)
    display_name: Mapped[str] = mapped_column(String(100), default="")
    password_hash: Mapped[str] = mapped_column(String(255))
    is_email_confirmed: Mapped[bool] = mapped_column(Boolean, default=False)
    is_superadmin: Mapped[bool] = mapped_column(Boolean, default=False)
    # Rotated on password change, account deletion and "forget machine": every access
    # token carries the stamp it was minted with and stops working once it changes.
    security_stamp: Mapped[str] = mapped_column(String(64), default=lambda: uuid.uuid4().hex)
    # Privacy and map preferences saved on the account (GET /api/system/status).
    experience_mode: Mapped[str | None] = mapped_column(String(32), default=None)
    map_source: Mapped[str | None] = mapped_column(String(32), default=None)
    # Two-factor sign-in (TOTP, RFC 6238). The shared key has to be readable to check codes,
    # so it is stored as issued (base32); recovery codes are stored hashed (models.identity).
    is_two_factor_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    two_factor_shared_key: Mapped[str | None] = mapped_column(String(64), default=None)
    # The last TOTP time step accepted: a code of that step or an earlier one is a replay.
    two_factor_last_step: Mapped[int | None] = mapped_column(BigInteger, default=None)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    @property
    def display_text(self) -> str:
        return self.display_name or self.user_name
