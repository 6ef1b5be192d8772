"""Flask-Limiter's counters when they live in the database (app.platform.ratelimit_storage)."""

from __future__ import annotations

from sqlalchemy import Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base


class RateLimitCounter(Base):
    """One fixed window of one limit for one client: how many hits it has counted, and
    when it ends (seconds since the epoch, as the limits library counts)."""

    __tablename__ = "rate_limit_counters"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)  # SHA-256 of the key, hex
    hits: Mapped[int] = mapped_column(Integer)
    window_ends_epoch: Mapped[float] = mapped_column(Float, index=True)
