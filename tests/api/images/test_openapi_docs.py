"""The OpenAPI document describes the sixteen image routes: uploads with their multipart
body, the download as image/jpeg, the record shape with every parent kind."""

from __future__ import annotations

import pytest

PARENTS = [
    "profiles",
    "notes",
    "teams",
    "trackables",
    "trackable-groups",
    "trackable-comments",
    "journey-stops",
]
PARAMS = {
    "profiles": "userId",
    "notes": "noteId",
    "teams": "teamId",
    "trackables": "trackableId",
    "trackable-groups": "trackableGroupId",
    "trackable-comments": "commentId",
    "journey-stops": "journeyStopId",
}


@pytest.fixture
def document(api):
    return api.get("/api/openapi.json").get_json()


@pytest.fixture
def paths(document):
    return document["paths"]


@pytest.mark.parametrize("parent", PARENTS)
def test_each_parent_has_a_documented_list_and_upload(document, paths, parent):
    listed = paths[f"/api/images/{parent}/{{{PARAMS[parent]}}}"]["get"]
    assert listed["summary"]
    upload_path = (
        "/api/images/profiles"
        if parent == "profiles"
        else f"/api/images/{parent}/{{{PARAMS[parent]}}}"
    )
    upload = paths[upload_path]["post"]
    body = upload["requestBody"]["content"]["multipart/form-data"]["schema"]
    if "$ref" in body:
        body = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    assert body["properties"]["file"]["format"] == "binary"
    assert "201" in upload["responses"]


def test_the_download_is_documented_as_jpeg(paths):
    operation = paths["/api/images/{contentImageId}/{variant}"]["get"]
    assert "image/jpeg" in operation["responses"]["200"]["content"]
    assert "304" in operation["responses"]


def test_delete_is_documented(paths):
    assert paths["/api/images/{contentImageId}"]["delete"]["summary"]


def test_the_upload_form_names_file_and_files(api):
    document = api.get("/api/openapi.json").get_json()
    schemas = document["components"]["schemas"]
    form = next(value for name, value in schemas.items() if name.startswith("ImageUploadForm"))
    assert set(form["properties"]) == {"file", "files"}
    assert form["properties"]["file"]["format"] == "binary"


def test_the_record_lists_every_target_type_and_parent_field(document):
    schemas = document["components"]["schemas"]
    record = schemas["Image"]
    assert record["properties"]["targetType"]["enum"] == [0, 1, 2, 3, 4, 5, 6]
    assert (
        "5 trackable comment, 6 journey stop" in record["properties"]["targetType"]["description"]
    )
    assert {"trackableCommentId", "journeyStopId"} <= set(record["properties"])


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/images/trackable-comments/{commentId}", "post"),
        ("/api/images/journey-stops/{journeyStopId}", "post"),
        ("/api/images/{contentImageId}", "delete"),
    ],
)
def test_a_finders_photo_routes_take_anonymous_callers(paths, path, method):
    operation = paths[path][method]
    assert {} in operation["security"]  # anonymous or bearer
    if method == "post":
        assert "finder_photo_limit_reached" in str(operation["responses"]["429"])


def test_other_uploads_still_need_a_bearer_token(paths):
    assert {} not in paths["/api/images/trackables/{trackableId}"]["post"]["security"]
