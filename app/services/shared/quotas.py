"""Per-account budgets over a sliding window, counted in the database (models.quota):
images uploaded per day, trackables created per hour. Past its budget an account gets
429 with `Retry-After`, the seconds until enough of its counted uses leave the window.

`check` is a cheap early refusal before expensive work (decoding an image, fetching a
link); `take` decides and records under `database.lock_for_write` keyed by the account
and the budget, so two parallel requests cannot both take the last units.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from app.database import lock_for_write
from app.errors import ApiError
from app.extensions import db
from app.models.base import utcnow
from app.models.quota import QuotaUse


@dataclass(frozen=True)
class Quota:
    kind: str  # the rows' `kind`
    limit: int  # units per window
    window: timedelta
    code: str  # the 429's machine `code`
    noun: str  # what is counted, for the message: "images uploaded"


class QuotaExceeded(ApiError):
    """429 problem details with Retry-After (seconds) and the budget's `code`."""

    status, title = 429, "Too many requests"

    def __init__(self, quota: Quota, retry_after: int) -> None:
        hours = quota.window.total_seconds() / 3600
        per = "hour" if hours == 1 else "day" if hours == 24 else f"{hours:g} hours"
        super().__init__(
            f"At most {quota.limit} {quota.noun} per account per {per}. "
            f"Try again in {retry_after} seconds.",
            code=quota.code,
            headers={"Retry-After": str(retry_after)},
        )
        self.retry_after = retry_after


def check(quota: Quota, user_id: uuid.UUID, amount: int = 1, now: datetime | None = None) -> None:
    """Raise QuotaExceeded when `amount` more would go past the budget (no lock)."""
    now = now or utcnow()
    uses = list(
        db.session.execute(
            select(QuotaUse.used_utc, QuotaUse.amount)
            .where(
                QuotaUse.user_id == user_id,
                QuotaUse.kind == quota.kind,
                QuotaUse.used_utc > now - quota.window,
            )
            .order_by(QuotaUse.used_utc)
        ).all()
    )
    excess = sum(used for _, used in uses) + amount - quota.limit
    if excess <= 0:
        return
    # The budget reopens when the oldest uses worth `excess` units have left the window
    # (a request larger than the whole budget waits a full window, and fails again).
    freed, frees_up = 0, now + quota.window
    for used_utc, used in uses:
        freed += used
        if freed >= excess:
            frees_up = used_utc + quota.window
            break
    raise QuotaExceeded(quota, max(1, math.ceil((frees_up - now).total_seconds())))


def take(quota: Quota, user_id: uuid.UUID, amount: int = 1, now: datetime | None = None) -> None:
    """Count `amount` against the budget, or raise QuotaExceeded; under the account's lock
    for this budget (held until the transaction ends). Flushes."""
    lock_for_write(db.session, f"quota:{quota.kind}:{user_id}")
    now = now or utcnow()
    check(quota, user_id, amount, now)
    db.session.execute(
        delete(QuotaUse).where(
            QuotaUse.user_id == user_id,
            QuotaUse.kind == quota.kind,
            QuotaUse.used_utc <= now - quota.window,
        )
    )
    db.session.add(QuotaUse(user_id=user_id, kind=quota.kind, amount=amount, used_utc=now))
    db.session.flush()
