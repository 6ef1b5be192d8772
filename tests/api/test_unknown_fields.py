"""Unknown request fields are answered, not swallowed (contract notes: Wire format).

A write naming a field that is neither in its body nor in the resource's read model is 400
naming it (dotted when nested) and writes nothing; a read-model field sent back, as a
client that echoes what it read does, is accepted and ignored. Query strings still ignore
parameters they do not know. One test walks every operation with a body in the document.
"""

from __future__ import annotations

import io
import re
import uuid
from typing import Any

import pytest
from marshmallow import fields

from app.api.base import Blueprint, RequestSchema, Schema
from app.extensions import db
from app.models.category import Category
from app.models.image import ContentImage
from app.models.note import Note, NoteComment
from app.models.team import Team
from app.models.trackable import JourneyStop, Trackable
from app.models.user import User
from tests.api.images.samples import sample
from tests.api.sync.helpers import PULL, PUSH, category_record, note_record
from tests.conftest import assert_problem
from tests.factories import count_rows, make_note, make_team, make_trackable, make_user

UNKNOWN = "zzNotAField"


@pytest.fixture
def alice(app):
    return make_user("alice", display_name="Alice A.")


def unknown_field(response: Any, name: str) -> dict[str, Any]:
    """The 400 names `name` as an unknown field."""
    body = assert_problem(response, 400)
    assert body["errors"].get(name) == ["Unknown field."], body
    return body


# --- every body, from the document ---------------------------------------------------------


def _operations_with_a_body(document: dict[str, Any]) -> list[tuple[str, str, str, dict]]:
    found = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "requestBody" in operation:
                for media_type, content in operation["requestBody"]["content"].items():
                    found.append((method, path, media_type, content["schema"]))
    return found


def _component(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    name = schema["$ref"].rsplit("/", 1)[-1]
    return document["components"]["schemas"][name]


def test_every_body_refuses_an_unknown_field_in_the_document_and_on_the_wire(api, alice):
    document = api.get("/api/openapi.json").get_json()
    operations = _operations_with_a_body(document)
    assert len(operations) >= 40  # the walk reaches the routes, not an empty document
    signed_in = api.as_user(alice)
    for method, path, media_type, schema in operations:
        where = f"{method.upper()} {path} ({media_type})"
        assert _component(document, schema).get("additionalProperties") is False, where
        url = re.sub(r"\{\w+\}", lambda _: str(uuid.uuid4()), path)
        if media_type == "multipart/form-data":
            response = signed_in.open(
                method.upper(), url, data={UNKNOWN: "x"}, content_type=media_type
            )
        else:
            assert media_type == "application/json", where
            response = signed_in.open(method.upper(), url, json={UNKNOWN: 1})
        assert response.status_code == 400, f"{where}: {response.get_data(as_text=True)}"
        assert UNKNOWN in response.get_json()["errors"], where


def test_a_body_schema_that_would_swallow_unknown_fields_does_not_register():
    blueprint = Blueprint("unknown_fields_probe", __name__)

    class Tolerant(Schema):
        title = fields.String()

    class Outer(RequestSchema):
        read_models = ()
        inner = fields.Nested(Tolerant)

    class Undeclared(RequestSchema):
        title = fields.String()

    for schema, reason in (
        (Tolerant, "Tolerant is not a RequestSchema"),
        (Outer, "body.inner: Tolerant is not a RequestSchema"),
        (Undeclared, "Undeclared declares no read_models"),
    ):
        with pytest.raises(TypeError, match=reason):
            blueprint.arguments(schema)
    blueprint.arguments(Tolerant, location="query")  # queries keep ignoring the unknown


def test_the_document_lists_the_tolerated_read_model_fields(api):
    schemas = api.get("/api/openapi.json").get_json()["components"]["schemas"]
    (pattern,) = schemas["NoteCreate"]["patternProperties"]
    tolerated = set(pattern.strip("^()$").split("|"))
    assert {"noteId", "ownerUserName", "lastActivityUtc", "updatedUtc"} <= tolerated
    assert "title" not in tolerated  # a body field is validated, not tolerated
    assert "patternProperties" not in schemas["Register"]  # no read model: nothing tolerated


# --- notes, categories, comments -----------------------------------------------------------


def test_a_note_with_a_misspelt_field_is_refused_and_not_written(api, alice):
    response = api.as_user(alice).post(
        "/api/notes/mine", json={"title": "Old oak", "latitude": 52.5, "longitud": 13.4}
    )
    body = unknown_field(response, "longitud")
    assert "longitud" in body["detail"]
    assert count_rows(Note) == 0


def test_a_note_record_sent_back_whole_is_accepted_and_its_read_fields_ignored(api, alice):
    read = api.as_user(alice).post("/api/notes/mine", json={"title": "Old oak"}).get_json()
    echoed = {
        **read,
        "title": "Old oak, again",
        "noteId": str(uuid.uuid4()),
        "ownerUserName": "mallory",
        "isDeleted": True,
    }
    response = api.as_user(alice).post("/api/notes/mine", json=echoed)
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    assert created["noteId"] not in {read["noteId"], echoed["noteId"]}
    assert created["ownerUserName"] == "alice"
    assert created["isDeleted"] is False
    assert created["title"] == "Old oak, again"


def test_a_note_move_refuses_an_unknown_field_and_changes_nothing(api, alice):
    note = make_note(alice, title="Old oak")
    response = api.as_user(alice).post(
        f"/api/notes/mine/{note.id}/move", json={"title": "New", "colour": "red"}
    )
    unknown_field(response, "colour")
    db.session.expire_all()
    assert db.session.get(Note, note.id).title == "Old oak"


def test_a_category_with_an_unknown_field_is_refused(api, alice):
    response = api.as_user(alice).post(
        "/api/categories/mine", json={"name": "Walks", "parentId": None}
    )
    unknown_field(response, "parentId")
    assert count_rows(Category) == 0


def test_a_category_node_sent_back_is_accepted(api, alice):
    response = api.as_user(alice).post(
        "/api/categories/mine",
        json={
            "name": "Walks",
            "categoryId": str(uuid.uuid4()),
            "childCategoryCount": 3,
            "children": [],
        },
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["name"] == "Walks"


def test_a_comment_with_an_unknown_field_is_refused_and_an_echo_accepted(api, alice):
    note = make_note(alice)
    url = f"/api/public/notes/{note.id}/comments"
    unknown_field(api.as_user(alice).post(url, json={"body": "Nice", "rating": 5}), "rating")
    assert count_rows(NoteComment) == 0
    echoed = {"body": "Nice", "commentId": str(uuid.uuid4()), "authorUserName": "mallory"}
    response = api.as_user(alice).post(url, json=echoed)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["authorUserName"] == "alice"


# --- teams and settings --------------------------------------------------------------------


def test_a_team_with_a_misnamed_field_is_refused(api, alice):
    response = api.as_user(alice).post(
        "/api/teams", json={"name": "Hikers", "visibility": "Private"}
    )
    unknown_field(response, "visibility")  # the setting is pageVisibility
    assert count_rows(Team) == 0


def test_team_settings_read_and_sent_back_are_accepted(api, alice):
    team = make_team(alice, name="Hikers")
    (read,) = api.as_user(alice).get("/api/teams").get_json()
    url = f"/api/teams/{team.id}/settings"
    unknown_field(api.as_user(alice).put(url, json={"titel": "Walkers"}), "titel")
    response = api.as_user(alice).put(url, json={**read, "title": "Walkers"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["title"] == "Walkers"


def test_account_settings_refuse_a_misspelt_preference_and_accept_their_read_model(api, alice):
    url = "/api/auth/manage/info"
    response = api.as_user(alice).post(url, json={"mapSorce": "openstreetmap"})
    unknown_field(response, "mapSorce")
    read = api.as_user(alice).get(url).get_json()
    response = api.as_user(alice).post(url, json={**read, "mapSource": "openstreetmap"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["mapSource"] == "openstreetmap"


def test_register_with_an_unknown_field_creates_no_account(api):
    response = api.post(
        "/api/auth/register",
        json={
            "email": "ada@example.com",
            "userName": "ada",
            "password": "my-own-long-passphrase-7",
            "confirmPassword": "my-own-long-passphrase-7",
        },
    )
    unknown_field(response, "confirmPassword")
    assert count_rows(User) == 0


def test_field_errors_and_unknown_fields_are_answered_together(api):
    response = api.post(
        "/api/auth/register", json={"email": "not-an-email", "userName": "ada", "pasword": "x"}
    )
    errors = unknown_field(response, "pasword")["errors"]
    assert {"email", "password"} <= set(errors)


# --- trackables ----------------------------------------------------------------------------


def test_an_activation_with_a_misspelt_coordinate_is_refused_and_activates_nothing(api, alice):
    trackable = make_trackable(None, created_by_user_id=alice.id)
    response = api.as_user(alice).post(
        f"/api/trackables/{trackable.id}/activate",
        json={
            "name": "Red kayak paddle",
            "initialJourneyStopLatitud": 47.37,
            "initialJourneyStopLongitude": 8.54,
        },
    )
    unknown_field(response, "initialJourneyStopLatitud")
    db.session.expire_all()
    assert db.session.get(Trackable, trackable.id).owner_user_id is None
    assert count_rows(JourneyStop) == 0


def test_an_activation_echoing_the_trackable_record_is_accepted(api, alice):
    trackable = make_trackable(None, created_by_user_id=alice.id)
    response = api.as_user(alice).post(
        f"/api/trackables/{trackable.id}/activate",
        json={
            "name": "Red kayak paddle",
            "trackableId": str(uuid.uuid4()),
            "publicCode": "LN-XXXXXX",
            "isActivated": False,
            "ownerUserName": "mallory",
            "initialJourneyStopLatitude": 47.37,
            "initialJourneyStopLongitude": 8.54,
        },
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    activated = response.get_json()
    assert activated["trackableId"] == str(trackable.id)
    assert activated["publicCode"] == trackable.public_code
    assert activated["ownerUserId"] == str(alice.id)
    assert count_rows(JourneyStop) == 1


def test_a_trackable_comment_with_an_unknown_field_is_refused(api, alice):
    trackable = make_trackable(alice)
    response = api.as_user(alice).post(
        f"/api/trackables/{trackable.id}/comments", json={"body": "Seen it", "author": "x"}
    )
    unknown_field(response, "author")


# --- images and GPX (multipart forms) ------------------------------------------------------


def _upload(api: Any, user: User, **parts: Any) -> Any:
    return api.as_user(user).post(
        "/api/images/profiles",
        data={"file": (io.BytesIO(sample("JPEG")), "x.jpg"), **parts},
        content_type="multipart/form-data",
    )


def test_an_image_upload_with_an_unknown_part_is_refused_and_stores_nothing(api, alice):
    unknown_field(_upload(api, alice, caption="At the lake"), "caption")
    assert count_rows(ContentImage) == 0


def test_an_image_upload_with_image_record_parts_is_accepted(api, alice):
    response = _upload(api, alice, createdUtc="2026-01-01T00:00:00Z", contentImageId="x")
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["image"]["contentImageId"] != "x"


def test_a_gpx_import_with_an_unknown_part_is_refused(api, alice):
    gpx = b'<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"></gpx>'
    response = api.as_user(alice).post(
        "/api/notes/mine/gpx",
        data={"file": (io.BytesIO(gpx), "w.gpx"), "visibility": "Private", "visibilty": "x"},
        content_type="multipart/form-data",
    )
    unknown_field(response, "visibilty")
    assert count_rows(Note) == 0


# --- sync: records and nested objects ------------------------------------------------------


def _push(api: Any, user: User, *, notes: Any = (), categories: Any = ()) -> Any:
    body = {"deviceId": str(uuid.uuid4()), "notes": list(notes), "categories": list(categories)}
    return api.as_user(user).post(PUSH, json=body)


def test_a_pushed_record_with_an_unknown_field_fails_the_push_naming_it(api, alice):
    good = note_record()
    response = _push(
        api,
        alice,
        notes=[good, note_record(titel="Old oak")],
        categories=[category_record(colour="red")],
    )
    body = unknown_field(response, "notes.1.titel")
    assert body["errors"]["categories.0.colour"] == ["Unknown field."]
    assert count_rows(Note) == 0
    assert count_rows(Category) == 0


def test_pushed_records_may_carry_their_read_model(api, alice):
    record = note_record(
        ownerUserName="mallory", ownerUserId=str(uuid.uuid4()), lastActivityUtc="2026-01-01"
    )
    category = category_record(childCategoryCount=2, children=[])
    response = _push(api, alice, notes=[record], categories=[category])
    assert response.status_code == 200, response.get_data(as_text=True)
    result = response.get_json()
    assert result["appliedNoteIds"] == [record["noteId"]]
    assert result["appliedCategoryIds"] == [category["categoryId"]]
    assert db.session.get(Note, uuid.UUID(record["noteId"])).owner_user_id == alice.id


def test_an_unknown_field_of_a_nested_object_is_named_by_its_path(api, alice):
    area = {"minLatitude": 52.3, "minLongitude": 13.0, "maxLatitude": 52.7, "maxLongitud": 13.8}
    response = api.as_user(alice).post(PULL, json={"lastSyncUtc": None, "publicArea": area})
    body = unknown_field(response, "publicArea.maxLongitud")
    assert body["errors"]["publicArea.maxLongitude"] == ["Missing data for required field."]


# --- query strings -------------------------------------------------------------------------


def test_unknown_query_parameters_are_ignored(api, alice):
    make_note(alice, title="Old oak")
    response = api.as_user(alice).get("/api/notes/mine?_=1700000000000&utm_source=x")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert [note["title"] for note in response.get_json()] == ["Old oak"]
    trackable = make_trackable(alice)
    response = api.get(f"/api/trackables/lookup?code={trackable.public_code}&_=1")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["found"] is True
