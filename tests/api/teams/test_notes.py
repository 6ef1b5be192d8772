"""Team notes: list, create, move, remove from the team, permanent delete and GPX
(contract: Teams; Note). The notes are services.notes' with the team's scope; who may do
what is policies.notes' TEAM_NOTE_RULES (its table test is tests/policies)."""

from __future__ import annotations

import io
import uuid

import pytest

from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from app.models.team import PageVisibility
from tests.conftest import assert_problem
from tests.factories import make_category, make_note, make_team, make_user

TEAMS = "/api/teams"
PUBLIC = NoteVisibility.PUBLIC


@pytest.fixture
def author(app):
    return make_user("bob")


@pytest.fixture
def member(app):
    return make_user("cleo")


@pytest.fixture
def team(admin, author, member):
    return make_team(admin, name="Hikers", members=(author, member), content_language="de")


@pytest.fixture
def folder(team):
    return make_category(team_id=team.id, content_language="de")


@pytest.fixture
def note(team, author, folder):
    return make_note(author, team_id=team.id, category=folder, title="Hut")


def notes_url(team, suffix=""):
    return f"{TEAMS}/{team.id}/notes{suffix}"


# --- list --------------------------------------------------------------------------------


def test_members_list_every_team_note_whatever_its_visibility(api, team, author, member, folder):
    private = make_note(author, team_id=team.id, category=folder)
    public = make_note(author, team_id=team.id, category=folder, visibility=PUBLIC)
    make_note(author, team_id=team.id, category=folder, is_deleted=True)
    make_note(member)  # a personal note stays out
    make_note(member, team_id=make_team(member).id)  # another team's note stays out
    response = api.as_user(member).get(notes_url(team))
    assert response.status_code == 200
    body = response.get_json()
    assert {row["noteId"] for row in body} == {str(private.id), str(public.id)}
    assert all(row["teamId"] == str(team.id) for row in body)
    assert "lastActivityUtc" in body[0]


def test_list_filters_by_language_and_window(api, team, author, member):
    de = make_category(team_id=team.id, content_language="de")
    fr = make_category(team_id=team.id, content_language="fr")
    near = make_note(author, team_id=team.id, category=de, latitude=52.5, longitude=13.4)
    make_note(author, team_id=team.id, category=fr, latitude=52.5, longitude=13.4)
    make_note(author, team_id=team.id, category=de, latitude=48.8, longitude=2.3)
    query = "?contentLanguage=de&minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    body = api.as_user(member).get(notes_url(team, query)).get_json()
    assert [row["noteId"] for row in body] == [str(near.id)]


def test_list_by_a_stranger_is_403_the_team_is_visible_the_workspace_is_not(
    api, team, author, folder
):
    make_note(author, team_id=team.id, category=folder, visibility=PUBLIC)
    assert_problem(api.as_user(make_user()).get(notes_url(team)), 403)


def test_list_of_an_unknown_team_is_404(api, admin):
    assert_problem(api.as_user(admin).get(f"{TEAMS}/{uuid.uuid4()}/notes"), 404)


# --- create ------------------------------------------------------------------------------


def test_a_member_creates_a_team_note(api, team, member, folder):
    response = api.as_user(member).post(
        notes_url(team),
        json={
            "title": "Spring",
            "categoryId": str(folder.id),
            "commentPolicy": "TeamMembers",
            "visibility": "Public",
            "latitude": 47.1,
            "longitude": 11.2,
        },
    )
    assert response.status_code == 201
    body = response.get_json()
    assert body["teamId"] == str(team.id)
    assert body["ownerUserId"] == str(member.id)
    assert (body["commentPolicy"], body["visibility"]) == ("TeamMembers", "Public")
    assert body["categoryId"] == str(folder.id)
    assert body["lastActivityUtc"].endswith("Z")


def test_create_takes_the_teams_default_visibility_and_language(api, admin, member):
    team = make_team(
        admin,
        members=(member,),
        default_note_visibility=NoteVisibility.PUBLIC,
        content_language="fr",
    )
    body = api.as_user(member).post(notes_url(team), json={"title": "Café"}).get_json()
    assert (body["visibility"], body["contentLanguage"]) == ("Public", "fr")
    category = body["categoryId"]
    tree = api.as_user(member).get(f"{TEAMS}/{team.id}/categories").get_json()
    assert [(c["categoryId"], c["name"]) for c in tree] == [(category, "Notes")]


def test_create_with_a_personal_category_is_400(api, team, member):
    mine = make_category(member, content_language="de")
    response = api.as_user(member).post(
        notes_url(team), json={"title": "x", "categoryId": str(mine.id)}
    )
    assert "categoryId" in assert_problem(response, 400)["errors"]


def test_create_by_a_stranger_is_403(api, team):
    assert_problem(api.as_user(make_user()).post(notes_url(team), json={"title": "x"}), 403)


def test_create_without_a_title_is_400(api, team, member):
    assert (
        "title" in assert_problem(api.as_user(member).post(notes_url(team), json={}), 400)["errors"]
    )


# --- move --------------------------------------------------------------------------------


def move(api, user, team, note, **body):
    return api.as_user(user).post(notes_url(team, f"/{note.id}/move"), json=body)


@pytest.mark.parametrize("who", ["author", "admin"])
def test_the_author_or_an_admin_edits_a_team_note(api, team, note, who, request):
    response = move(api, request.getfixturevalue(who), team, note, title="Hut (closed)")
    assert response.status_code == 200
    assert response.get_json()["title"] == "Hut (closed)"
    assert response.get_json()["teamId"] == str(team.id)


def test_another_member_may_not_edit_a_team_note(api, team, note, member):
    assert_problem(move(api, member, team, note, title="x"), 403)


def test_a_stranger_gets_403_for_a_note_of_a_public_team(api, team, note):
    note.visibility = PUBLIC
    db.session.commit()
    assert_problem(move(api, make_user(), team, note, title="x"), 403)


def test_a_move_stays_in_the_teams_categories(api, team, note, author):
    mine = make_category(author, content_language="de")
    response = move(api, author, team, note, categoryId=str(mine.id))
    assert "categoryId" in assert_problem(response, 400)["errors"]


def test_a_personal_note_under_a_team_path_is_404(api, team, author):
    personal = make_note(author)
    assert_problem(move(api, author, team, personal, title="x"), 404)


def test_a_note_of_another_team_under_this_team_path_is_404(api, team, admin):
    other = make_team(admin)
    foreign = make_note(admin, team_id=other.id)
    assert_problem(move(api, admin, team, foreign, title="x"), 404)


def test_a_team_note_is_not_moved_through_the_personal_route(api, note, author):
    response = api.as_user(author).post(f"/api/notes/mine/{note.id}/move", json={"title": "x"})
    assert_problem(response, 404)


# --- remove from the team versus delete --------------------------------------------------


@pytest.mark.parametrize("who", ["author", "admin"])
def test_removing_from_the_team_keeps_the_note_for_its_author(
    api, team, note, author, who, request
):
    note.visibility = PUBLIC
    db.session.commit()
    response = api.as_user(request.getfixturevalue(who)).delete(notes_url(team, f"/{note.id}"))
    assert response.status_code == 204
    mine = api.as_user(author).get("/api/notes/mine").get_json()
    assert [row["noteId"] for row in mine] == [str(note.id)]
    assert (mine[0]["teamId"], mine[0]["visibility"], mine[0]["title"]) == (None, "Private", "Hut")
    team_list = api.as_user(author).get(notes_url(team)).get_json()
    assert team_list == []
    assert_problem(api.get(f"/api/public/notes/{note.id}"), 404)  # private now


def test_another_member_may_not_remove_a_note_from_the_team(api, team, note, member):
    assert_problem(api.as_user(member).delete(notes_url(team, f"/{note.id}")), 403)


def test_a_stranger_may_not_remove_a_note_from_the_team(api, team, note):
    assert_problem(api.as_user(make_user()).delete(notes_url(team, f"/{note.id}")), 403)


@pytest.mark.parametrize("who", ["author", "admin"])
def test_permanent_delete_ends_the_team_note(api, team, note, author, who, request):
    response = api.as_user(request.getfixturevalue(who)).delete(
        notes_url(team, f"/{note.id}/delete")
    )
    assert response.status_code == 204
    db.session.expire_all()
    assert db.session.get(Note, note.id).is_deleted
    assert api.as_user(author).get(notes_url(team)).get_json() == []
    assert api.as_user(author).get("/api/notes/mine").get_json() == []
    assert_problem(api.as_user(author).get(f"/api/public/notes/{note.id}"), 404)


def test_another_member_may_not_delete_a_team_note(api, team, note, member):
    assert_problem(api.as_user(member).delete(notes_url(team, f"/{note.id}/delete")), 403)


def test_a_stranger_may_not_delete_a_team_note(api, team, note):
    assert_problem(api.as_user(make_user()).delete(notes_url(team, f"/{note.id}/delete")), 403)


def test_deleting_twice_is_404(api, team, note, author):
    assert api.as_user(author).delete(notes_url(team, f"/{note.id}/delete")).status_code == 204
    assert_problem(api.as_user(author).delete(notes_url(team, f"/{note.id}/delete")), 404)


# --- comment policy on team notes --------------------------------------------------------


def test_team_members_comment_policy_keeps_outsiders_out(api, team, author, member, folder):
    note = make_note(
        author,
        team_id=team.id,
        category=folder,
        visibility=PUBLIC,
        comment_policy=CommentPolicy.TEAM_MEMBERS,
    )
    url = f"/api/public/notes/{note.id}/comments"
    assert api.as_user(member).post(url, json={"body": "Nice"}).status_code == 201
    assert_problem(api.as_user(make_user()).post(url, json={"body": "Hi"}), 403)


# --- GPX ---------------------------------------------------------------------------------

GPX = b"""<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
  <wpt lat="47.1" lon="11.2"><name>Hut</name><desc>Open in summer</desc></wpt>
  <wpt lat="47.3" lon="11.4"><name>Lake</name><desc>Cold</desc></wpt>
</gpx>"""


def upload(api, user, team, data=GPX):
    return api.as_user(user).post(
        notes_url(team, "/gpx"),
        data={"file": (io.BytesIO(data), "notes.gpx"), "visibility": "Private"},
        content_type="multipart/form-data",
    )


def test_a_member_exports_the_teams_mapped_notes(api, team, author, member, folder):
    make_note(author, team_id=team.id, category=folder, title="Hut", latitude=47.1, longitude=11.2)
    make_note(author, team_id=team.id, category=folder, title="Unmapped")
    make_note(member, title="Personal", latitude=1.0, longitude=1.0)
    response = api.as_user(member).get(notes_url(team, "/gpx"))
    assert response.status_code == 200
    assert response.mimetype == "application/gpx+xml"
    text = response.get_data(as_text=True)
    assert "<name>Hut</name>" in text
    assert "Unmapped" not in text
    assert "Personal" not in text


def test_a_stranger_may_not_export_a_teams_notes(api, team):
    assert_problem(api.as_user(make_user()).get(notes_url(team, "/gpx")), 403)


def test_a_member_imports_waypoints_as_team_notes(api, team, member):
    response = upload(api, member, team)
    assert response.status_code == 200
    assert response.get_json()["created"] == 2
    listed = api.as_user(member).get(notes_url(team)).get_json()
    assert {row["title"] for row in listed} == {"Hut", "Lake"}
    assert all(row["ownerUserId"] == str(member.id) for row in listed)


def test_import_duplicates_compare_only_this_teams_notes(api, team, member, folder):
    make_note(member, title="Hut", body="Open in summer", latitude=47.1, longitude=11.2)
    other = make_team(member)
    make_note(member, team_id=other.id, title="Lake", body="Cold", latitude=47.3, longitude=11.4)
    make_note(
        member,
        team_id=team.id,
        category=folder,
        title="Lake",
        body="Cold",
        latitude=47.3,
        longitude=11.4,
    )
    report = upload(api, member, team).get_json()
    outcomes = {item["name"]: item["outcome"] for item in report["waypoints"]}
    assert outcomes == {"Hut": "created", "Lake": "duplicate"}


@pytest.mark.parametrize("content_type", ["multipart/form-data", None])
def test_a_team_import_with_the_file_sent_as_text_is_400_on_file(api, team, member, content_type):
    form = {"file": GPX.decode(), "visibility": "Private"}
    kwargs = {"content_type": content_type} if content_type else {}
    response = api.as_user(member).post(notes_url(team, "/gpx"), data=form, **kwargs)
    assert "file" in assert_problem(response, 400)["errors"]
    assert api.as_user(member).get(notes_url(team)).get_json() == []


def test_a_stranger_may_not_import_into_a_team(api, team):
    assert_problem(upload(api, make_user(), team), 403)


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("POST", ""),
        ("POST", "/{note}/move"),
        ("DELETE", "/{note}"),
        ("DELETE", "/{note}/delete"),
        ("GET", "/gpx"),
        ("POST", "/gpx"),
    ],
)
def test_every_team_note_route_is_404_to_a_stranger_of_a_members_only_team(
    api, admin, author, method, suffix
):
    hidden = make_team(admin, members=(author,), page_visibility=PageVisibility.MEMBERS_ONLY)
    note = make_note(author, team_id=hidden.id, visibility=PUBLIC)
    path = notes_url(hidden, suffix.format(note=note.id))
    body: dict = {"json": {"title": "x"}}
    if suffix == "/gpx" and method == "POST":
        body = {"data": {"file": (io.BytesIO(GPX), "w.gpx"), "visibility": "Private"}}
    assert_problem(api.as_user(make_user()).open(method, path, **body), 404)
    assert db.session.get(Note, note.id).team_id == hidden.id


def test_a_team_import_takes_the_teams_content_language(api, team, member):
    upload(api, member, team)
    listed = api.as_user(member).get(notes_url(team)).get_json()
    assert {row["contentLanguage"] for row in listed} == {team.content_language} == {"de"}
