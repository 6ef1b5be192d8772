"""The budgets' statements below the ORM: every spend and every check runs them, one per
number of (budget, subject) pairs, built once. They run through
app.platform.database.execute_by_driver (psycopg2 on PostgreSQL while FAST_PATHS has
`driver_statements`; otherwise SQLAlchemy Core on the session's connection)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Delete, Insert, Select, Table, and_, bindparam, delete, insert, or_, select

from app.extensions import db
from app.models.budget import BudgetSpend
from app.platform.database import execute_by_driver

SPENDS = cast(Table, BudgetSpend.__table__)


def spends_within(pairs: Sequence[tuple[str, str, datetime]]) -> list[tuple[Any, ...]]:
    """The spends (budget, subject, amount, spent_utc) of each (budget, subject) pair
    made after its `since`, oldest first, in one statement."""
    params: dict[str, Any] = {}
    for index, (budget, subject, since) in enumerate(pairs):
        params[f"budget_{index}"] = budget
        params[f"subject_{index}"] = subject
        params[f"since_{index}"] = since
    return execute_by_driver(db.session, _spends_within(len(pairs)), params)


def delete_spends_before(windows: Sequence[tuple[str, datetime]]) -> None:
    """Delete each budget's spends made at or before its `before`, in one statement."""
    params: dict[str, Any] = {}
    for index, (budget, before) in enumerate(windows):
        params[f"budget_{index}"] = budget
        params[f"before_{index}"] = before
    execute_by_driver(db.session, _left_windows(len(windows)), params)


def insert_spends(spends: Sequence[tuple[str, str, int, datetime]]) -> None:
    """Insert spends (budget, subject, amount, spent_utc), in one statement."""
    params: dict[str, Any] = {}
    for index, (budget, subject, amount, spent_utc) in enumerate(spends):
        params[f"budget_{index}"] = budget
        params[f"subject_{index}"] = subject
        params[f"amount_{index}"] = amount
        params[f"spent_utc_{index}"] = spent_utc
    execute_by_driver(db.session, _new_spends(len(spends)), params)


@functools.cache
def _spends_within(pairs: int) -> Select[Any]:
    return (
        select(SPENDS.c.budget, SPENDS.c.subject, SPENDS.c.amount, SPENDS.c.spent_utc)
        .where(
            or_(
                *(
                    and_(
                        SPENDS.c.budget == bindparam(f"budget_{index}"),
                        SPENDS.c.subject == bindparam(f"subject_{index}"),
                        SPENDS.c.spent_utc > bindparam(f"since_{index}"),
                    )
                    for index in range(pairs)
                )
            )
        )
        .order_by(SPENDS.c.spent_utc)
    )


@functools.cache
def _left_windows(budgets: int) -> Delete:
    return delete(SPENDS).where(
        or_(
            *(
                and_(
                    SPENDS.c.budget == bindparam(f"budget_{index}"),
                    SPENDS.c.spent_utc <= bindparam(f"before_{index}"),
                )
                for index in range(budgets)
            )
        )
    )


@functools.cache
def _new_spends(pairs: int) -> Insert:
    return insert(SPENDS).values(
        [
            {
                "budget": bindparam(f"budget_{index}"),
                "subject": bindparam(f"subject_{index}"),
                "amount": bindparam(f"amount_{index}"),
                "spent_utc": bindparam(f"spent_utc_{index}"),
            }
            for index in range(pairs)
        ]
    )
