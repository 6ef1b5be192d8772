"""Spends of budgets kept in the database (services.shared.budgets): secret code misses of
a client and of its network (decisions: Trackable codes), secret rotations and trackables
created by an account, images uploaded by an account. In the database, so every worker
process shares one count."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow


class BudgetSpend(Base):
    """`amount` units of one budget spent by one subject at `spent_utc` (a group of 100
    trackables is one row of 100). Not a counter that goes down: deleting what was made
    gives nothing back, the work of making it was done."""

    __tablename__ = "budget_spends"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    budget: Mapped[str] = mapped_column(String(32))
    # Whose budget: a keyed hash of a client address or network, or an account id.
    subject: Mapped[str] = mapped_column(String(64))
    amount: Mapped[int] = mapped_column(Integer, default=1)
    spent_utc: Mapped[datetime] = mapped_column(default=utcnow)


Index("ix_budget_spends_subject", BudgetSpend.budget, BudgetSpend.subject, BudgetSpend.spent_utc)
# Pruning what left a budget's window, and the all-clients count of the miss alarm, read
# only that budget's rows in time order, however many subjects count.
Index("ix_budget_spends_budget_spent", BudgetSpend.budget, BudgetSpend.spent_utc)
