"""/Images/... with local storage behind nginx: with
IMAGE_ACCEL_REDIRECT_PREFIX set, after the visibility check an empty answer whose
`X-Accel-Redirect` names the file under nginx's internal location; without it, the bytes.
The header is built from the stored image's id and the variant table only."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.extensions import db
from app.models.enums import NoteVisibility
from app.storage.images import internal_uri
from tests.conftest import assert_problem
from tests.factories import make_note, make_user
from tests.uploads import upload

PREFIX = "/_protected_images/"


@pytest.fixture
def app_overrides():
    return {"IMAGE_ACCEL_REDIRECT_PREFIX": PREFIX}


@pytest.fixture
def alice(app):
    return make_user("alice")


@pytest.fixture
def record(api, alice):
    return upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]


def test_an_image_url_answers_with_the_internal_location_of_its_file(app, api, record):
    response = api.get(record["mediumUrl"])
    assert response.status_code == 200
    assert response.data == b""
    guid = record["contentImageId"]
    assert response.headers["X-Accel-Redirect"] == f"{PREFIX}Medium/{guid}-612.jpg"
    assert response.mimetype == "image/jpeg"
    assert response.headers["Cache-Control"] == "public, max-age=3600"
    # nginx's alias of the prefix is IMAGE_ROOT: the header names the stored file.
    stored = Path(app.config["IMAGE_ROOT"]) / response.headers["X-Accel-Redirect"][len(PREFIX) :]
    assert stored.read_bytes()[:3] == b"\xff\xd8\xff"


def test_without_the_prefix_the_app_streams_the_bytes(app, api, record):
    app.config["IMAGE_ACCEL_REDIRECT_PREFIX"] = ""
    response = api.get(record["mediumUrl"])
    assert "X-Accel-Redirect" not in response.headers
    assert response.data[:3] == b"\xff\xd8\xff"
    assert response.headers["ETag"] == f'"{record["contentImageId"]}-612"'


def test_a_hidden_parent_gets_no_internal_location(api, alice):
    note = make_note(alice, visibility=NoteVisibility.PUBLIC)
    image = upload(api.as_user(alice), f"/api/images/notes/{note.id}").get_json()["image"]
    assert "X-Accel-Redirect" in api.get(image["smallUrl"]).headers
    note.visibility = NoteVisibility.PRIVATE
    db.session.commit()
    refused = api.get(image["smallUrl"])
    assert_problem(refused, 404)
    assert "X-Accel-Redirect" not in refused.headers
    owner = api.as_user(alice).get(image["smallUrl"])
    assert "X-Accel-Redirect" in owner.headers
    assert owner.headers["Cache-Control"] == "private, max-age=3600"


def test_head_answers_with_the_internal_location_too(api, record):
    response = api.open("HEAD", record["smallUrl"])
    assert response.status_code == 200
    assert response.headers["X-Accel-Redirect"].startswith(PREFIX + "Small/")


def test_a_client_holding_the_etag_gets_304_without_nginx(api, record):
    etag = f'"{record["contentImageId"]}-306"'
    held = api.get(record["smallUrl"], headers={"If-None-Match": etag})
    assert held.status_code == 304
    assert "X-Accel-Redirect" not in held.headers
    # Any other tag (nginx's own, of the file it sent) is nginx's to answer.
    other = api.get(record["smallUrl"], headers={"If-None-Match": '"5f1c-2a0"'})
    assert other.headers["X-Accel-Redirect"].startswith(PREFIX)


@pytest.mark.parametrize(
    "spelling",
    [
        "{guid}",  # as the records give it
        "{upper}",
        "{{{guid}}}",  # UUID() also takes braces,
        "urn:uuid:{guid}",  # a URN
        "{hex}",  # and bare hex: the header still names the stored key
    ],
)
def test_the_header_is_built_from_the_stored_key_only(api, record, spelling):
    guid = record["contentImageId"]
    name = spelling.format(guid=guid, upper=guid.upper(), hex=guid.replace("-", ""))
    response = api.get(f"/Images/Medium/{name}-612.jpg")
    assert response.headers["X-Accel-Redirect"] == f"{PREFIX}Medium/{guid}-612.jpg"


@pytest.mark.parametrize(
    "path",
    [
        "/Images/Medium/..%2F..%2Fetc%2Fpasswd-612.jpg",
        "/Images/Medium/{guid}%2F..%2F..-612.jpg",
        "/Images/..%2FMedium/{guid}-612.jpg",
        "/Images/Medium/../{guid}-612.jpg",
        "/Images/Medium/{guid}-612.jpg%00",
    ],
)
def test_traversal_attempts_are_404_with_no_header(api, record, path):
    response = api.get(path.format(guid=record["contentImageId"]))
    assert response.status_code == 404
    assert "X-Accel-Redirect" not in response.headers


@pytest.mark.parametrize(
    "key",
    [
        "../etc/passwd",
        "Medium/../../etc/passwd-612.jpg",
        "Medium/not-a-guid-612.jpg",
        "Medium/0b0e4a8c-3b1f-4f4e-9d5a-2b8f6c1d7e90-1024.jpg",  # size of another variant
        "Other/0b0e4a8c-3b1f-4f4e-9d5a-2b8f6c1d7e90-612.jpg",
    ],
)
def test_only_a_variant_key_becomes_an_internal_uri(key):
    with pytest.raises(ValueError, match="not a variant key"):
        internal_uri(PREFIX, key)


def test_an_internal_uri_takes_the_prefix_with_or_without_slashes():
    key = "Small/0b0e4a8c-3b1f-4f4e-9d5a-2b8f6c1d7e90-306.jpg"
    for prefix in ("/_protected_images/", "/_protected_images", "_protected_images/"):
        assert internal_uri(prefix, key) == f"/_protected_images/{key}"


def test_the_api_download_route_keeps_streaming(api, record):
    response = api.get(f"/api/images/{record['contentImageId']}/small")
    assert "X-Accel-Redirect" not in response.headers
    assert response.data[:3] == b"\xff\xd8\xff"
