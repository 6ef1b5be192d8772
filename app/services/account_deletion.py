"""DELETE /api/account: one place where each area registers its own clean-up.

An area (notes, categories, teams, trackables, images, ...) decorates a function with
`@account_cleanup(order)`; `delete_account` runs them in order, then removes the user.
Nobody edits a central list of queries: the area that owns the data owns its clean-up.
Shared and team-owned trackables and other users' history stay (contract: Identity).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.extensions import db
from app.models.user import User


@dataclass
class DeletionCounts:
    """The four counts of the account deletion result."""

    notes_deleted: int = 0
    categories_deleted: int = 0
    linked_providers_deleted: int = 0


Cleanup = Callable[[User, DeletionCounts], None]
_cleanups: list[tuple[int, str, Cleanup]] = []


def account_cleanup(order: int = 100) -> Callable[[Cleanup], Cleanup]:
    """Register a clean-up; lower `order` runs first (teams before notes, notes before
    categories, and so on)."""

    def register(func: Cleanup) -> Cleanup:
        key = f"{func.__module__}.{func.__qualname__}"
        if all(existing != key for _, existing, _ in _cleanups):
            _cleanups.append((order, key, func))
            _cleanups.sort(key=lambda item: (item[0], item[1]))
        return func

    return register


def registered_cleanups() -> list[str]:
    return [key for _, key, _ in _cleanups]


def delete_account(user: User) -> DeletionCounts:
    """Run every area's clean-up, then delete the user row. Flushes; the route commits."""
    counts = DeletionCounts()
    for _, _, cleanup in _cleanups:
        cleanup(user, counts)
    db.session.delete(user)
    db.session.flush()
    return counts
