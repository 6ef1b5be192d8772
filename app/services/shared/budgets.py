"""Budgets kept in the database, against abuse: at most `limit` units of a subject in any
sliding `window`, shared by every worker process (secret code guesses, secret rotations and
trackables created per account, images uploaded per account per day).

A spend is a row (`BudgetSpend`) of `amount` units; rows that left the window are pruned
when the budget is spent, and an account's go with the account. Deleting what was made gives
nothing back: the work of making it was done. `check` is a cheap early refusal before slow
work (no lock, nothing counted); `spend_or_refuse` decides. Over the budget: 429 with the
budget's `refusal`, its `code`, and `Retry-After` until enough spends leave the window.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    delete,
)

from app.error_codes import Code
from app.errors import ApiError
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.base import utcnow
from app.models.budget import BudgetSpend
from app.models.user import User
from app.platform.database import lock_for_write
from app.services.shared import queries


@dataclass(frozen=True)
class Budget:
    """`limit` units per subject in any `window`; past it a 429 with `refusal` as its
    detail and `code` as its machine code."""

    name: str
    limit: int
    window: timedelta
    refusal: str = "This limit is reached."
    code: Code | None = None

    @classmethod
    def from_config(
        cls,
        name: str,
        config: Mapping[str, Any],
        limit_key: str,
        window_key: str,
        *,
        refusal: str = "This limit is reached.",
        code: Code | None = None,
    ) -> Budget:
        """The limit and the window (in minutes) from settings."""
        window = timedelta(minutes=int(config[window_key]))
        return cls(name, int(config[limit_key]), window, refusal, code)

    def exceeded(self, retry_after: int) -> LimitExceeded:
        return LimitExceeded(self.refusal, retry_after, code=self.code)


class LimitExceeded(ApiError):
    """429 problem details with Retry-After (seconds), and the budget's `code` (else
    `rate_limited`)."""

    status = 429
    code = Code.RATE_LIMITED

    def __init__(self, detail: str, retry_after: int, *, code: Code | None = None) -> None:
        super().__init__(
            f"{detail} Try again in {retry_after} seconds.",
            code=code,
            headers={"Retry-After": str(retry_after)},
        )
        self.retry_after = retry_after


def hold(lock_subject: str) -> None:
    """Lock `lock_subject` for this transaction: the checks and spends that follow, until
    the commit, are one step for every request of the same subject."""
    lock_for_write(db.session, f"budget:{lock_subject}", reread=False)


def wait_seconds(budget: Budget, subject: str, now: datetime, amount: int = 1) -> int | None:
    """None while the subject may spend `amount` more; else the seconds until it may."""
    return waits([(budget, subject)], now, amount)[0]


def waits(spenders: list[tuple[Budget, str]], now: datetime, amount: int = 1) -> list[int | None]:
    """`wait_seconds` of each (budget, subject), read in one query."""
    rows = queries.spends_within(
        [(budget.name, subject, now - budget.window) for budget, subject in spenders]
    )
    answers: list[int | None] = []
    for budget, subject in spenders:
        spent = [
            (units, at) for name, who, units, at in rows if (name, who) == (budget.name, subject)
        ]
        excess = sum(units for units, _ in spent) + amount - budget.limit
        if excess <= 0:
            answers.append(None)
            continue
        # It fits when the oldest spends worth `excess` units have left the window (more
        # than one spend when the limit was lowered since, or for several units); more
        # units than the whole budget wait a full window, and are refused again.
        freed, frees_up = 0, now + budget.window
        for units, at in spent:
            freed += units
            if freed >= excess:
                frees_up = at + budget.window
                break
        answers.append(max(1, math.ceil((frees_up - now).total_seconds())))
    return answers


def check(budget: Budget, subject: str, amount: int = 1, *, now: datetime | None = None) -> None:
    """LimitExceeded (429) when `amount` more would go past the budget; counts nothing.
    Without `hold` first a cheap early refusal only: `spend_or_refuse` decides."""
    seconds = wait_seconds(budget, subject, now or utcnow(), amount)
    if seconds is not None:
        raise budget.exceeded(seconds)


def spend(budget: Budget, subject: str, now: datetime, amount: int = 1) -> None:
    """Count `amount` units, and drop the budget's spends that left its window."""
    spend_all([(budget, subject)], now, amount)


def spend_all(spenders: list[tuple[Budget, str]], now: datetime, amount: int = 1) -> None:
    """Count `amount` units of each (budget, subject), and drop what left those budgets'
    windows (one DELETE, one INSERT)."""
    budgets = list({budget.name: budget for budget, _ in spenders}.values())
    queries.delete_spends_before([(budget.name, now - budget.window) for budget in budgets])
    queries.insert_spends([(budget.name, subject, amount, now) for budget, subject in spenders])
    db.session.flush()  # what else is pending, as the ORM's insert of the spends did


# Takes a transaction lock on the subject (app.platform.database.lock_for_write: an advisory lock on
# PostgreSQL, the write lock on SQLite) before the count is read, held until the request commits, so
# of twenty parallel requests against a budget of ten exactly ten get through.
def spend_or_refuse(
    budget: Budget, subject: str, amount: int = 1, *, now: datetime | None = None
) -> None:
    """Spend `amount` units in one step with the check, under the subject's lock until the
    commit; over the budget LimitExceeded (429), and nothing is counted. Flushes."""
    now = now or utcnow()
    hold(f"{budget.name}:{subject}")
    check(budget, subject, amount, now=now)
    spend(budget, subject, now, amount)


def delete_account_spends(user: User, _counts: DeletionCounts) -> None:
    """An account clean-up (app.register_area_hooks): the account's spends go with it."""
    db.session.execute(delete(BudgetSpend).where(BudgetSpend.subject == str(user.id)))
