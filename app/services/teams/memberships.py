"""Team memberships: a small explicit state machine (contract: Team membership; decisions:
Teams). A user has at most one record per team; no record is the state "none".

The transitions are `TRANSITIONS` (from a record) and `SELF_START` (a user starting one, by
the team's join policy); who may act is policies.teams.ACTORS. Denied and Refused end the
record; `delete` by the user or an admin returns to none. Anything else is refused with 409
and changes nothing. The last admin cannot leave or be removed (409): a team always keeps
at least one admin.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import case, delete, exc, func, select, update

from app.auth import Viewer
from app.error_codes import Code
from app.errors import Conflict, Forbidden, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.note import Note
from app.models.team import JoinPolicy, MembershipStatus, Team, TeamInviteLink, TeamMembership
from app.models.user import User
from app.platform.database import get_for_write, lock_for_write, lock_rows
from app.policies import teams as team_policy
from app.services import events
from app.services.shared import sync_log
from app.services.shared.account_deletion import DeletionCounts
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.teams import teams

Operation = Literal[
    "request", "join", "invite", "accept", "refuse", "approve", "deny", "promote-admin"
]
REQUESTING = MembershipStatus.REQUESTING
INVITED = MembershipStatus.INVITED
MEMBER = MembershipStatus.MEMBER

# (operation, current status) -> next status. `None`: no record yet.
TRANSITIONS: dict[tuple[Operation, MembershipStatus | None], MembershipStatus] = {
    ("invite", None): INVITED,
    ("accept", INVITED): MEMBER,
    ("request", INVITED): MEMBER,  # both sides want it
    ("join", INVITED): MEMBER,
    ("refuse", INVITED): MembershipStatus.REFUSED,
    ("approve", REQUESTING): MEMBER,
    ("invite", REQUESTING): MEMBER,  # both sides want it
    ("deny", REQUESTING): MembershipStatus.DENIED,
    ("join", REQUESTING): REQUESTING,
    ("join", MEMBER): MEMBER,
    ("promote-admin", MEMBER): MEMBER,
}
# A user starting a membership on their own: the team's join policy decides (None: refused).
SELF_START: dict[tuple[Operation, JoinPolicy], MembershipStatus | None] = {
    ("request", JoinPolicy.OPEN): MEMBER,
    ("request", JoinPolicy.REQUESTS_ALLOWED): REQUESTING,
    ("request", JoinPolicy.INVITE_ONLY): None,
    ("join", JoinPolicy.OPEN): MEMBER,
    ("join", JoinPolicy.REQUESTS_ALLOWED): REQUESTING,
    ("join", JoinPolicy.INVITE_ONLY): MEMBER,
}
ENDING = frozenset({MembershipStatus.DENIED, MembershipStatus.REFUSED})


@dataclass(frozen=True)
class MembershipRecord:
    """What membership operations return (a snapshot: deny and refuse end the record)."""

    membership_id: uuid.UUID
    team_id: uuid.UUID
    user_name: str
    status: MembershipStatus
    is_admin: bool
    created_utc: datetime
    updated_utc: datetime

    @classmethod
    def of(cls, membership: TeamMembership, **changes: object) -> MembershipRecord:
        values: dict[str, object] = {
            "membership_id": membership.id,
            "team_id": membership.team_id,
            "user_name": membership.user_name,
            "status": membership.status,
            "is_admin": membership.is_admin,
            "created_utc": membership.created_utc,
            "updated_utc": membership.updated_utc,
        }
        values.update(changes)
        return cls(**values)  # type: ignore[arg-type]


def next_status(
    operation: Operation, membership: TeamMembership | None, team: Team
) -> MembershipStatus:
    """The state `operation` leads to from the record's current one, or the refusal."""
    current = membership.status if membership is not None else None
    if current is None and (operation, team.join_policy) in SELF_START:
        started = SELF_START[(operation, team.join_policy)]
        if started is None:
            raise Forbidden(
                "This team takes no membership requests; it joins by invitation.",
                code=Code.TEAM_INVITE_ONLY,
            )
        return started
    following = TRANSITIONS.get((operation, current))
    if following is None or (operation == "promote-admin" and membership and membership.is_admin):
        raise Conflict(_refusal(operation, membership), code=Code.MEMBERSHIP_STATE_CONFLICT)
    return following


def _refusal(operation: Operation, membership: TeamMembership | None) -> str:
    if membership is None:
        return f"There is no membership to {operation}."
    if membership.is_active:
        state = "an admin" if membership.is_admin else "a member"
        return f"Cannot {operation.replace('-', ' ')}: the user is already {state}."
    return f"Cannot {operation.replace('-', ' ')} a membership that is {membership.status.value}."


def apply(
    team: Team,
    membership: TeamMembership | None,
    user_id: uuid.UUID,
    operation: Operation,
    *,
    actor_id: uuid.UUID | None = None,
) -> MembershipRecord:
    """Move the record along `operation` (checked by `next_status`) and report it; a
    request, a new member or a new admin is an event for the team's admins."""
    following = next_status(operation, membership, team)
    before = membership.status if membership is not None else None
    if (membership is not None and membership.is_active) != (following == MEMBER):
        sync_log.record_team_access(team.id, [user_id])  # the next pull sends or drops it
    now = utcnow()
    if membership is None:
        membership = TeamMembership(
            team_id=team.id, user_id=user_id, status=following, created_utc=now, updated_utc=now
        )
        try:
            with db.session.begin_nested():  # the same user starting twice at once
                db.session.add(membership)
        except exc.IntegrityError:
            raise Conflict(
                "The membership changed meanwhile; reload and try again.",
                code=Code.MEMBERSHIP_STATE_CONFLICT,
            ) from None
    elif following in ENDING:
        record = MembershipRecord.of(membership, status=following, updated_utc=now)
        db.session.delete(membership)
        teams.touch(team)
        db.session.flush()
        return record
    elif following != membership.status or operation == "promote-admin":
        membership.status = following
        membership.is_admin = membership.is_admin or operation == "promote-admin"
        membership.updated_utc = now
    else:
        return MembershipRecord.of(membership)  # nothing changes (a repeated join)
    teams.touch(team)
    db.session.flush()
    event_type = _event_of(operation, before, following)
    if event_type is not None:
        events.record_team(event_type, team, actor_id=actor_id, membership_id=membership.id)
    return MembershipRecord.of(membership)


def _event_of(
    operation: Operation, before: MembershipStatus | None, following: MembershipStatus
) -> events.EventType | None:
    """What the team's admins hear of a move (invitations are their own doing)."""
    if operation == "promote-admin":
        return events.EventType.MEMBER_ROLE_CHANGED
    if following == REQUESTING and before != REQUESTING:
        return events.EventType.MEMBERSHIP_REQUESTED
    if following == MEMBER and before != MEMBER:
        return events.EventType.MEMBER_JOINED
    return None


# --- the routes' operations --------------------------------------------------------------


def request_membership(viewer: Viewer, team_id: uuid.UUID) -> MembershipRecord:
    """The caller asks to join a team they can see."""
    team, own = team_policy.get_visible_team(viewer, team_id)
    return apply(team, own, viewer.account.id, "request", actor_id=viewer.account.id)


def invite(viewer: Viewer, team_id: uuid.UUID, user_name: str) -> MembershipRecord:
    """An admin invites a user by user name (400 on `userName` when there is none)."""
    team = team_policy.require_admin(viewer, team_id)
    user = db.session.scalar(select(User).where(User.user_name == user_name.strip().lower()))
    if user is None:
        raise ValidationFailed({"userName": ["No user has this user name."]})
    existing = db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == team_id, TeamMembership.user_id == user.id
        )
    )
    return apply(team, existing, user.id, "invite", actor_id=viewer.account.id)


def answer(
    viewer: Viewer,
    team_id: uuid.UUID,
    membership_id: uuid.UUID,
    operation: Literal["accept", "refuse", "approve", "deny", "promote-admin"],
) -> MembershipRecord:
    """accept, refuse (the invited user), approve, deny, promote-admin (an admin).

    Answers to one team's memberships take turns (the record's state decides the next
    one): of two identical answers sent at once, the second finds the first one's result
    and gets the answer a repeated request gets (409)."""
    lock_for_write(db.session, f"team-memberships:{team_id}")
    team_policy.team_for(team_id)  # a deletion of the team first, or after this answer
    membership = team_policy.require_membership_action(viewer, team_id, membership_id, operation)
    return apply(
        membership.team, membership, membership.user_id, operation, actor_id=viewer.account.id
    )


def _lock_team(team_id: uuid.UUID) -> Team | None:
    """Changes to a team's admins take turns (`lock_rows`: FOR UPDATE, the database's write
    lock on SQLite), and with the team's deletion. Take it before anything else of the
    team is read: a request that holds the team's shared lock (`team_for`) and then asks
    for this one would deadlock with its twin."""
    locked = lock_rows(db.session, select(Team).where(Team.id == team_id))
    return locked[0] if locked else None


def _admin_count(team_id: uuid.UUID) -> int:
    return (
        db.session.scalar(
            select(func.count())
            .select_from(TeamMembership)
            .where(
                TeamMembership.team_id == team_id,
                TeamMembership.status == MEMBER,
                TeamMembership.is_admin.is_(True),
            )
        )
        or 0
    )


def remove(viewer: Viewer, team_id: uuid.UUID, membership_id: uuid.UUID) -> None:
    """Leave (or withdraw a request, or refuse an invitation), or, as an admin, remove a
    member or withdraw an invitation. The team's last admin cannot go (409)."""
    team = _lock_team(team_id)
    membership = team_policy.require_membership_action(viewer, team_id, membership_id, "delete")
    was_admin = membership.is_active and membership.is_admin
    if membership.is_active and team is not None:
        left = membership.user_id == viewer.account.id
        events.record_team(
            events.EventType.MEMBER_LEFT if left else events.EventType.MEMBER_REMOVED,
            team,
            actor_id=viewer.account.id,
            membership_id=membership.id,
        )
    if membership.is_active:
        sync_log.record_team_access(team_id, [membership.user_id])
    db.session.delete(membership)
    db.session.flush()
    # Counted after the delete, inside the lock: two admins leaving at once cannot both go.
    if was_admin and _admin_count(team_id) == 0:
        raise Conflict(
            "A team keeps at least one admin: promote another member first, or delete the team.",
            code=Code.TEAM_LAST_ADMIN,
        )
    if team is not None:
        teams.touch(team)
    db.session.flush()


# Members first (admins leading), then invitations, then requests.
STATUS_ORDER = case(
    (TeamMembership.status == MEMBER, 0), (TeamMembership.status == INVITED, 1), else_=2
)


# The membership id settles ties (there are none today: one record per user and team).
LIST_ORDER = Order(STATUS_ORDER, TeamMembership.is_admin.desc(), User.user_name, TeamMembership.id)


def list_memberships(
    viewer: Viewer, team_id: uuid.UUID, *, page: Page | None = None
) -> Listing[MembershipRecord]:
    """Members see the team's members; admins also its requests and invitations. All of
    them, or one `page`."""
    team_policy.require_member(viewer, team_id)
    query = (
        select(TeamMembership)
        .join(User, User.id == TeamMembership.user_id)
        .where(team_policy.visible_memberships_filter(viewer, team_id))
    )
    found = read_list(query, LIST_ORDER, page=page, scalars=True)
    return found.with_items([MembershipRecord.of(membership) for membership in found.items])


# --- account deletion --------------------------------------------------------------------


def _first_member(team_id: uuid.UUID, user_id: uuid.UUID, *, admin: bool) -> TeamMembership | None:
    """The longest-standing other active member (admins only when `admin`)."""
    query = select(TeamMembership).where(
        TeamMembership.team_id == team_id,
        TeamMembership.user_id != user_id,
        TeamMembership.status == MEMBER,
    )
    if admin:
        query = query.where(TeamMembership.is_admin.is_(True))
    return db.session.scalar(query.order_by(TeamMembership.created_utc, TeamMembership.id).limit(1))


def end_account_memberships(user: User, counts: DeletionCounts) -> None:
    """Before the notes clean-up: the user's memberships end. A team whose only admin the
    user was passes to its longest-standing other member, or, with none, is deleted as an
    admin would delete it. The user's notes in teams that remain are team content and are
    handed to one of the team's admins (not counted as deleted). Invite links the user made
    go with the account."""
    own = list(db.session.scalars(select(TeamMembership).where(TeamMembership.user_id == user.id)))
    now = utcnow()
    for membership in own:
        if not (membership.is_active and membership.is_admin):
            continue
        if _first_member(membership.team_id, user.id, admin=True) is not None:
            continue
        successor = _first_member(membership.team_id, user.id, admin=False)
        if successor is None:
            # As the team's deletion by an admin: the writes into the team wait, or go first.
            team = get_for_write(db.session, Team, membership.team_id, exclusive=True)
            if team is not None:
                teams.dismantle(team)
        else:
            successor.is_admin, successor.updated_utc = True, now
    team_ids = db.session.scalars(
        select(Note.team_id)
        .where(Note.owner_user_id == user.id, Note.team_id.is_not(None))
        .distinct()
    )
    for team_id in list(team_ids):
        admin = _first_member(team_id, user.id, admin=True)  # type: ignore[arg-type]
        if admin is not None:
            db.session.execute(
                update(Note)
                .where(Note.owner_user_id == user.id, Note.team_id == team_id)
                .values(
                    owner_user_id=admin.user_id,
                    owner_user_name=admin.user_name,
                    updated_utc=now,
                )
            )
    db.session.execute(delete(TeamInviteLink).where(TeamInviteLink.created_by_user_id == user.id))
    db.session.execute(
        update(TeamInviteLink)
        .where(TeamInviteLink.used_by_user_id == user.id)
        .values(used_by_user_id=None)
    )
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == user.id))
    db.session.flush()
