"""Public note pages: GET /api/public/notes/{noteId}, its comments (GET, POST) and its
trackables (GET) (contract: Public note pages; Note visibility rules)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from tests.conftest import assert_problem
from tests.factories import (
    attach_trackable,
    make_comment,
    make_note,
    make_trackable,
    make_user,
    unlock_trackable,
)

PUBLIC = NoteVisibility.PUBLIC
PRIVATE = NoteVisibility.PRIVATE
GATED = NoteVisibility.ONCE_TRACKABLE_ACCESSED


def page(note_id) -> str:
    return f"/api/public/notes/{note_id}"


@pytest.fixture
def people(app):
    return {
        "anonymous": None,
        "owner": make_user(),
        "stranger": make_user(),
        "unlocked": make_user(),
    }


def build(people, kind: str) -> Note:
    visibility = {"private": PRIVATE, "public": PUBLIC}.get(kind, GATED)
    note = make_note(people["owner"], visibility=visibility)
    if kind in {"gated_with_trackables", "private"}:
        trackable = attach_trackable(note)
        unlock_trackable(people["unlocked"], trackable)
    else:
        unlock_trackable(people["unlocked"], make_trackable())
    return note


# The note page follows the visibility rules: who gets 200, who gets 404.
PAGE_TABLE = {
    "private": {"anonymous": 404, "owner": 200, "stranger": 404, "unlocked": 404},
    "public": {"anonymous": 200, "owner": 200, "stranger": 200, "unlocked": 200},
    "gated_without_trackables": {"anonymous": 200, "owner": 200, "stranger": 200, "unlocked": 200},
    "gated_with_trackables": {"anonymous": 404, "owner": 200, "stranger": 404, "unlocked": 200},
}
PAGE_CASES = [
    pytest.param(kind, who, status, id=f"{kind}-{who}")
    for kind, row in PAGE_TABLE.items()
    for who, status in row.items()
]


@pytest.mark.parametrize(("kind", "who", "status"), PAGE_CASES)
def test_note_page_access(api, people, kind, who, status):
    note = build(people, kind)
    response = api.as_user(people[who]).get(page(note.id))
    assert response.status_code == status
    if status == 200:
        assert response.get_json()["noteId"] == str(note.id)
    else:
        assert_problem(response, 404)


@pytest.mark.parametrize(("kind", "who", "status"), PAGE_CASES)
def test_comment_list_follows_note_access(api, people, kind, who, status):
    note = build(people, kind)
    response = api.as_user(people[who]).get(f"{page(note.id)}/comments")
    assert response.status_code == status


@pytest.mark.parametrize(("kind", "who", "status"), PAGE_CASES)
def test_trackable_list_follows_note_access(api, people, kind, who, status):
    note = build(people, kind)
    response = api.as_user(people[who]).get(f"{page(note.id)}/trackables")
    assert response.status_code == status


def test_unknown_and_deleted_notes_are_404(api):
    assert_problem(api.get(page(uuid.uuid4())), 404)
    deleted = make_note(visibility=PUBLIC, is_deleted=True)
    assert_problem(api.get(page(deleted.id)), 404)


def test_invalid_token_on_a_note_page_is_401(api):
    note = make_note(visibility=PUBLIC)
    assert_problem(api.with_token("garbage").get(page(note.id)), 401)


# --- comments ----------------------------------------------------------------------------


def test_comment_is_201_with_the_comment_record(api):
    note = make_note(visibility=PUBLIC)
    author = make_user("carol", display_name="Carol C.")
    response = api.as_user(author).post(f"{page(note.id)}/comments", json={"body": "Lovely"})
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {
        "commentId",
        "noteId",
        "authorUserName",
        "authorDisplayText",
        "body",
        "createdUtc",
        "updatedUtc",
    }
    assert (body["noteId"], body["authorUserName"], body["authorDisplayText"]) == (
        str(note.id),
        "carol",
        "Carol C.",
    )
    assert body["body"] == "Lovely"
    assert body["createdUtc"].endswith("Z")


@pytest.mark.parametrize("character", ["\u202e", "\u2067", "\x1b"])
def test_a_comment_with_a_direction_or_control_character_is_400(api, character):
    note = make_note(visibility=PUBLIC)
    response = api.as_user(make_user()).post(
        f"{page(note.id)}/comments", json={"body": f"Nice {character}place"}
    )
    assert "body" in assert_problem(response, 400)["errors"]


def test_a_comment_keeps_its_line_breaks_and_leading_space(api):
    """The document's not-blank pattern is searched anywhere: leading space is no blank."""
    note = make_note(visibility=PUBLIC)
    text = "  Nice place.\n\tReally."
    response = api.as_user(make_user()).post(f"{page(note.id)}/comments", json={"body": text})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["body"] == text


def test_comment_display_text_falls_back_to_the_user_name(api):
    note = make_note(visibility=PUBLIC)
    author = make_user("dan")
    body = api.as_user(author).post(f"{page(note.id)}/comments", json={"body": "Hi"}).get_json()
    assert body["authorDisplayText"] == "dan"


def test_comment_moves_the_notes_activity_but_not_its_update_time(api):
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    note = make_note(visibility=PUBLIC, updated_utc=long_ago, last_activity_utc=long_ago)
    api.as_user(make_user()).post(f"{page(note.id)}/comments", json={"body": "Hi"})
    record = api.get(page(note.id)).get_json()
    assert record["lastActivityUtc"] > "2021"
    assert record["updatedUtc"].startswith("2020-01-01")


def test_comments_are_listed_newest_first(api):
    note = make_note(visibility=PUBLIC)
    now = datetime.now(UTC)
    older = make_comment(note, body="first", created_utc=now - timedelta(minutes=2))
    newer = make_comment(note, body="second", created_utc=now - timedelta(minutes=1))
    listed = api.get(f"{page(note.id)}/comments").get_json()
    assert [item["commentId"] for item in listed] == [str(newer.id), str(older.id)]


def test_comment_needs_a_token(api):
    note = make_note(visibility=PUBLIC)
    assert_problem(api.post(f"{page(note.id)}/comments", json={"body": "x"}), 401)


@pytest.mark.parametrize("body", [{}, {"body": ""}, {"body": "   "}, {"body": "x" * 4001}])
def test_comment_body_is_required_and_limited(api, body):
    note = make_note(visibility=PUBLIC)
    response = api.as_user(make_user()).post(f"{page(note.id)}/comments", json=body)
    assert "body" in assert_problem(response, 400)["errors"]


def test_comment_on_a_note_i_cannot_open_is_404(api):
    note = make_note(visibility=PRIVATE)
    response = api.as_user(make_user()).post(f"{page(note.id)}/comments", json={"body": "x"})
    assert_problem(response, 404)


def test_team_members_policy_refuses_outsiders_with_403(api):
    note = make_note(visibility=PUBLIC, comment_policy=CommentPolicy.TEAM_MEMBERS)
    response = api.as_user(make_user()).post(f"{page(note.id)}/comments", json={"body": "x"})
    assert_problem(response, 403)


def test_team_members_policy_lets_the_owner_comment(api):
    owner = make_user()
    note = make_note(owner, visibility=PUBLIC, comment_policy=CommentPolicy.TEAM_MEMBERS)
    response = api.as_user(owner).post(f"{page(note.id)}/comments", json={"body": "x"})
    assert response.status_code == 201


def test_unlocked_viewer_may_comment_on_a_gated_note(api):
    note = make_note(visibility=GATED)
    trackable = attach_trackable(note)
    viewer = make_user()
    unlock_trackable(viewer, trackable)
    response = api.as_user(viewer).post(f"{page(note.id)}/comments", json={"body": "Found it"})
    assert response.status_code == 201


class TestCommentCap:
    @pytest.fixture
    def app_overrides(self):
        return {"PUBLIC_LIST_CAP": 2}

    def test_comment_list_is_capped(self, api):
        note = make_note(visibility=PUBLIC)
        for _ in range(3):
            make_comment(note)
        response = api.get(f"{page(note.id)}/comments")
        assert len(response.get_json()) == 2
        assert response.headers["X-Result-Truncated"] == "true"


# --- trackables --------------------------------------------------------------------------


def test_trackables_of_a_note_show_their_public_fields(api):
    note = make_note(visibility=PUBLIC)
    trackable = attach_trackable(note, make_trackable(public_code="LN-ABC123", name="Coin"))
    listed = api.get(f"{page(note.id)}/trackables").get_json()
    assert len(listed) == 1
    assert set(listed[0]) == {
        "trackableId",
        "publicCode",
        "name",
        "lastActivityUtc",
        "attachedUtc",
    }
    assert (listed[0]["trackableId"], listed[0]["publicCode"], listed[0]["name"]) == (
        str(trackable.id),
        "LN-ABC123",
        "Coin",
    )


def test_note_without_trackables_lists_none(api):
    note = make_note(visibility=PUBLIC)
    assert api.get(f"{page(note.id)}/trackables").get_json() == []


def test_deleting_a_note_keeps_its_comments_out_of_reach(api):
    owner = make_user()
    note = make_note(owner, visibility=PUBLIC)
    make_comment(note)
    api.as_user(owner).delete(f"/api/notes/mine/{note.id}")
    assert_problem(api.get(f"{page(note.id)}/comments"), 404)
    db.session.expire_all()
    assert db.session.get(Note, note.id).is_deleted
