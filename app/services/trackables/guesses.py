"""The guess budget for secret codes (decisions: Trackable codes): lookups, `/trackable/{code}`
visits and writes carrying an `accessCode` that match nothing count against the client;
after SECRET_GUESS_LIMIT misses within SECRET_GUESS_WINDOW_MINUTES every such request is
429 with `Retry-After` until the oldest counted miss leaves the window.

- The client is its IP address (as app.extensions.client_ip resolves it, trusted proxies
  only), kept as a keyed hash (`guess_key`) so no raw address is stored.
- Misses are rows (`SecretGuessMiss`), so every worker process shares one budget. Old rows
  are pruned whenever a miss is counted.
- The budget is checked before a code is resolved, and a refused request counts nothing:
  an over-budget client learns nothing about its guess, a hit included, and its wait does
  not grow while it keeps knocking.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from app.errors import ApiError
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import SecretGuessMiss


class GuessBudgetExceeded(ApiError):
    """429 problem details with Retry-After (seconds)."""

    status, title = 429, "Too many requests"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "Too many codes that match nothing were tried from this address. "
            f"Try again in {retry_after} seconds.",
            headers={"Retry-After": str(retry_after)},
        )
        self.retry_after = retry_after


def guess_key(client_ip: str, config: Mapping[str, Any]) -> str:
    """The budget's client: a keyed hash of its IP address (HMAC-SHA256, hex)."""
    message = b"secret-guesses:" + client_ip.encode()
    return hmac.new(str(config["SECRET_KEY"]).encode(), message, hashlib.sha256).hexdigest()


def _window(config: Mapping[str, Any]) -> timedelta:
    return timedelta(minutes=config["SECRET_GUESS_WINDOW_MINUTES"])


def check_budget(
    client_key: str, config: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Raise GuessBudgetExceeded (429) when the client has used its budget."""
    now = now or utcnow()
    window, limit = _window(config), config["SECRET_GUESS_LIMIT"]
    counted = list(
        db.session.scalars(
            select(SecretGuessMiss.missed_utc)
            .where(
                SecretGuessMiss.client_key == client_key,
                SecretGuessMiss.missed_utc > now - window,
            )
            .order_by(SecretGuessMiss.missed_utc)
        )
    )
    if len(counted) < limit:
        return
    # The budget reopens when enough misses have left the window for one more guess
    # (one, unless concurrent workers counted a few past the limit).
    frees_up = counted[len(counted) - limit] + window
    raise GuessBudgetExceeded(max(1, math.ceil((frees_up - now).total_seconds())))


def count_miss(client_key: str, config: Mapping[str, Any], *, now: datetime | None = None) -> None:
    """Count one miss for the client, and drop every client's misses that left the window."""
    now = now or utcnow()
    db.session.execute(
        delete(SecretGuessMiss).where(SecretGuessMiss.missed_utc <= now - _window(config))
    )
    db.session.add(SecretGuessMiss(client_key=client_key, missed_utc=now))
    db.session.flush()
