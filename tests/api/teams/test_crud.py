"""Teams: GET/POST /api/teams, PUT /api/teams/{teamId}/settings, DELETE /api/teams/{teamId}
(contract: Team, Teams; decisions: Teams), and the 401 of every team route."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.team import (
    MembershipStatus,
    PageVisibility,
    Team,
    TeamInviteLink,
    TeamMembership,
)
from app.models.trackable import Trackable
from tests.conftest import assert_problem
from tests.factories import count_rows as count
from tests.factories import (
    make_category,
    make_invite_link,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
)

TEAMS = "/api/teams"


@pytest.fixture
def alice(app):
    return make_user("alice")


def create(api, user, **body):
    body.setdefault("name", "Berlin Hikers")
    return api.as_user(user).post(TEAMS, json=body)


# --- every team route needs a bearer token -----------------------------------------------

SOME = "00000000-0000-4000-8000-000000000001"
TEAM_ROUTES = [
    ("GET", TEAMS),
    ("POST", TEAMS),
    ("PUT", f"{TEAMS}/{SOME}/settings"),
    ("DELETE", f"{TEAMS}/{SOME}"),
    ("GET", f"{TEAMS}/{SOME}/notes"),
    ("POST", f"{TEAMS}/{SOME}/notes"),
    ("POST", f"{TEAMS}/{SOME}/notes/{SOME}/move"),
    ("DELETE", f"{TEAMS}/{SOME}/notes/{SOME}"),
    ("DELETE", f"{TEAMS}/{SOME}/notes/{SOME}/delete"),
    ("GET", f"{TEAMS}/{SOME}/notes/gpx"),
    ("POST", f"{TEAMS}/{SOME}/notes/gpx"),
    ("GET", f"{TEAMS}/{SOME}/memberships"),
    ("POST", f"{TEAMS}/{SOME}/memberships/request"),
    ("POST", f"{TEAMS}/{SOME}/memberships/invite"),
    ("POST", f"{TEAMS}/{SOME}/memberships/{SOME}/accept"),
    ("POST", f"{TEAMS}/{SOME}/memberships/{SOME}/refuse"),
    ("POST", f"{TEAMS}/{SOME}/memberships/{SOME}/approve"),
    ("POST", f"{TEAMS}/{SOME}/memberships/{SOME}/deny"),
    ("POST", f"{TEAMS}/{SOME}/memberships/{SOME}/promote-admin"),
    ("DELETE", f"{TEAMS}/{SOME}/memberships/{SOME}"),
    ("GET", f"{TEAMS}/{SOME}/invite-links"),
    ("POST", f"{TEAMS}/{SOME}/invite-links"),
    ("DELETE", f"{TEAMS}/{SOME}/invite-links/{SOME}"),
    ("POST", f"{TEAMS}/invite-links/some-team/somecode/join"),
    ("GET", f"{TEAMS}/{SOME}/categories"),
    ("GET", f"{TEAMS}/{SOME}/categories/tree"),
    ("GET", f"{TEAMS}/{SOME}/categories/tree/sections"),
    ("GET", f"{TEAMS}/{SOME}/categories/tree/children"),
    ("POST", f"{TEAMS}/{SOME}/categories"),
    ("POST", f"{TEAMS}/{SOME}/categories/{SOME}/move"),
    ("DELETE", f"{TEAMS}/{SOME}/categories/{SOME}"),
]


@pytest.mark.parametrize(("method", "url"), TEAM_ROUTES)
def test_every_team_route_needs_a_bearer_token(api, method, url):
    response = api.open(method, url, json={})
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


# --- create ------------------------------------------------------------------------------


def test_create_is_201_with_the_record_and_makes_the_creator_admin(api, alice):
    response = create(api, alice, name="Berlin Night_Hikers")
    assert response.status_code == 201
    body = response.get_json()
    assert body["name"] == "Berlin Night_Hikers"
    assert body["teamSlug"] == "berlin-night-hikers"
    assert body["title"] == "Berlin Night_Hikers"  # the name when no title is given
    assert (body["joinPolicy"], body["pageVisibility"], body["defaultNoteVisibility"]) == (
        "RequestsAllowed",
        "Public",
        "Private",
    )
    assert body["contentLanguage"] == "en"
    assert (body["role"], body["membershipStatus"], body["memberCount"]) == ("Admin", "Member", 1)
    assert body["lastActivityUtc"].endswith("Z")
    assert body["externalLinkUrl"] is None
    membership = db.session.get(TeamMembership, uuid.UUID(body["membershipId"]))
    assert (membership.user_id, membership.is_admin, membership.status) == (
        alice.id,
        True,
        MembershipStatus.MEMBER,
    )


def test_create_takes_every_create_field(api, alice, links):
    response = create(
        api,
        alice,
        name="Paris Walkers",
        title="Walkers of Paris",
        description="We walk.",
        externalLinkUrl="HTTPS://Walkers.example",
        externalLinkDescription="",
        joinPolicy="Open",
        pageVisibility="MembersOnly",
        defaultNoteVisibility="Public",
        contentLanguage="fr-fr",
    )
    body = response.get_json()
    assert response.status_code == 201
    assert (body["title"], body["description"]) == ("Walkers of Paris", "We walk.")
    assert (body["externalLinkUrl"], body["externalLinkDescription"]) == (
        "https://walkers.example",
        "Page title",
    )
    assert links == [("HTTPS://Walkers.example", "")]
    assert (body["joinPolicy"], body["pageVisibility"], body["defaultNoteVisibility"]) == (
        "Open",
        "MembersOnly",
        "Public",
    )
    assert body["contentLanguage"] == "fr-FR"


def test_create_with_a_failing_link_is_400_and_stores_nothing(api, alice, links):
    assert_problem(create(api, alice, externalLinkUrl="https://bad.example"), 400)
    assert count(Team) == 0


@pytest.mark.parametrize(
    "name", ["ab", "x" * 51, "Hikers!", " Hikers", "Hikers-", "_hikers", "Bérlin"]
)
def test_create_refuses_names_outside_the_rules(api, alice, name):
    body = assert_problem(create(api, alice, name=name), 400)
    assert "name" in body["errors"]


def test_create_without_a_name_is_400(api, alice):
    body = assert_problem(api.as_user(alice).post(TEAMS, json={"title": "T"}), 400)
    assert "name" in body["errors"]


@pytest.mark.parametrize("name", ["berlin hikers", "Berlin-Hikers", "BERLIN__hikers"])
def test_create_refuses_a_name_taken_up_to_case_and_separators(api, alice, name):
    make_team(name="Berlin Hikers")
    body = assert_problem(create(api, alice, name=name), 400)
    assert body["errors"]["name"] == ["A team with this name already exists."]


def test_create_refuses_a_reserved_name(api, alice):
    body = assert_problem(create(api, alice, name="Support"), 400)
    assert "reserved" in body["errors"]["name"][0]


# --- list --------------------------------------------------------------------------------


def test_list_shows_the_callers_teams_with_role_and_status(api, alice):
    bob = make_user()
    mine = make_team(alice, name="Alpha", members=(bob,))
    member_of = make_team(bob, name="Bravo", members=(alice,))
    invited_to = make_team(bob, name="Charlie")
    make_membership(invited_to, alice, status=MembershipStatus.INVITED)
    requested = make_team(bob, name="Delta")
    make_membership(requested, alice, status=MembershipStatus.REQUESTING)
    make_team(bob, name="Echo")  # not alice's
    body = api.as_user(alice).get(TEAMS).get_json()
    rows = {row["name"]: (row["role"], row["membershipStatus"]) for row in body}
    assert rows == {
        "Alpha": ("Admin", "Member"),
        "Bravo": ("Member", "Member"),
        "Charlie": (None, "Invited"),
        "Delta": (None, "RequestingMembership"),
    }
    assert [row["name"] for row in body] == ["Alpha", "Bravo", "Charlie", "Delta"]
    by_name = {row["name"]: row for row in body}
    assert by_name["Alpha"]["memberCount"] == 2
    assert by_name["Alpha"]["teamId"] == str(mine.id)
    assert by_name["Bravo"]["teamId"] == str(member_of.id)


def test_team_last_activity_follows_its_notes(api, alice):
    team = make_team(alice)
    later = datetime.now(UTC) + timedelta(hours=1)
    make_note(alice, team_id=team.id, last_activity_utc=later)
    body = api.as_user(alice).get(TEAMS).get_json()
    assert body[0]["lastActivityUtc"] == later.isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )


# --- settings ----------------------------------------------------------------------------


def settings(api, user, team, **body):
    return api.as_user(user).put(f"{TEAMS}/{team.id}/settings", json=body)


def test_settings_apply_the_fields_present(api, alice):
    team = make_team(alice, name="Hikers", description="Old")
    response = settings(
        api,
        alice,
        team,
        title="New title",
        joinPolicy="InviteOnly",
        pageVisibility="MembersOnly",
        defaultNoteVisibility="Public",
        contentLanguage="de-de",
    )
    assert response.status_code == 200
    body = response.get_json()
    assert body["title"] == "New title"
    assert body["description"] == "Old"  # absent, kept
    assert (body["joinPolicy"], body["pageVisibility"], body["defaultNoteVisibility"]) == (
        "InviteOnly",
        "MembersOnly",
        "Public",
    )
    assert body["contentLanguage"] == "de-DE"
    assert body["role"] == "Admin"


def test_settings_revalidate_the_link_only_when_the_url_is_sent(api, alice, links):
    team = make_team(alice, external_link_url="https://a.example", external_link_description="A")
    settings(api, alice, team, description="no link change")
    assert links == []
    body = settings(api, alice, team, externalLinkUrl="https://B.example").get_json()
    assert links == [("https://B.example", None)]
    assert body["externalLinkUrl"] == "https://b.example"


def test_settings_with_a_failing_link_is_400_and_change_nothing(api, alice, links):
    team = make_team(alice, title="Kept")
    response = settings(api, alice, team, title="Changed", externalLinkUrl="https://bad.example")
    assert_problem(response, 400)
    db.session.expire_all()
    assert db.session.get(Team, team.id).title == "Kept"


def test_settings_refuse_a_new_name_but_accept_the_current_one(api, alice):
    team = make_team(alice, name="Hikers")
    assert settings(api, alice, team, name="Hikers").status_code == 200
    body = assert_problem(settings(api, alice, team, name="Walkers"), 400)
    assert "name" in body["errors"]


def test_settings_by_a_member_is_403(api, alice):
    bob = make_user()
    team = make_team(alice, members=(bob,))
    assert_problem(settings(api, bob, team, title="x"), 403)


def test_settings_by_a_stranger_is_403_for_a_public_team_and_404_for_a_members_only_one(api, alice):
    team = make_team(alice)
    assert_problem(settings(api, make_user(), team, title="x"), 403)
    hidden = make_team(alice, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(settings(api, make_user(), hidden, title="x"), 404)


def test_settings_of_an_unknown_team_is_404(api, alice):
    assert_problem(api.as_user(alice).put(f"{TEAMS}/{uuid.uuid4()}/settings", json={}), 404)


# --- delete ------------------------------------------------------------------------------


def test_delete_by_an_admin_is_204_and_ends_the_team(api, alice):
    bob = make_user()
    team = make_team(alice, members=(bob,))
    make_invite_link(team, alice)
    assert api.as_user(alice).delete(f"{TEAMS}/{team.id}").status_code == 204
    assert count(Team) == 0
    assert count(TeamMembership) == 0
    assert count(TeamInviteLink) == 0
    assert api.as_user(bob).get(TEAMS).get_json() == []
    assert_problem(api.as_user(alice).get(f"{TEAMS}/{team.id}/notes"), 404)


def test_delete_returns_every_team_note_to_its_author_as_a_private_personal_note(api, alice):
    bob = make_user()
    team = make_team(alice, members=(bob,))
    folder = make_category(team_id=team.id, content_language="de")
    public = make_note(bob, team_id=team.id, category=folder, visibility=NoteVisibility.PUBLIC)
    private = make_note(alice, team_id=team.id, category=folder)
    gone = make_note(bob, team_id=team.id, category=folder, is_deleted=True)
    assert api.as_user(alice).delete(f"{TEAMS}/{team.id}").status_code == 204
    listed = api.as_user(bob).get("/api/notes/mine").get_json()
    assert [note["noteId"] for note in listed] == [str(public.id)]
    record = listed[0]
    assert (record["teamId"], record["visibility"]) == (None, "Private")
    category = db.session.get(Category, uuid.UUID(record["categoryId"]))
    assert (category.owner_user_id, category.name, category.content_language) == (
        bob.id,
        "Notes",
        "de",
    )
    assert [n["noteId"] for n in api.as_user(alice).get("/api/notes/mine").get_json()] == [
        str(private.id)
    ]
    # Anonymous discovery no longer lists the formerly public note; the tombstone stays one.
    db.session.expire_all()
    assert not db.session.get(Note, public.id).is_publicly_discoverable
    stored_gone = db.session.get(Note, gone.id)
    assert (stored_gone.is_deleted, stored_gone.team_id) == (True, None)


def test_delete_deletes_the_team_categories(api, alice):
    team = make_team(alice)
    root = make_category(team_id=team.id)
    make_category(team_id=team.id, parent=root)
    make_category(team_id=team.id, is_deleted=True)
    personal = make_category(alice)
    assert api.as_user(alice).delete(f"{TEAMS}/{team.id}").status_code == 204
    assert set(db.session.scalars(select(Category.id))) == {personal.id}


def test_delete_leaves_team_trackables_with_their_activators(api, alice):
    team = make_team(alice)
    trackable = make_trackable(alice, team_id=team.id)
    assert api.as_user(alice).delete(f"{TEAMS}/{team.id}").status_code == 204
    db.session.expire_all()
    stored = db.session.get(Trackable, trackable.id)
    assert (stored.owner_user_id, stored.team_id) == (alice.id, None)


def test_delete_by_a_member_is_403_and_keeps_the_team(api, alice):
    bob = make_user()
    team = make_team(alice, members=(bob,))
    assert_problem(api.as_user(bob).delete(f"{TEAMS}/{team.id}"), 403)
    assert count(Team) == 1


def test_delete_by_a_stranger_is_403_for_a_public_team_and_404_for_a_members_only_one(api, alice):
    team = make_team(alice)
    hidden = make_team(alice, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(api.as_user(make_user()).delete(f"{TEAMS}/{team.id}"), 403)
    assert_problem(api.as_user(make_user()).delete(f"{TEAMS}/{hidden.id}"), 404)
    assert count(Team) == 2


# --- admin-only routes: 403 for members; strangers: 403 or 404 by the team's page ---------

ADMIN_ONLY = [
    ("PUT", "/settings", {"title": "x"}),
    ("DELETE", "", None),
    ("POST", "/memberships/invite", {"userName": "carol"}),
    ("POST", "/memberships/{other}/approve", None),
    ("POST", "/memberships/{other}/deny", None),
    ("POST", "/memberships/{other}/promote-admin", None),
    ("DELETE", "/memberships/{other}", None),
    ("GET", "/invite-links", None),
    ("POST", "/invite-links", {}),
    ("DELETE", "/invite-links/{link}", None),
]


@pytest.mark.parametrize(("method", "suffix", "body"), ADMIN_ONLY)
@pytest.mark.parametrize("caller", ["member", "stranger", "stranger of a members-only team"])
def test_admin_only_routes_refuse_members_and_strangers_and_hide_members_only_teams(
    api, alice, method, suffix, body, caller
):
    member, other = make_user(), make_user()
    make_user("carol")
    page = PageVisibility.MEMBERS_ONLY if "members-only" in caller else PageVisibility.PUBLIC
    team = make_team(alice, members=(member, other), page_visibility=page)
    # A stranger sees a public team (403) but not the records of its members (404).
    public_team_route = page == PageVisibility.PUBLIC and "{other}" not in suffix
    status = 403 if caller == "member" or public_team_route else 404
    other_record = db.session.scalar(
        select(TeamMembership).where(TeamMembership.user_id == other.id)
    )
    link = make_invite_link(team, alice)
    path = f"{TEAMS}/{team.id}" + suffix.format(other=other_record.id, link=link.id)
    user = member if caller == "member" else make_user()
    assert_problem(api.as_user(user).open(method, path, json=body), status)
    db.session.expire_all()
    assert db.session.get(Team, team.id) is not None
    assert count(TeamMembership, TeamMembership.team_id == team.id) == 3
    assert not db.session.get(TeamMembership, other_record.id).is_admin
    assert count(TeamInviteLink) == 1
