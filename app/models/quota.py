"""Per-account budgets counted over a sliding window (issue: Hardening): images uploaded
per day, trackables created per hour.

One row per use (a group of 100 trackables is one row of amount 100), not a counter that
goes down: deleting what was made does not give the budget back, since the work of
making it was done. Rows older than the longest window are pruned when the same account
uses the same budget again, and go with the account.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow


class QuotaUse(Base):
    __tablename__ = "quota_uses"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    amount: Mapped[int] = mapped_column(Integer)
    used_utc: Mapped[datetime] = mapped_column(default=utcnow)


Index("ix_quota_uses_user_kind", QuotaUse.user_id, QuotaUse.kind, QuotaUse.used_utc)
