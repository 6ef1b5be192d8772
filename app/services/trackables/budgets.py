"""Budgets kept in the database (issue: Hardening): at most `limit` spends of a subject in
any `window`, shared by every worker process. The guess budget (guesses.py) and the
per-account creation and rotation limits are budgets.

- A spend is a row (`BudgetSpend`); a budget's rows that left its window are pruned when
  it is spent.
- The check and the count are one step: `hold` takes a transaction lock on the subject
  (app.database.lock_for_write: an advisory lock on PostgreSQL, the write lock on SQLite)
  before the count is read, and the lock is held until the request commits, so of twenty
  parallel requests against a budget of ten exactly ten get through.
- `Retry-After` is the seconds until enough spends leave the window for one more.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, or_, select

from app.database import lock_for_write
from app.errors import ApiError
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import BudgetSpend


@dataclass(frozen=True)
class Budget:
    """`limit` spends per subject in any `window`."""

    name: str
    limit: int
    window: timedelta

    @classmethod
    def from_config(
        cls, name: str, config: Mapping[str, Any], limit_key: str, window_key: str
    ) -> Budget:
        return cls(name, int(config[limit_key]), timedelta(minutes=int(config[window_key])))


class LimitExceeded(ApiError):
    """429 problem details with Retry-After (seconds)."""

    status, title = 429, "Too many requests"

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(
            f"{detail} Try again in {retry_after} seconds.",
            headers={"Retry-After": str(retry_after)},
        )
        self.retry_after = retry_after


def hold(lock_subject: str) -> None:
    """Lock `lock_subject` for this transaction: the checks and spends that follow, until
    the commit, are one step for every request of the same subject."""
    lock_for_write(db.session, f"budget:{lock_subject}", reread=False)


def wait_seconds(budget: Budget, subject: str, now: datetime) -> int | None:
    """None while the subject may spend once more; else the seconds until it may."""
    return waits([(budget, subject)], now)[0]


def waits(spenders: list[tuple[Budget, str]], now: datetime) -> list[int | None]:
    """`wait_seconds` of each (budget, subject), read in one query."""
    rows = db.session.execute(
        select(BudgetSpend.budget, BudgetSpend.subject, BudgetSpend.spent_utc)
        .where(
            or_(
                *(
                    and_(
                        BudgetSpend.budget == budget.name,
                        BudgetSpend.subject == subject,
                        BudgetSpend.spent_utc > now - budget.window,
                    )
                    for budget, subject in spenders
                )
            )
        )
        .order_by(BudgetSpend.spent_utc)
    ).all()
    answers: list[int | None] = []
    for budget, subject in spenders:
        spent = [
            row.spent_utc for row in rows if (row.budget, row.subject) == (budget.name, subject)
        ]
        if len(spent) < budget.limit:
            answers.append(None)
            continue
        # One more fits when enough spends have left the window (one, unless the limit was
        # lowered since they were counted).
        frees_up = spent[len(spent) - budget.limit] + budget.window
        answers.append(max(1, math.ceil((frees_up - now).total_seconds())))
    return answers


def spend(budget: Budget, subject: str, now: datetime) -> None:
    """Count one spend, and drop the budget's spends that left its window."""
    spend_all([(budget, subject)], now)


def spend_all(spenders: list[tuple[Budget, str]], now: datetime) -> None:
    """Count one spend of each (budget, subject), and drop what left those budgets'
    windows (one DELETE, one INSERT)."""
    budgets = {budget.name: budget for budget, _ in spenders}.values()
    db.session.execute(
        delete(BudgetSpend).where(
            or_(
                *(
                    and_(
                        BudgetSpend.budget == budget.name,
                        BudgetSpend.spent_utc <= now - budget.window,
                    )
                    for budget in budgets
                )
            )
        )
    )
    db.session.add_all(
        BudgetSpend(budget=budget.name, subject=subject, spent_utc=now)
        for budget, subject in spenders
    )
    db.session.flush()


def spend_or_refuse(
    budget: Budget, subject: str, refusal: str, *, now: datetime | None = None
) -> None:
    """Spend once, in one step with the check; over the budget LimitExceeded (429) with
    `refusal` as its detail, and nothing is counted."""
    now = now or utcnow()
    hold(f"{budget.name}:{subject}")
    seconds = wait_seconds(budget, subject, now)
    if seconds is not None:
        raise LimitExceeded(refusal, seconds)
    spend(budget, subject, now)


# --- per-account limits of issuing codes ---------------------------------------------------

CREATE, ROTATE = "trackable-create", "secret-rotate"
# Each action: its settings and the detail of its refusal.
ACTIONS = {
    CREATE: (
        "TRACKABLE_CREATE_LIMIT",
        "TRACKABLE_CREATE_WINDOW_MINUTES",
        "This account created too many trackables.",
    ),
    ROTATE: (
        "SECRET_ROTATE_LIMIT",
        "SECRET_ROTATE_WINDOW_MINUTES",
        "This account rotated too many secret codes.",
    ),
}


def _action(action: str, config: Mapping[str, Any]) -> tuple[Budget, str]:
    limit_key, window_key, refusal = ACTIONS[action]
    return Budget.from_config(action, config, limit_key, window_key), refusal


def check_action(action: str, user_id: uuid.UUID, config: Mapping[str, Any]) -> None:
    """429 when the account has used its limit of `action`, without counting (a cheap
    refusal before slow work; `spend_action` decides)."""
    budget, refusal = _action(action, config)
    seconds = wait_seconds(budget, str(user_id), utcnow())
    if seconds is not None:
        raise LimitExceeded(refusal, seconds)


def spend_action(action: str, user_id: uuid.UUID, config: Mapping[str, Any]) -> None:
    """Count one `action` of the account, in one step with its check (429 over it)."""
    budget, refusal = _action(action, config)
    spend_or_refuse(budget, str(user_id), refusal)
