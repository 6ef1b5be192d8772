"""Team membership rules in the services, without HTTP: the state machine of
services.teams.memberships as tables (from-state x operation x join policy -> next state;
every operation the table leaves out is refused with 409 and writes nothing), who may act
(policies.teams.ACTORS), records that end, repeated answers, the last admin, and the list.

The actions go through the service functions the routes call, as the routes call them,
with viewers built the way requests build them (at the moment of the action); a successful
action is committed, as its route commits it. A refusal is checked on the session itself,
before any rollback: the state machine refuses before it writes anything.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from app.auth import build_viewer
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.extensions import db
from app.models.team import (
    JoinPolicy,
    MembershipStatus,
    PageVisibility,
    Team,
    TeamInviteLink,
    TeamMembership,
)
from app.models.user import User
from app.policies import teams as team_policy
from app.services import teams
from app.services.teams import memberships
from tests.factories import make_invite_link, make_membership, make_team, make_user

OPEN, REQUESTS, INVITE_ONLY = (
    JoinPolicy.OPEN,
    JoinPolicy.REQUESTS_ALLOWED,
    JoinPolicy.INVITE_ONLY,
)
POLICIES = (OPEN, REQUESTS, INVITE_ONLY)
OPERATIONS = ("request", "join", "invite", "accept", "refuse", "approve", "deny", "promote-admin")

# The states of one user's record with a team: "none" is no record, "Admin" a Member with
# isAdmin; "Refused" and "Denied" are only reported (the record ends).
STATES = ("none", "Invited", "Requesting", "Member", "Admin")
STATUS = {
    "Invited": MembershipStatus.INVITED,
    "Requesting": MembershipStatus.REQUESTING,
    "Member": MembershipStatus.MEMBER,
    "Admin": MembershipStatus.MEMBER,
    "Refused": MembershipStatus.REFUSED,
    "Denied": MembershipStatus.DENIED,
}
ENDED = {"Refused", "Denied"}

# The module docstring's table: (from, operation, join policy) -> to. A row without a
# policy holds under every policy. (InviteOnly refuses a request with 403, tested below.)
TRANSITION_TABLE: list[tuple[str, str, tuple[JoinPolicy, ...], str]] = [
    ("none", "request", (OPEN,), "Member"),
    ("none", "request", (REQUESTS,), "Requesting"),
    ("none", "join", (REQUESTS,), "Requesting"),
    ("none", "join", (OPEN, INVITE_ONLY), "Member"),
    ("none", "invite", POLICIES, "Invited"),
    ("Invited", "accept", POLICIES, "Member"),
    ("Invited", "request", POLICIES, "Member"),
    ("Invited", "join", POLICIES, "Member"),
    ("Invited", "refuse", POLICIES, "Refused"),
    ("Requesting", "approve", POLICIES, "Member"),
    ("Requesting", "invite", POLICIES, "Member"),
    ("Requesting", "deny", POLICIES, "Denied"),
    ("Requesting", "join", POLICIES, "Requesting"),
    ("Member", "promote-admin", POLICIES, "Admin"),
    ("Member", "join", POLICIES, "Member"),
    ("Admin", "join", POLICIES, "Admin"),  # an admin is a member: join changes nothing
]
ALLOWED = {(start, operation) for start, operation, _, _ in TRANSITION_TABLE}
TRANSITIONS = [
    pytest.param(start, operation, policy, to, id=f"{start}-{operation}-{policy.value}")
    for start, operation, policies, to in TRANSITION_TABLE
    for policy in policies
]
# Once a record exists the join policy plays no part: the refusals of the states with a
# record are checked under the default policy, those of "none" under every policy.
REFUSALS = [
    pytest.param(start, operation, policy, id=f"{start}-{operation}-{policy.value}")
    for start in STATES
    for operation in OPERATIONS
    if (start, operation) not in ALLOWED
    for policy in (POLICIES if start == "none" else (REQUESTS,))
]


@dataclass
class World:
    """A team (its admin, a bystander member, an invite link) and the subject user whose
    record is in `start`. Ids are kept as plain values: commits expire the objects."""

    team_id: uuid.UUID
    team_slug: str
    admin: User
    member: User
    subject: User
    subject_id: uuid.UUID
    subject_name: str
    record_id: uuid.UUID | None
    link_code: str


def _world(start: str, policy: JoinPolicy = REQUESTS, **team_fields: Any) -> World:
    admin, member, subject = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,), join_policy=policy, **team_fields)
    link = make_invite_link(team, admin)
    record = None
    if start != "none":
        record = make_membership(team, subject, status=STATUS[start], is_admin=start == "Admin")
    return World(
        team_id=team.id,
        team_slug=team.slug,
        admin=admin,
        member=member,
        subject=subject,
        subject_id=subject.id,
        subject_name=subject.user_name,
        record_id=record.id if record is not None else None,
        link_code=link.code,
    )


def _act(world: World, operation: str) -> MembershipStatus:
    """Apply `operation` to the subject's record as its actor would, through the service
    its route calls; returns the status the service reports."""
    subject, admin = build_viewer(world.subject), build_viewer(world.admin)
    if operation == "request":
        return teams.request_membership(subject, world.team_id).status
    if operation == "join":
        return teams.join(subject, world.team_slug, world.link_code).membership_status
    if operation == "invite":
        return teams.invite(admin, world.team_id, world.subject_name).status
    if world.record_id is None:  # no record for a route to name: the state machine itself
        team = db.session.get(Team, world.team_id)
        return memberships.apply(team, None, world.subject_id, operation).status  # type: ignore[arg-type]
    actor = subject if operation in {"accept", "refuse"} else admin
    return teams.answer(actor, world.team_id, world.record_id, operation).status  # type: ignore[arg-type]


def _record(world: World) -> TeamMembership | None:
    return db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == world.team_id,
            TeamMembership.user_id == world.subject_id,
        )
    )


def _state(world: World) -> str:
    """The subject's state, as the tables name it."""
    record = _record(world)
    if record is None:
        return "none"
    if record.status == MembershipStatus.MEMBER and record.is_admin:
        return "Admin"
    return {status: name for name, status in STATUS.items() if name != "Admin"}[record.status]


def _snapshot(team_id: uuid.UUID) -> tuple[Any, ...]:
    """Everything a membership operation may write for a team (queried through the
    session, so pending and flushed changes show too)."""
    records = db.session.execute(
        select(
            TeamMembership.id,
            TeamMembership.user_id,
            TeamMembership.status,
            TeamMembership.is_admin,
            TeamMembership.updated_utc,
        )
        .where(TeamMembership.team_id == team_id)
        .order_by(TeamMembership.user_id)
    ).all()
    links = db.session.execute(
        select(TeamInviteLink.id, TeamInviteLink.used_utc).where(TeamInviteLink.team_id == team_id)
    ).all()
    activity = db.session.scalar(select(Team.last_activity_utc).where(Team.id == team_id))
    return [tuple(row) for row in records], [tuple(row) for row in links], activity


# --- the transition table ----------------------------------------------------------------


def test_the_transition_table_covers_the_state_machines_own_tables():
    names = {None: "none", **{status: name for name, status in STATUS.items() if name != "Admin"}}
    coded = {(names[status], operation) for operation, status in memberships.TRANSITIONS}
    coded |= {("none", operation) for operation, _ in memberships.SELF_START}
    assert {(start, op) for start, op in ALLOWED if start != "Admin"} == coded
    assert {MembershipStatus.DENIED, MembershipStatus.REFUSED} == memberships.ENDING


@pytest.mark.parametrize(("start", "operation", "policy", "to"), TRANSITIONS)
def test_an_allowed_operation_moves_the_record_to_the_next_state(app, start, operation, policy, to):
    world = _world(start, policy)
    reported = _act(world, operation)
    db.session.commit()
    assert reported == STATUS[to]
    assert _state(world) == ("none" if to in ENDED else to)
    if start != "none" and to not in ENDED:
        assert _record(world).id == world.record_id  # the same record moved on


@pytest.mark.parametrize(("start", "operation", "policy"), REFUSALS)
def test_an_operation_the_table_leaves_out_is_409_and_writes_nothing(app, start, operation, policy):
    world = _world(start, policy)
    before = _snapshot(world.team_id)
    with pytest.raises(Conflict) as refused:
        _act(world, operation)
    assert refused.value.status == 409
    assert _snapshot(world.team_id) == before
    assert _state(world) == start


# --- the join policy ---------------------------------------------------------------------


def test_a_request_to_an_invite_only_team_is_403_and_records_nothing(app):
    world = _world("none", INVITE_ONLY)
    before = _snapshot(world.team_id)
    with pytest.raises(Forbidden):
        _act(world, "request")
    assert _snapshot(world.team_id) == before
    assert _state(world) == "none"


def test_a_request_to_a_members_only_team_by_a_user_without_a_record_is_404(app):
    world = _world("none", OPEN, page_visibility=PageVisibility.MEMBERS_ONLY)
    with pytest.raises(NotFound):
        _act(world, "request")
    assert _state(world) == "none"


def test_an_invitation_to_a_members_only_team_can_be_answered_with_a_request(app):
    world = _world("Invited", INVITE_ONLY, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert _act(world, "request") == MembershipStatus.MEMBER
    assert _state(world) == "Member"


def test_invite_of_an_unknown_user_name_is_400_on_user_name(app):
    world = _world("none")
    with pytest.raises(ValidationFailed) as refused:
        teams.invite(build_viewer(world.admin), world.team_id, "nobody-has-this-name")
    assert set(refused.value.extra["errors"]) == {"userName"}
    assert len(_snapshot(world.team_id)[0]) == 2  # the admin and the member only


def test_invite_finds_the_user_name_in_any_case_and_with_spaces(app):
    world = _world("none")
    teams.invite(build_viewer(world.admin), world.team_id, f"  {world.subject_name.upper()} ")
    assert _state(world) == "Invited"


# --- who may act -------------------------------------------------------------------------

OK, FORBIDDEN, HIDDEN = "ok", 403, 404
ACTORS = ("self", "admin", "member", "stranger")
# operation -> (the state it is allowed from, the state it leads to, the outcome for the
# record's own user, an admin, another member, a stranger)
ACTOR_TABLE = {
    "accept": ("Invited", "Member", (OK, FORBIDDEN, HIDDEN, HIDDEN)),
    "refuse": ("Invited", "none", (OK, FORBIDDEN, HIDDEN, HIDDEN)),
    "approve": ("Requesting", "Member", (FORBIDDEN, OK, HIDDEN, HIDDEN)),
    "deny": ("Requesting", "none", (FORBIDDEN, OK, HIDDEN, HIDDEN)),
    "promote-admin": ("Member", "Admin", (FORBIDDEN, OK, FORBIDDEN, HIDDEN)),
    "delete": ("Member", "none", (OK, OK, FORBIDDEN, HIDDEN)),
}
ACTOR_CASES = [
    pytest.param(operation, actor, outcomes[index], id=f"{operation}-by-{actor}")
    for operation, (_, _, outcomes) in ACTOR_TABLE.items()
    for index, actor in enumerate(ACTORS)
]


def _actor(world: World, actor: str) -> User:
    users = {"self": world.subject, "admin": world.admin, "member": world.member}
    return users[actor] if actor in users else make_user()


def test_the_actor_table_covers_every_membership_operation():
    assert set(ACTOR_TABLE) == set(team_policy.ACTORS)


@pytest.mark.parametrize(("operation", "actor", "outcome"), ACTOR_CASES)
def test_who_may_apply_a_membership_operation(app, operation, actor, outcome):
    start, to, _ = ACTOR_TABLE[operation]
    world = _world(start)
    viewer = build_viewer(_actor(world, actor))
    before = _snapshot(world.team_id)

    def run() -> None:
        if operation == "delete":
            teams.remove(viewer, world.team_id, world.record_id)
        else:
            teams.answer(viewer, world.team_id, world.record_id, operation)

    if outcome == OK:
        run()
        db.session.commit()
        assert _state(world) == to
        return
    with pytest.raises(Forbidden if outcome == FORBIDDEN else NotFound):
        run()
    assert _snapshot(world.team_id) == before


def test_an_answer_under_another_teams_path_is_404(app):
    world = _world("Invited")
    other = make_team(world.subject)  # the subject is this one's admin
    with pytest.raises(NotFound):
        teams.answer(build_viewer(world.subject), other.id, world.record_id, "accept")
    assert _state(world) == "Invited"


# --- records that end --------------------------------------------------------------------

ENDINGS = [
    # (state, the ending operation, what it reports, what starts a record again, its state)
    ("Requesting", "deny", "Denied", "request", "Requesting"),
    ("Requesting", "deny", "Denied", "invite", "Invited"),
    ("Invited", "refuse", "Refused", "invite", "Invited"),
    ("Invited", "refuse", "Refused", "request", "Requesting"),
]


@pytest.mark.parametrize(("start", "operation", "reported", "again", "restarted"), ENDINGS)
def test_deny_and_refuse_end_the_record_so_a_new_one_can_start(
    app, start, operation, reported, again, restarted
):
    world = _world(start, REQUESTS)
    assert _act(world, operation) == STATUS[reported]
    db.session.commit()
    assert _state(world) == "none"
    assert db.session.get(TeamMembership, world.record_id) is None

    ended, world.record_id = world.record_id, None
    assert _act(world, again) == STATUS[restarted]
    db.session.commit()
    assert _state(world) == restarted
    assert _record(world).id != ended


# --- the same operation twice ------------------------------------------------------------

REPEATS = [
    # (state, operation, what the second one meets): the first one is allowed
    pytest.param("Invited", "accept", Conflict, id="accept-twice-409"),
    pytest.param("Requesting", "approve", Conflict, id="approve-twice-409"),
    pytest.param("Member", "promote-admin", Conflict, id="promote-twice-409"),
    pytest.param("none", "request", Conflict, id="request-twice-409"),
    pytest.param("none", "invite", Conflict, id="invite-twice-409"),
    pytest.param("Invited", "refuse", NotFound, id="refuse-twice-404-the-record-ended"),
    pytest.param("Requesting", "deny", NotFound, id="deny-twice-404-the-record-ended"),
    pytest.param("none", "join", None, id="join-twice-changes-nothing"),
    pytest.param("Invited", "join", None, id="join-after-joining-changes-nothing"),
]


@pytest.mark.parametrize(("start", "operation", "second"), REPEATS)
def test_the_same_operation_a_second_time(app, start, operation, second):
    world = _world(start, REQUESTS)
    first = _act(world, operation)
    db.session.commit()
    if world.record_id is None and _record(world) is not None:
        world.record_id = _record(world).id
    after_first, before = _state(world), _snapshot(world.team_id)
    if second is None:
        assert _act(world, operation) == first
    else:
        with pytest.raises(second):
            _act(world, operation)
    assert _snapshot(world.team_id) == before
    assert _state(world) == after_first


def test_a_join_that_changes_nothing_does_not_use_up_a_single_use_link(app):
    world = _world("Member")
    team = db.session.get(Team, world.team_id)
    link = make_invite_link(team, world.admin, is_single_use=True)
    result = teams.join(build_viewer(world.subject), world.team_slug, link.code)
    db.session.commit()
    assert result.membership_status == MembershipStatus.MEMBER
    assert db.session.get(TeamInviteLink, link.id).used_utc is None


# --- ending a record, and the last admin -------------------------------------------------


@pytest.mark.parametrize("start", ["Invited", "Requesting", "Member"])
@pytest.mark.parametrize("by", ["self", "admin"])
def test_delete_ends_the_record_from_any_state(app, start, by):
    world = _world(start)
    teams.remove(build_viewer(_actor(world, by)), world.team_id, world.record_id)
    db.session.commit()
    assert _state(world) == "none"
    assert len(_snapshot(world.team_id)[0]) == 2  # the admin and the member stay


def _admins(team_id: uuid.UUID) -> set[uuid.UUID]:
    return set(
        db.session.scalars(
            select(TeamMembership.user_id).where(
                TeamMembership.team_id == team_id,
                TeamMembership.status == MembershipStatus.MEMBER,
                TeamMembership.is_admin.is_(True),
            )
        )
    )


def _own_record_id(team_id: uuid.UUID, user: User) -> uuid.UUID:
    return db.session.scalar(
        select(TeamMembership.id).where(
            TeamMembership.team_id == team_id, TeamMembership.user_id == user.id
        )
    )


def test_the_last_admin_cannot_leave(app):
    world = _world("Member")  # a team with one admin and two members
    own = _own_record_id(world.team_id, world.admin)
    with pytest.raises(Conflict) as refused:
        teams.remove(build_viewer(world.admin), world.team_id, own)
    assert refused.value.status == 409
    db.session.rollback()  # as the failed request's teardown does: the delete was flushed
    assert _admins(world.team_id) == {world.admin.id}


def test_the_last_admin_cannot_be_removed_by_an_admin_who_left_meanwhile(app):
    first, second = make_user(), make_user()
    team = make_team(first)
    make_membership(team, second, is_admin=True)
    team_id = team.id
    # Both requests start while both are admins; the first one removes the second admin.
    first_viewer, second_viewer = build_viewer(first), build_viewer(second)
    assert first_viewer.team_roles == second_viewer.team_roles  # both have read their roles
    teams.remove(first_viewer, team_id, _own_record_id(team_id, second))
    db.session.commit()
    with pytest.raises(Conflict):
        teams.remove(second_viewer, team_id, _own_record_id(team_id, first))
    db.session.rollback()
    assert _admins(team_id) == {first.id}


def test_one_of_two_admins_may_leave(app):
    first, second = make_user(), make_user()
    team = make_team(first)
    make_membership(team, second, is_admin=True)
    team_id = team.id
    teams.remove(build_viewer(first), team_id, _own_record_id(team_id, first))
    db.session.commit()
    assert _admins(team_id) == {second.id}
    assert _own_record_id(team_id, first) is None


def test_an_admin_may_remove_another_admin_while_one_stays(app):
    first, second = make_user(), make_user()
    team = make_team(first)
    make_membership(team, second, is_admin=True)
    team_id = team.id
    teams.remove(build_viewer(first), team_id, _own_record_id(team_id, second))
    db.session.commit()
    assert _admins(team_id) == {first.id}


# --- the list ----------------------------------------------------------------------------


@pytest.fixture
def crowd(app):
    """A team of every kind of record, with names that sort differently from the order
    the records were made in."""
    carl, bob = make_user("carl"), make_user("bob")
    team = make_team(carl, members=(make_user("dora"), make_user("anna")))
    make_membership(team, bob, is_admin=True)
    make_membership(team, make_user("ed"), status=MembershipStatus.INVITED)
    make_membership(team, make_user("abe"), status=MembershipStatus.INVITED)
    make_membership(team, make_user("finn"), status=MembershipStatus.REQUESTING)
    make_membership(team, make_user("al"), status=MembershipStatus.REQUESTING)
    return team.id, {user.user_name: user for user in db.session.scalars(select(User))}


def test_admins_list_members_with_admins_leading_then_invitations_then_requests(crowd):
    team_id, users = crowd
    listed = teams.list_memberships(build_viewer(users["carl"]), team_id).items
    assert [record.user_name for record in listed] == [
        "bob",
        "carl",
        "anna",
        "dora",
        "abe",
        "ed",
        "al",
        "finn",
    ]
    assert [record.is_admin for record in listed[:3]] == [True, True, False]


def test_members_list_only_the_active_members(crowd):
    team_id, users = crowd
    listed = teams.list_memberships(build_viewer(users["anna"]), team_id).items
    assert [record.user_name for record in listed] == ["bob", "carl", "anna", "dora"]
    assert {record.status for record in listed} == {MembershipStatus.MEMBER}


@pytest.mark.parametrize("who", ["ed", "finn", "stranger"])
def test_the_list_is_403_to_anyone_but_an_active_member_of_a_public_team(crowd, who):
    team_id, users = crowd
    user = users.get(who) or make_user()
    with pytest.raises(Forbidden):
        teams.list_memberships(build_viewer(user), team_id)


@pytest.mark.parametrize("who", ["ed", "finn", "stranger"])
def test_the_list_of_a_members_only_team_is_404_to_anyone_but_an_active_member(crowd, who):
    team_id, users = crowd
    db.session.get(Team, team_id).page_visibility = PageVisibility.MEMBERS_ONLY
    db.session.commit()
    user = users.get(who) or make_user()
    with pytest.raises(NotFound):
        teams.list_memberships(build_viewer(user), team_id)
