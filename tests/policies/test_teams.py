"""Team permission tables: team note actions (the scope rule of policies.categories with
the note rule of policies.notes, driven through the services and through HTTP) and
membership operations (policies.teams, ACTORS), with viewers built the way requests build
them (the teams viewer part reads active memberships)."""

from __future__ import annotations

import io

import pytest

from app.auth import build_viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.category import OwnerScope
from app.models.enums import NoteVisibility
from app.models.team import MembershipStatus, PageVisibility, TeamRole
from app.policies import teams as team_policy
from tests.conftest import assert_problem
from tests.factories import make_membership, make_note, make_team, make_user, one_commit

ROLES = ("author", "member", "admin", "former_author", "stranger")
OK, FORBIDDEN, HIDDEN = "ok", 403, 404

# action -> outcome per role (in ROLES order), for a team whose page is public: outsiders
# see the team, so its workspace answers them 403 (a members-only team hides it: 404).
OUTSIDE = FORBIDDEN
TEAM_NOTE_TABLE = {
    "list": (OK, OK, OK, OUTSIDE, OUTSIDE),
    "create": (OK, OK, OK, OUTSIDE, OUTSIDE),
    "export_gpx": (OK, OK, OK, OUTSIDE, OUTSIDE),
    "import_gpx": (OK, OK, OK, OUTSIDE, OUTSIDE),
    "edit": (OK, FORBIDDEN, OK, OUTSIDE, OUTSIDE),
    "remove_from_team": (OK, FORBIDDEN, OK, OUTSIDE, OUTSIDE),
    "delete": (OK, FORBIDDEN, OK, OUTSIDE, OUTSIDE),
}
NOTE_ACTIONS = {"edit", "remove_from_team", "delete"}
CASES = [
    pytest.param(action, role, outcomes[index], id=f"{action}-{role}")
    for action, outcomes in TEAM_NOTE_TABLE.items()
    for index, role in enumerate(ROLES)
]


@pytest.fixture
def world(app):
    with one_commit():  # the world in one transaction
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
    assert build_viewer(admin).team_roles == {team.id: TeamRole.ADMIN}
    assert build_viewer(member).team_roles == {team.id: TeamRole.MEMBER}
    assert build_viewer(invited).team_roles == {}
    assert build_viewer(None).team_roles == {}


TEAM_NOTE_ROUTES = {
    # action -> (method, path under /api/teams/{teamId}/notes, needs the note)
    "list": ("GET", "", False),
    "create": ("POST", "", False),
    "export_gpx": ("GET", "/gpx", False),
    "import_gpx": ("POST", "/gpx", False),
    "edit": ("POST", "/{noteId}/move", True),
    "remove_from_team": ("DELETE", "/{noteId}", True),
    "delete": ("DELETE", "/{noteId}/delete", True),
}
GPX = (
    b'<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">'
    b'<wpt lat="52.5" lon="13.4"><name>Gate</name></wpt></gpx>'
)


def test_the_table_covers_every_team_note_route(app):
    spec = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    served = {
        (method.upper(), path.removeprefix("/api/teams/{teamId}/notes"))
        for path, operations in spec["paths"].items()
        if path.startswith("/api/teams/{teamId}/notes")
        for method in operations
        if method in {"get", "post", "put", "delete"}
    }
    assert set(TEAM_NOTE_TABLE) == set(TEAM_NOTE_ROUTES)
    assert served == {(method, path) for method, path, _ in TEAM_NOTE_ROUTES.values()}


def _act(viewer, team, note_id, action):
    """Do `action` on the team's notes through the services, as the routes do."""
    from app.services import notes, teams

    scope = OwnerScope.team(team.id)
    if action == "list":
        return notes.list_notes(viewer, scope)
    if action == "create":
        return notes.create_note(viewer, scope, title="New", default_language="en")
    if action == "export_gpx":
        return list(notes.export_waypoints(viewer, scope))
    if action == "import_gpx":
        return notes.import_waypoints(
            viewer,
            scope,
            io.BytesIO(GPX),
            visibility=NoteVisibility.PRIVATE,
            content_language=None,
            default_language="en",
            max_bytes=100_000,
            max_waypoints=10,
            max_elements=1000,
            max_parse_seconds=1.0,
        )
    if action == "edit":
        return notes.move_note(viewer, scope, note_id, {"title": "Edited"})
    if action == "remove_from_team":
        return teams.remove_note_from_team(viewer, team.id, note_id)
    return teams.delete_team_note(viewer, team.id, note_id)


@pytest.mark.parametrize(("action", "role", "outcome"), CASES)
def test_team_note_rule_in_the_services(world, action, role, outcome):
    team, note, old_note, viewers = world
    target = (old_note if role == "former_author" else note) if action in NOTE_ACTIONS else None
    note_id = target.id if target is not None else None
    if outcome == OK:
        _act(viewers[role], team, note_id, action)
        return
    with pytest.raises(Forbidden if outcome == FORBIDDEN else NotFound):
        _act(viewers[role], team, note_id, action)


@pytest.mark.parametrize(("action", "role", "outcome"), CASES)
def test_team_note_rule_through_http(world, api, action, role, outcome):
    team, note, old_note, viewers = world
    target = (old_note if role == "former_author" else note) if action in NOTE_ACTIONS else None
    method, path, _ = TEAM_NOTE_ROUTES[action]
    url = f"/api/teams/{team.id}/notes" + path.replace("{noteId}", str(target.id if target else ""))
    kwargs: dict = {}
    if action in {"create", "edit"}:
        kwargs["json"] = {"title": "New"}
    if action == "import_gpx":
        kwargs["data"] = {"file": (io.BytesIO(GPX), "w.gpx"), "visibility": "Private"}
    response = api.as_user(viewers[role].user).open(method, url, **kwargs)
    if outcome == OK:
        assert response.status_code < 300, response.get_data(as_text=True)
    else:
        assert_problem(response, outcome)


@pytest.mark.parametrize("role", ["former_author", "stranger"])
@pytest.mark.parametrize("action", list(TEAM_NOTE_TABLE))
def test_a_members_only_team_hides_its_workspace_from_outsiders(world, api, action, role):
    team, note, old_note, viewers = world
    team.page_visibility = PageVisibility.MEMBERS_ONLY
    db.session.commit()
    target = (old_note if role == "former_author" else note) if action in NOTE_ACTIONS else None
    with pytest.raises(NotFound):
        _act(viewers[role], team, target.id if target else None, action)
    method, path, _ = TEAM_NOTE_ROUTES[action]
    url = f"/api/teams/{team.id}/notes" + path.replace("{noteId}", str(target.id if target else ""))
    body: dict = {"json": {"title": "x"}}
    if action == "import_gpx":
        body = {"data": {"file": (io.BytesIO(GPX), "w.gpx"), "visibility": "Private"}}
    assert_problem(api.as_user(viewers[role].user).open(method, url, **body), 404)


def test_a_note_of_another_team_is_404_under_this_team(world):
    team, _, _, viewers = world
    other = make_team(make_user())
    foreign = make_note(make_user(), team_id=other.id)
    with pytest.raises(NotFound):
        _act(viewers["admin"], team, foreign.id, "edit")


def test_a_deleted_team_note_is_404(world):
    team, note, _, viewers = world
    note.is_deleted = True
    db.session.commit()
    with pytest.raises(NotFound):
        _act(viewers["author"], team, note.id, "delete")


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
