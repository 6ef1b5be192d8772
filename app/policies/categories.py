"""Owner scopes (contract: Categories; Teams): whose tree, and whose notes, a scope is.

A personal scope belongs to its user; a team's scope is the team's workspace, open to its
active members only (policies.teams.require_member, the one place that rule is written).
Categories and notes of a scope follow it: reading, creating and listing them needs the
scope; changing one note also needs the note rule (policies.notes.require_manage).
"""

from __future__ import annotations

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.models.category import OwnerScope
from app.models.team import Team
from app.policies import teams as team_policy


def require_scope(viewer: Viewer, scope: OwnerScope) -> Team | None:
    """The scope's team (None for a personal scope) once the viewer may work in it: a
    team's workspace is 404 to non-members, someone else's personal tree 404 too (it must
    look like a missing category)."""
    if scope.team_id is not None:
        return team_policy.require_member(viewer, scope.team_id)
    if viewer.user_id is None or scope.user_id != viewer.user_id:
        raise NotFound("Category not found.", code=Code.CATEGORY_NOT_FOUND)
    return None
