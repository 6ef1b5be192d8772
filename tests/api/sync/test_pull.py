"""Sync pull (contract: Sync): everything, then what changed, with tombstones for what was
deleted or left the caller's reach; team records; the public area under the cap."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.team import MembershipStatus, TeamMembership
from tests.api.sync.helpers import PULL, note_record, pull, pulled, pushed, wire_time
from tests.conftest import assert_problem
from tests.factories import make_category, make_membership, make_note, make_team, make_user

PUBLIC = NoteVisibility.PUBLIC
BERLIN = {"minLatitude": 52.3, "minLongitude": 13.0, "maxLatitude": 52.7, "maxLongitude": 13.8}


@pytest.fixture
def alice(app):
    return make_user("alice")


def tombstone(note) -> dict:
    return {"noteId": str(note.id), "teamId": note.team_id and str(note.team_id), "isDeleted": True}


def test_a_first_pull_sends_everything_live(api, alice):
    folder = make_category(alice)
    kept = make_note(alice, title="Kept", category=folder)
    make_note(alice, is_deleted=True, category=folder)
    make_note(make_user("bob"))  # someone else's
    body = pulled(api, alice)
    assert [n["noteId"] for n in body["userNotes"]] == [str(kept.id)]
    assert body["userNotes"][0]["title"] == "Kept"
    assert body["userNotes"][0]["ownerUserName"] == "alice"
    assert [c["categoryId"] for c in body["userCategories"]] == [str(folder.id)]
    assert body["teamNotes"] == body["teamCategories"] == body["publicNotes"] == []
    assert body["serverSyncUtc"].endswith("Z")


def test_a_later_pull_sends_only_what_changed(api, alice):
    make_note(alice, title="Old")
    first = pulled(api, alice)
    assert pulled(api, alice, first["serverSyncUtc"])["userNotes"] == []
    record = note_record(title="New")
    pushed(api, alice, notes=[record])
    second = pulled(api, alice, first["serverSyncUtc"])
    assert [n["title"] for n in second["userNotes"]] == ["New"]
    assert second["serverSyncUtc"] > first["serverSyncUtc"]
    assert pulled(api, alice, second["serverSyncUtc"])["userNotes"] == []


def test_a_rest_edit_reaches_the_next_pull(api, alice):
    note = make_note(alice, title="Before")
    first = pulled(api, alice)
    moved = api.as_user(alice).post(f"/api/notes/mine/{note.id}/move", json={"title": "After"})
    assert moved.status_code == 200
    (record,) = pulled(api, alice, first["serverSyncUtc"])["userNotes"]
    assert (record["title"], record["updatedUtc"]) == ("After", moved.get_json()["updatedUtc"])


def test_a_deleted_note_comes_back_as_a_tombstone(api, alice):
    note = make_note(alice)
    first = pulled(api, alice)
    assert api.as_user(alice).delete(f"/api/notes/mine/{note.id}").status_code == 204
    assert pulled(api, alice, first["serverSyncUtc"])["userNotes"] == [tombstone(note)]


def test_a_deleted_category_comes_back_as_a_tombstone(api, alice):
    category = make_category(alice)
    first = pulled(api, alice)
    assert api.as_user(alice).delete(f"/api/categories/mine/{category.id}").status_code == 204
    assert pulled(api, alice, first["serverSyncUtc"])["userCategories"] == [
        {"categoryId": str(category.id), "teamId": None, "isDeleted": True}
    ]


# --- teams -------------------------------------------------------------------------------


def test_members_receive_team_notes_and_categories(api, alice):
    team = make_team(make_user("ada"), members=(alice,))
    category = make_category(team_id=team.id)
    note = make_note(make_user("bob"), team_id=team.id, category=category)
    make_note(make_user("cleo"), team_id=make_team().id)  # another team
    body = pulled(api, alice)
    assert [n["noteId"] for n in body["teamNotes"]] == [str(note.id)]
    assert body["teamNotes"][0]["teamId"] == str(team.id)
    assert [c["categoryId"] for c in body["teamCategories"]] == [str(category.id)]
    assert body["teamCategories"][0]["teamId"] == str(team.id)


def test_a_team_note_changed_by_another_member_reaches_the_next_pull(api, alice):
    ada = make_user("ada")
    team = make_team(ada, members=(alice,))
    note = make_note(ada, team_id=team.id, title="Hut")
    first = pulled(api, alice)
    record = note_record(
        note.id, teamId=str(team.id), title="Hut 2", updatedUtc=wire_time(note.updated_utc)
    )
    pushed(api, ada, notes=[record])
    (changed,) = pulled(api, alice, first["serverSyncUtc"])["teamNotes"]
    assert changed["title"] == "Hut 2"


def test_leaving_a_team_turns_its_notes_and_categories_into_tombstones(api, alice):
    ada = make_user("ada")
    team = make_team(ada, members=(alice,))
    category = make_category(team_id=team.id)
    note = make_note(ada, team_id=team.id, category=category)
    first = pulled(api, alice)
    assert len(first["teamNotes"]) == 1
    membership = db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == alice.id
        )
    )
    left = api.as_user(alice).delete(f"/api/teams/{team.id}/memberships/{membership.id}")
    assert left.status_code == 204
    body = pulled(api, alice, first["serverSyncUtc"])
    assert body["teamNotes"] == [tombstone(note)]
    assert body["teamCategories"] == [
        {"categoryId": str(category.id), "teamId": str(team.id), "isDeleted": True}
    ]
    # The team's other members keep everything.
    assert pulled(api, ada, first["serverSyncUtc"])["teamNotes"] == []


def test_joining_a_team_sends_the_whole_team(api, alice):
    ada = make_user("ada")
    team = make_team(ada, join_policy="Open")
    note = make_note(ada, team_id=team.id)
    first = pulled(api, alice)
    assert first["teamNotes"] == []
    joined = api.as_user(alice).post(f"/api/teams/{team.id}/memberships/request")
    assert joined.status_code in (200, 201), joined.get_data(as_text=True)
    body = pulled(api, alice, first["serverSyncUtc"])
    assert [n["noteId"] for n in body["teamNotes"]] == [str(note.id)]
    assert len(body["teamCategories"]) == 1


def test_a_note_handed_back_to_its_author_is_a_tombstone_for_the_others(api, alice):
    ada, bob = make_user("ada"), make_user("bob")
    team = make_team(ada, members=(alice, bob))
    note = make_note(bob, team_id=team.id)
    first = pulled(api, alice)
    # DELETE /api/teams/{teamId}/notes/{noteId} takes the note out of the team.
    removed = api.as_user(bob).delete(f"/api/teams/{team.id}/notes/{note.id}")
    assert removed.status_code == 204, removed.get_data(as_text=True)
    assert pulled(api, alice, first["serverSyncUtc"])["teamNotes"] == [
        {"noteId": str(note.id), "teamId": str(team.id), "isDeleted": True}
    ]
    # Its author now has it as a personal note.
    (mine,) = pulled(api, bob, first["serverSyncUtc"])["userNotes"]
    assert (mine["noteId"], mine["teamId"]) == (str(note.id), None)


def test_a_deleted_team_leaves_tombstones_for_its_members(api, alice):
    ada = make_user("ada")
    team = make_team(ada, members=(alice,))
    category = make_category(team_id=team.id)
    note = make_note(ada, team_id=team.id, category=category)
    note_id, category_id, team_id = str(note.id), str(category.id), str(team.id)
    first = pulled(api, alice)
    assert api.as_user(ada).delete(f"/api/teams/{team_id}").status_code == 204
    body = pulled(api, alice, first["serverSyncUtc"])
    assert body["teamNotes"] == [{"noteId": note_id, "teamId": team_id, "isDeleted": True}]
    assert body["teamCategories"] == [
        {"categoryId": category_id, "teamId": team_id, "isDeleted": True}
    ]


def test_a_pending_request_sends_nothing_of_the_team(api, alice):
    ada = make_user("ada")
    team = make_team(ada)
    make_note(ada, team_id=team.id)
    make_membership(team, alice, status=MembershipStatus.REQUESTING)
    assert pulled(api, alice)["teamNotes"] == []


# --- the public area ---------------------------------------------------------------------


def test_public_notes_follow_public_discovery(api, alice):
    bob = make_user("bob")
    shown = make_note(bob, visibility=PUBLIC, latitude=52.5, longitude=13.4)
    make_note(bob, latitude=52.5, longitude=13.4)  # private
    make_note(bob, visibility=PUBLIC, latitude=48.1, longitude=11.6)  # elsewhere
    response = pull(api, alice, area=BERLIN)
    assert response.status_code == 200
    assert [n["noteId"] for n in response.get_json()["publicNotes"]] == [str(shown.id)]
    assert "X-Result-Truncated" not in response.headers
    discovery = api.get("/api/notes/public/bounds", query_string=BERLIN).get_json()
    assert response.get_json()["publicNotes"] == discovery


def test_public_notes_are_capped_like_discovery(api, app, alice):
    app.config["PUBLIC_LIST_CAP"] = 2
    bob = make_user("bob")
    for _ in range(3):
        make_note(bob, visibility=PUBLIC, latitude=52.5, longitude=13.4)
    response = pull(api, alice, area=BERLIN)
    assert len(response.get_json()["publicNotes"]) == 2
    assert response.headers["X-Result-Truncated"] == "true"


# --- the request -------------------------------------------------------------------------


def test_pull_needs_a_bearer_token(api):
    assert_problem(api.post(PULL, json={}), 401)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"lastSyncUtc": "yesterday"}, "lastSyncUtc"),
        ({"publicArea": {"minLatitude": 1}}, "publicArea.minLongitude"),
        ({"publicArea": {**BERLIN, "minLatitude": 60}}, "publicArea.minLatitude"),
    ],
)
def test_a_malformed_pull_is_400(api, alice, body, field):
    assert field in assert_problem(api.as_user(alice).post(PULL, json=body), 400)["errors"]


def _statements_of_a_pull(api, user, last=None) -> int:
    from sqlalchemy import event

    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        pulled(api, user, last, area=BERLIN)
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    return len(seen)


def test_a_pull_runs_the_same_statements_whatever_the_number_of_records(api, alice):
    ada = make_user("ada")
    team = make_team(ada, members=(alice,))
    make_note(alice, visibility=PUBLIC, latitude=52.5, longitude=13.4)
    make_note(ada, team_id=team.id)
    small = _statements_of_a_pull(api, alice)
    for _ in range(15):
        make_note(alice, visibility=PUBLIC, latitude=52.5, longitude=13.4)
        make_note(ada, team_id=team.id)
    assert _statements_of_a_pull(api, alice) == small
    assert small <= 15
