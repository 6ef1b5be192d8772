"""The owner scopes routes name: the caller's own, or a team's."""

from __future__ import annotations

from uuid import UUID

from app.auth import current_viewer
from app.models.category import OwnerScope


def my_scope() -> OwnerScope:
    """The caller's personal scope, on routes `@blp.auth()` guards (sign-in is required
    there, once)."""
    return OwnerScope.personal(current_viewer().account.id)


def team_scope(team_id: UUID) -> OwnerScope:
    """A team's scope; whether the caller may work in it is policies.categories."""
    return OwnerScope.team(team_id)
