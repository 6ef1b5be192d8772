"""Who may see or do what in a team (contract: Teams; decisions: Teams).

A team's workspace (notes, categories, members, settings, invite links) is its active
members' business: anyone else gets 403 when the team's page is `Public`, 404 when it is
`MembersOnly`; admin-only actions are 403 to other members. `Viewer.team_roles` is read once
per request from the caller's active memberships, so a removed member loses access at their
next request. A write request reads the team it names locked (`team_for`), so a team's
deletion and the writes into it take turns. Team note actions are note rules
(policies/notes.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from flask import has_app_context
from sqlalchemy import select

from app.auth import Viewer, is_write_request
from app.error_codes import Code
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.team import (
    MembershipStatus,
    PageVisibility,
    Team,
    TeamMembership,
    TeamRole,
    team_slug,
)
from app.models.user import User
from app.platform.database import get_for_write, on_write_lock

# --- the viewer's teams ------------------------------------------------------------------


def active_team_roles(user: User | None) -> Mapping[str, Any]:
    """Viewer.team_roles: team id -> role, active memberships only."""
    if user is None:
        return {}
    rows = db.session.execute(
        select(TeamMembership.team_id, TeamMembership.is_admin).where(
            TeamMembership.user_id == user.id,
            TeamMembership.status == MembershipStatus.MEMBER,
        )
    )
    return {
        "team_roles": {
            team_id: TeamRole.ADMIN if admin else TeamRole.MEMBER for team_id, admin in rows
        }
    }


# --- teams -------------------------------------------------------------------------------


def _not_found() -> NotFound:
    return NotFound("Team not found.", code=Code.TEAM_NOT_FOUND)


def team_for(team_id: uuid.UUID, *, exclusive: bool = False) -> Team | None:
    """The team a request names. A write request reads it locked until its transaction
    ends (`get_for_write`): the team's deletion takes the lock `exclusive`ly, the writes
    into the team share it, so a deletion waits for the writes already in the team and
    the writes after it find no team (404). On SQLite, where a shared read locks nothing,
    the team is read again once the request takes the database's write lock
    (`_teams_under_lock`)."""
    if not is_write_request():
        return db.session.get(Team, team_id)
    team = get_for_write(db.session, Team, team_id, exclusive=exclusive)
    if db.session.get_bind().dialect.name == "sqlite" and not exclusive:
        _teams_to_check().add(team_id)
    return team


def _teams_to_check() -> set[uuid.UUID]:
    """The teams this transaction read before taking SQLite's write lock (kept with the
    transaction: one that ended without the lock leaves nothing for the next)."""
    session = db.session()
    transaction = session.get_transaction()
    kept = session.info.get(TEAMS_TO_CHECK)
    if kept is None or kept[0] is not transaction:
        kept = session.info[TEAMS_TO_CHECK] = (transaction, set())
    return kept[1]


# Session.info: `_teams_to_check`'s transaction and teams.
TEAMS_TO_CHECK = "teams_to_check"


def _teams_under_lock(connection: Any) -> None:
    """SQLite, as a transaction takes the database's write lock: 404 when a team it read
    before (`team_for`) was deleted meanwhile."""
    if not has_app_context():
        return
    wanted = _teams_to_check()
    if not wanted:
        return
    found = set(connection.execute(select(Team.id).where(Team.id.in_(wanted))).scalars())
    missing = wanted - found
    wanted.clear()
    if missing:
        raise _not_found()


on_write_lock(_teams_under_lock)


def active_member_ids(team_ids: Iterable[uuid.UUID], *, admins: bool = False) -> set[uuid.UUID]:
    """The accounts with an active membership (or, with `admins`, an admin's) in these
    teams: who holds a team's rights now, for many accounts at once (who hears of an
    event, who sees a trackable)."""
    teams = list(team_ids)
    if not teams:
        return set()
    query = select(TeamMembership.user_id).where(
        TeamMembership.team_id.in_(teams), TeamMembership.status == MembershipStatus.MEMBER
    )
    if admins:
        query = query.where(TeamMembership.is_admin.is_(True))
    return set(db.session.scalars(query))


def own_membership(viewer: Viewer, team_id: uuid.UUID) -> TeamMembership | None:
    """The caller's record with the team (any status), if any."""
    if viewer.user_id is None:
        return None
    return db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == team_id, TeamMembership.user_id == viewer.user_id
        )
    )


# A team is visible (may be requested) when its page is public, or to a user who has any record with
# it (a member, an invitee, a requester).
def can_view_team(viewer: Viewer, team: Team, own: TeamMembership | None) -> bool:
    """The team exists for this viewer: a public page, or a record of theirs with it."""
    return team.page_visibility == PageVisibility.PUBLIC or own is not None


def get_visible_team(viewer: Viewer, team_id: uuid.UUID) -> tuple[Team, TeamMembership | None]:
    """The team and the caller's record with it, or 404."""
    team = team_for(team_id)
    own = own_membership(viewer, team_id) if team is not None else None
    if team is None or not can_view_team(viewer, team, own):
        raise _not_found()
    return team, own


def require_member(viewer: Viewer, team_id: uuid.UUID, *, exclusive: bool = False) -> Team:
    """The team's workspace: active members only. Anyone else gets 403 when the team's page
    is public (they can see the team, not act in it), 404 when it is members-only (they
    cannot see it; invitees and requesters included: page visibility alone decides).
    `exclusive`: the team's own deletion (`team_for`)."""
    team = team_for(team_id, exclusive=exclusive)
    if team is not None and viewer.is_member_of(team_id):
        return team
    if team is not None and team.page_visibility == PageVisibility.PUBLIC:
        raise Forbidden("Only the team's members may do this.", code=Code.TEAM_MEMBERSHIP_REQUIRED)
    raise _not_found()


def require_own_team(viewer: Viewer, team_id: uuid.UUID) -> Team:
    """A team named in a request body as the caller's own (a trackable's `teamId`): one of
    the caller's active teams. A team the caller can see (a public page, or a record of
    their own with it) but is no active member of is 403: seen, not theirs to act for; one
    they cannot see is 404 (decisions: hide, don't forbid)."""
    if viewer.is_member_of(team_id):
        team = team_for(team_id)
        if team is not None:
            return team
    team, _own = get_visible_team(viewer, team_id)
    raise Forbidden(
        "Only the team's active members may act for it.", code=Code.TEAM_MEMBERSHIP_REQUIRED
    )


def require_admin(viewer: Viewer, team_id: uuid.UUID, *, exclusive: bool = False) -> Team:
    """Admin-only actions: 403 for a member who is not an admin; outside the team, as
    `require_member`."""
    team = require_member(viewer, team_id, exclusive=exclusive)
    if not viewer.is_admin_of(team_id):
        raise Forbidden("Only a team admin may do this.", code=Code.TEAM_ADMIN_REQUIRED)
    return team


def can_view_page(viewer: Viewer, team: Team) -> bool:
    """The public team page and its notes (pageVisibility): everyone, or members only."""
    return team.page_visibility == PageVisibility.PUBLIC or viewer.is_member_of(team.id)


def get_public_team(viewer: Viewer, team_name: str) -> Team:
    """The team a public route names (its name in any case, or its slug), or 404."""
    team = db.session.scalar(select(Team).where(Team.slug == team_slug(team_name)))
    if team is None or not can_view_page(viewer, team):
        raise _not_found()
    return team


# --- memberships -------------------------------------------------------------------------

MembershipOperation = Literal["accept", "refuse", "approve", "deny", "promote-admin", "delete"]
Actor = Literal["self", "admin"]

# Who may apply each operation to an existing record (the state machine in
# services.memberships says from which states).
ACTORS: dict[MembershipOperation, frozenset[Actor]] = {
    "accept": frozenset({"self"}),  # the invited user answers their invitation
    "refuse": frozenset({"self"}),
    "approve": frozenset({"admin"}),  # an admin answers a request
    "deny": frozenset({"admin"}),
    "promote-admin": frozenset({"admin"}),
    "delete": frozenset({"self", "admin"}),  # leave (or withdraw), or remove someone
}


# A membership record is visible to its own user, to the team's admins, and, when it is an active
# membership, to the team's members; which operation who may do is ACTORS.
def can_see_membership(viewer: Viewer, membership: TeamMembership) -> bool:
    if viewer.user_id is not None and membership.user_id == viewer.user_id:
        return True
    if viewer.is_admin_of(membership.team_id):
        return True
    return viewer.is_member_of(membership.team_id) and membership.is_active


def get_visible_membership(
    viewer: Viewer, team_id: uuid.UUID, membership_id: uuid.UUID
) -> TeamMembership:
    """A record of this team the caller may see, or 404."""
    membership = db.session.get(TeamMembership, membership_id)
    if membership is None or membership.team_id != team_id:
        raise NotFound("Membership not found.", code=Code.MEMBERSHIP_NOT_FOUND)
    if not can_see_membership(viewer, membership):
        raise NotFound("Membership not found.", code=Code.MEMBERSHIP_NOT_FOUND)
    return membership


def can_act_on_membership(
    viewer: Viewer, membership: TeamMembership, operation: MembershipOperation
) -> bool:
    allowed = ACTORS[operation]
    if "self" in allowed and viewer.user_id == membership.user_id:
        return True
    return "admin" in allowed and viewer.is_admin_of(membership.team_id)


def require_membership_action(
    viewer: Viewer, team_id: uuid.UUID, membership_id: uuid.UUID, operation: MembershipOperation
) -> TeamMembership:
    """The record, when the caller may apply `operation` to it: 404 when they cannot see it,
    403 when they see it but the operation is someone else's."""
    membership = get_visible_membership(viewer, team_id, membership_id)
    if not can_act_on_membership(viewer, membership, operation):
        invitee_only = ACTORS[operation] == {"self"}
        who = "the invited user" if invitee_only else "a team admin"
        raise Forbidden(
            f"Only {who} may {operation.replace('-', ' ')} this membership.",
            code=Code.MEMBERSHIP_ACTION_FORBIDDEN if invitee_only else Code.TEAM_ADMIN_REQUIRED,
        )
    return membership


def visible_memberships_filter(viewer: Viewer, team_id: uuid.UUID) -> Any:
    """The records of the team a member lists: all for admins, active ones for members."""
    if viewer.is_admin_of(team_id):
        return TeamMembership.team_id == team_id
    return (TeamMembership.team_id == team_id) & (TeamMembership.status == MembershipStatus.MEMBER)
