"""Fingerprints of the keys stored data was made under, by name: a start with another key
is refused before it voids what was stored (app.platform.secret_keys)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow


class KeyFingerprint(Base):
    """A key's fingerprint (an HMAC of a fixed text under it, never the key)."""

    __tablename__ = "key_fingerprints"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    recorded_utc: Mapped[datetime] = mapped_column(default=utcnow)
