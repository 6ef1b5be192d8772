"""Team permission tables: team note actions (policies.notes, TEAM_NOTE_RULES) and
membership operations (policies.teams, ACTORS), with viewers built the way requests build
them (the teams viewer part reads active memberships)."""

from __future__ import annotations

import pytest

from app.auth import TEAM_ADMIN, TEAM_MEMBER, build_viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.team import MembershipStatus
from app.policies import notes as note_policy
from app.policies import teams as team_policy
from tests.factories import make_membership, make_note, make_team, make_user

ROLES = ("author", "member", "admin", "former_author", "stranger")
OK, FORBIDDEN, HIDDEN = "ok", 403, 404

# action -> outcome per role (in ROLES order)
TEAM_NOTE_TABLE = {
    "list": (OK, OK, OK, HIDDEN, HIDDEN),
    "create": (OK, OK, OK, HIDDEN, HIDDEN),
    "export_gpx": (OK, OK, OK, HIDDEN, HIDDEN),
    "import_gpx": (OK, OK, OK, HIDDEN, HIDDEN),
    "edit": (OK, FORBIDDEN, OK, HIDDEN, HIDDEN),
    "remove_from_team": (OK, FORBIDDEN, OK, HIDDEN, HIDDEN),
    "delete": (OK, FORBIDDEN, OK, HIDDEN, HIDDEN),
}
NOTE_ACTIONS = {"edit", "remove_from_team", "delete"}
CASES = [
    pytest.param(action, role, outcomes[index], id=f"{action}-{role}")
    for action, outcomes in TEAM_NOTE_TABLE.items()
    for index, role in enumerate(ROLES)
]


@pytest.fixture
def world(app):
    admin, author, member, former, stranger = (make_user() for _ in range(5))
    team = make_team(admin, members=(author, member))
    note = make_note(author, team_id=team.id)
    old_note = make_note(former, team_id=team.id)  # written while a member, who then left
    users = {
        "author": author,
        "member": member,
        "admin": admin,
        "former_author": former,
        "stranger": stranger,
    }
    return team, note, old_note, {role: build_viewer(user) for role, user in users.items()}


def test_the_viewer_part_fills_team_roles_from_active_memberships(app):
    admin, member, invited = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,))
    make_membership(team, invited, status=MembershipStatus.INVITED)
    assert build_viewer(admin).team_roles == {team.id: TEAM_ADMIN}
    assert build_viewer(member).team_roles == {team.id: TEAM_MEMBER}
    assert build_viewer(invited).team_roles == {}
    assert build_viewer(None).team_roles == {}


def test_the_table_covers_every_team_note_action():
    assert set(TEAM_NOTE_TABLE) == set(note_policy.TEAM_NOTE_RULES)


@pytest.mark.parametrize(("action", "role", "outcome"), CASES)
def test_require_team_note_action(world, action, role, outcome):
    team, note, old_note, viewers = world
    target = (old_note if role == "former_author" else note) if action in NOTE_ACTIONS else None
    note_id = target.id if target is not None else None
    if outcome == OK:
        assert note_policy.require_team_note_action(viewers[role], team.id, action, note_id) == (
            target
        )
        return
    with pytest.raises(Forbidden if outcome == FORBIDDEN else NotFound):
        note_policy.require_team_note_action(viewers[role], team.id, action, note_id)


@pytest.mark.parametrize(("action", "role", "outcome"), CASES)
def test_can_act_on_team_notes(world, action, role, outcome):
    team, note, old_note, viewers = world
    target = (old_note if role == "former_author" else note) if action in NOTE_ACTIONS else None
    assert note_policy.can_act_on_team_notes(viewers[role], team.id, action, target) is (
        outcome == OK
    )


def test_a_note_of_another_team_is_404_under_this_team(world):
    team, _, _, viewers = world
    other = make_team(make_user())
    foreign = make_note(make_user(), team_id=other.id)
    with pytest.raises(NotFound):
        note_policy.require_team_note_action(viewers["admin"], team.id, "edit", foreign.id)


def test_a_deleted_team_note_is_404(world):
    team, note, _, viewers = world
    note.is_deleted = True
    db.session.commit()
    with pytest.raises(NotFound):
        note_policy.require_team_note_action(viewers["author"], team.id, "delete", note.id)


# --- memberships -------------------------------------------------------------------------

# operation -> may (the record's own user, an admin, another member) apply it?
MEMBERSHIP_TABLE = {
    "accept": (True, False, False),
    "refuse": (True, False, False),
    "approve": (False, True, False),
    "deny": (False, True, False),
    "promote-admin": (False, True, False),
    "delete": (True, True, False),
}


@pytest.mark.parametrize(("operation", "allowed"), list(MEMBERSHIP_TABLE.items()))
def test_membership_actors(app, operation, allowed):
    assert set(MEMBERSHIP_TABLE) == set(team_policy.ACTORS)
    admin, member, subject = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,))
    record = make_membership(team, subject)
    viewers = (build_viewer(subject), build_viewer(admin), build_viewer(member))
    actual = tuple(team_policy.can_act_on_membership(v, record, operation) for v in viewers)
    assert actual == allowed


@pytest.mark.parametrize(
    ("status", "seen_by_member"),
    [(MembershipStatus.MEMBER, True), (MembershipStatus.INVITED, False)],
)
def test_who_sees_a_membership(app, status, seen_by_member):
    admin, member, subject = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,))
    record = make_membership(team, subject, status=status)
    assert team_policy.can_see_membership(build_viewer(subject), record)
    assert team_policy.can_see_membership(build_viewer(admin), record)
    assert team_policy.can_see_membership(build_viewer(member), record) is seen_by_member
    assert not team_policy.can_see_membership(build_viewer(make_user()), record)
