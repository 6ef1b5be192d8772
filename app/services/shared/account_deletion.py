"""DELETE /api/account: every area's clean-up, in the order the factory lists them
(app.AREA_HOOKS.account_cleanups), then the user row.

The area that owns the data owns its clean-up; nobody edits a central list of queries.
Shared and team-owned trackables and other users' history stay (contract: Identity).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.extensions import db
from app.hooks import AccountCleanup, DeletionCounts
from app.models.user import User

__all__ = ["DeletionCounts", "delete_account"]


def delete_account(user: User, cleanups: Sequence[AccountCleanup]) -> DeletionCounts:
    """Run each clean-up in order, then delete the user row. Flushes; the route commits."""
    counts = DeletionCounts()
    for cleanup in cleanups:
        cleanup(user, counts)
    db.session.delete(user)
    db.session.flush()
    return counts
