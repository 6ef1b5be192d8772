"""Personal notes: GET/POST /api/notes/mine, POST .../{noteId}/move, DELETE .../{noteId}
(contract: Personal notes and GPX; Note; External link fields)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note
from tests.conftest import assert_problem
from tests.factories import make_category, make_note, make_user

MINE = "/api/notes/mine"


@pytest.fixture
def alice(app):
    return make_user("alice")


def create(api, user, **body):
    body.setdefault("title", "Old oak")
    return api.as_user(user).post(MINE, json=body)


# --- create ------------------------------------------------------------------------------


def test_create_returns_201_with_the_full_record(api, alice):
    category = make_category(alice, content_language="en-US")
    response = create(
        api,
        alice,
        categoryId=str(category.id),
        title="Old oak",
        body="By the river",
        latitude=52.5,
        longitude=13.4,
        visibility="Public",
        commentPolicy="LoggedInUsers",
        clientMutationId="m-1",
    )
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {
        "noteId", "ownerUserId", "ownerUserName", "categoryId", "title", "body",
        "contentLanguage", "latitude", "longitude", "visibility", "commentPolicy",
        "externalLinkUrl", "externalLinkDescription", "isDeleted", "updatedUtc",
        "lastActivityUtc", "clientMutationId", "teamId",
    }  # fmt: skip
    assert body["ownerUserId"] == str(alice.id)
    assert body["ownerUserName"] == "alice"
    assert body["categoryId"] == str(category.id)
    assert body["contentLanguage"] == "en-US"
    assert (body["latitude"], body["longitude"]) == (52.5, 13.4)
    assert body["visibility"] == "Public"
    assert body["isDeleted"] is False
    assert body["teamId"] is None
    assert body["clientMutationId"] == "m-1"
    assert body["updatedUtc"].endswith("Z")
    assert body["lastActivityUtc"].endswith("Z")
    assert db.session.get(Note, uuid.UUID(body["noteId"])) is not None


def test_create_without_category_uses_the_languages_notes_root(api, alice):
    first = create(api, alice, contentLanguage="de").get_json()
    second = create(api, alice, contentLanguage="de").get_json()
    category = db.session.get(Category, uuid.UUID(first["categoryId"]))
    assert (category.name, category.content_language, category.parent_category_id) == (
        "Notes",
        "de",
        None,
    )
    assert second["categoryId"] == first["categoryId"]


def test_create_defaults_private_english_and_off_the_map(api, alice):
    body = create(api, alice).get_json()
    assert body["visibility"] == "Private"
    assert body["commentPolicy"] == "LoggedInUsers"
    assert body["contentLanguage"] == "en"
    assert body["latitude"] is None
    assert body["longitude"] is None
    assert body["body"] == ""


def test_create_takes_the_language_of_its_category(api, alice):
    category = make_category(alice, content_language="fr")
    body = create(api, alice, categoryId=str(category.id)).get_json()
    assert body["contentLanguage"] == "fr"


def test_create_canonicalizes_the_language_tag(api, alice):
    assert create(api, alice, contentLanguage="pt-br").get_json()["contentLanguage"] == "pt-BR"


def test_create_in_a_category_of_another_language_is_400(api, alice):
    category = make_category(alice, content_language="fr")
    response = create(api, alice, categoryId=str(category.id), contentLanguage="en")
    assert "categoryId" in assert_problem(response, 400)["errors"]


def test_create_in_someone_elses_category_is_400(api, alice):
    category = make_category(make_user())
    response = create(api, alice, categoryId=str(category.id))
    assert "categoryId" in assert_problem(response, 400)["errors"]


def test_create_needs_a_token(api):
    assert_problem(api.post(MINE, json={"title": "x"}), 401)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"body": "x" * 20_001}, "body"),
        ({"latitude": 91, "longitude": 0}, "latitude"),
        ({"latitude": 0, "longitude": -180.5}, "longitude"),
        ({"latitude": 10}, "longitude"),
        ({"longitude": 10}, "latitude"),
        ({"contentLanguage": "english!"}, "contentLanguage"),
        ({"contentLanguage": "en-" + "a" * 40}, "contentLanguage"),
        ({"visibility": "Friends"}, "visibility"),
        ({"commentPolicy": "Anyone"}, "commentPolicy"),
        ({"externalLinkUrl": "https://e.example/" + "a" * 2048}, "externalLinkUrl"),
        ({"externalLinkDescription": "d" * 501}, "externalLinkDescription"),
        ({"clientMutationId": "m" * 101}, "clientMutationId"),
        ({"categoryId": "not-a-guid"}, "categoryId"),
    ],
)
def test_create_rejects_invalid_fields_naming_them(api, alice, body, field):
    response = api.as_user(alice).post(MINE, json={"title": "ok", **body})
    assert field in assert_problem(response, 400)["errors"]


def test_create_refuses_nan_coordinates(api, alice):
    response = api.as_user(alice).post(
        MINE,
        data='{"title": "x", "latitude": NaN, "longitude": 1}',
        headers={"Content-Type": "application/json"},
    )
    assert_problem(response, 400)


def test_create_revalidates_the_link(api, alice, links):
    body = create(api, alice, externalLinkUrl=" HTTPS://Example.ORG/x ").get_json()
    assert links == [(" HTTPS://Example.ORG/x ", None)]
    assert body["externalLinkUrl"] == "https://example.org/x"
    assert body["externalLinkDescription"] == "Page title"


def test_create_with_a_failing_link_is_400_and_stores_nothing(api, alice, links):
    assert_problem(create(api, alice, externalLinkUrl="https://bad.example"), 400)
    assert db.session.query(Note).count() == 0


# --- list --------------------------------------------------------------------------------


def test_list_shows_my_live_notes_most_recent_activity_first(api, alice):
    now = datetime.now(UTC)
    older = make_note(alice, last_activity_utc=now - timedelta(hours=2))
    newer = make_note(alice, last_activity_utc=now - timedelta(hours=1))
    make_note(alice, is_deleted=True)
    make_note(make_user(), visibility=NoteVisibility.PUBLIC)
    response = api.as_user(alice).get(MINE)
    assert response.status_code == 200
    assert [item["noteId"] for item in response.get_json()] == [str(newer.id), str(older.id)]


def test_list_items_are_the_created_record(api, alice):
    created = create(
        api,
        alice,
        latitude=1.5,
        longitude=-2.25,
        visibility="VisibleOnceAssociatedTrackableAccessed",
        clientMutationId="m-9",
    ).get_json()
    assert api.as_user(alice).get(MINE).get_json() == [created]


def test_list_keeps_whole_second_times_in_the_wire_format(api, alice):
    make_note(alice, last_activity_utc=datetime(2020, 1, 1, tzinfo=UTC))
    assert api.as_user(alice).get(MINE).get_json()[0]["lastActivityUtc"] == (
        "2020-01-01T00:00:00.000Z"
    )


def test_list_leaves_out_team_notes(api, alice):
    make_note(alice, team_id=uuid.uuid4())
    assert api.as_user(alice).get(MINE).get_json() == []


def test_list_filters_by_content_language(api, alice):
    german = make_note(alice, content_language="de")
    make_note(alice, content_language="en")
    items = api.as_user(alice).get(f"{MINE}?contentLanguage=DE").get_json()
    assert [item["noteId"] for item in items] == [str(german.id)]


def test_list_filters_by_bounds_and_drops_unmapped_notes(api, alice):
    inside = make_note(alice, latitude=10, longitude=10)
    make_note(alice, latitude=30, longitude=10)
    make_note(alice)
    query = "minLatitude=0&minLongitude=0&maxLatitude=20&maxLongitude=20"
    items = api.as_user(alice).get(f"{MINE}?{query}").get_json()
    assert [item["noteId"] for item in items] == [str(inside.id)]


def test_list_with_partial_bounds_is_400_naming_the_missing_ones(api, alice):
    response = api.as_user(alice).get(f"{MINE}?minLatitude=0&maxLatitude=1")
    assert set(assert_problem(response, 400)["errors"]) == {"minLongitude", "maxLongitude"}


def test_list_needs_a_token(api):
    assert_problem(api.get(MINE), 401)


# --- move --------------------------------------------------------------------------------


def move(api, user, note, **body):
    return api.as_user(user).post(f"{MINE}/{note.id}/move", json=body)


def test_move_applies_only_the_fields_present(api, alice):
    note = make_note(alice, title="Before", body="Text", latitude=1, longitude=2)
    response = move(api, alice, note, title="After", visibility="Public")
    assert response.status_code == 200
    body = response.get_json()
    assert (body["title"], body["visibility"], body["body"]) == ("After", "Public", "Text")
    assert (body["latitude"], body["longitude"]) == (1, 2)


def test_move_moves_updated_and_activity_times(api, alice):
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    note = make_note(alice, updated_utc=long_ago, last_activity_utc=long_ago)
    body = move(api, alice, note, title="New").get_json()
    assert body["updatedUtc"] > "2021"
    assert body["lastActivityUtc"] > "2021"


def test_move_to_another_category(api, alice):
    note = make_note(alice)
    target = make_category(alice)
    assert move(api, alice, note, categoryId=str(target.id)).get_json()["categoryId"] == str(
        target.id
    )


def test_move_with_null_coordinates_takes_the_note_off_the_map(api, alice):
    note = make_note(alice, latitude=1, longitude=2)
    body = move(api, alice, note, latitude=None, longitude=None).get_json()
    assert (body["latitude"], body["longitude"]) == (None, None)


def test_move_with_half_a_position_is_400(api, alice):
    note = make_note(alice)
    assert "longitude" in assert_problem(move(api, alice, note, latitude=3), 400)["errors"]


def test_move_changing_language_without_a_category_is_400(api, alice):
    note = make_note(alice, content_language="en")
    response = move(api, alice, note, contentLanguage="fr")
    assert "contentLanguage" in assert_problem(response, 400)["errors"]


def test_move_changing_language_with_a_matching_category(api, alice):
    note = make_note(alice, content_language="en")
    french = make_category(alice, content_language="fr")
    body = move(api, alice, note, contentLanguage="fr", categoryId=str(french.id)).get_json()
    assert (body["contentLanguage"], body["categoryId"]) == ("fr", str(french.id))


def test_move_revalidates_the_link_only_when_the_url_is_present(api, alice, links):
    note = make_note(alice, external_link_url="https://a.example", external_link_description="A")
    move(api, alice, note, title="No link change")
    assert links == []
    body = move(api, alice, note, externalLinkUrl="https://B.example").get_json()
    assert links == [("https://B.example", None)]
    assert (body["externalLinkUrl"], body["externalLinkDescription"]) == (
        "https://b.example",
        "Page title",
    )


def test_move_with_an_empty_url_removes_the_link(api, alice, links):
    note = make_note(alice, external_link_url="https://a.example", external_link_description="A")
    body = move(api, alice, note, externalLinkUrl="").get_json()
    assert (body["externalLinkUrl"], body["externalLinkDescription"]) == (None, "")


def test_move_with_a_failing_link_is_400_and_changes_nothing(api, alice, links):
    note = make_note(alice, title="Keep")
    response = move(api, alice, note, title="Lost", externalLinkUrl="https://bad.example")
    assert_problem(response, 400)
    db.session.expire_all()
    assert db.session.get(Note, note.id).title == "Keep"


def test_move_of_someone_elses_public_note_is_403(api, alice):
    note = make_note(make_user(), visibility=NoteVisibility.PUBLIC)
    assert_problem(move(api, alice, note, title="Mine now"), 403)


def test_move_of_someone_elses_private_note_is_404(api, alice):
    note = make_note(make_user())
    assert_problem(move(api, alice, note, title="Mine now"), 404)


def test_move_of_my_team_note_is_404_on_the_personal_route(api, alice):
    note = make_note(alice, team_id=uuid.uuid4())
    assert_problem(move(api, alice, note, title="x"), 404)


def test_move_of_a_deleted_note_is_404(api, alice):
    note = make_note(alice, is_deleted=True)
    assert_problem(move(api, alice, note, title="x"), 404)


# --- delete ------------------------------------------------------------------------------


def test_delete_is_204_and_leaves_a_tombstone(api, alice):
    note = make_note(alice, visibility=NoteVisibility.PUBLIC)
    response = api.as_user(alice).delete(f"{MINE}/{note.id}")
    assert response.status_code == 204
    db.session.expire_all()
    stored = db.session.get(Note, note.id)
    assert stored.is_deleted
    assert not stored.is_publicly_discoverable


def test_deleted_note_disappears_from_every_read(api, alice):
    note = make_note(alice, visibility=NoteVisibility.PUBLIC, latitude=1, longitude=1)
    api.as_user(alice).delete(f"{MINE}/{note.id}")
    assert api.as_user(alice).get(MINE).get_json() == []
    assert_problem(api.as_user(alice).get(f"/api/public/notes/{note.id}"), 404)
    bounds = "minLatitude=0&minLongitude=0&maxLatitude=2&maxLongitude=2"
    assert api.get(f"/api/notes/public/bounds?{bounds}").get_json() == []


def test_delete_twice_is_404(api, alice):
    note = make_note(alice)
    api.as_user(alice).delete(f"{MINE}/{note.id}")
    assert_problem(api.as_user(alice).delete(f"{MINE}/{note.id}"), 404)


def test_delete_of_someone_elses_public_note_is_403(api, alice):
    note = make_note(make_user(), visibility=NoteVisibility.PUBLIC)
    assert_problem(api.as_user(alice).delete(f"{MINE}/{note.id}"), 403)


def test_delete_of_an_unknown_note_is_404(api, alice):
    assert_problem(api.as_user(alice).delete(f"{MINE}/{uuid.uuid4()}"), 404)
