"""/Images/... with IMAGE_STORAGE=s3: after the parent's
visibility check, a 302 to a presigned URL of the object that lives IMAGE_PRESIGNED_SECONDS,
against moto's S3 server. Signatures and expiry are checked with `check_presigned`
(S3's check, written out), since moto checks neither; the bytes come from moto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
import requests

from app.extensions import db
from app.models.enums import NoteVisibility
from tests.api.images.s3 import BUCKET, ENDPOINT, S3_SETTINGS, Refused, check_presigned
from tests.conftest import assert_problem
from tests.factories import make_note, make_trackable, make_user
from tests.uploads import upload

JPEG_START = b"\xff\xd8\xff"


@pytest.fixture
def app_overrides():
    return S3_SETTINGS


@pytest.fixture
def alice(app):
    return make_user("alice")


@pytest.fixture
def record(api, bucket, alice):
    return upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]


@pytest.fixture
def note_image(api, bucket, alice):
    note = make_note(alice, visibility=NoteVisibility.PUBLIC)
    image = upload(api.as_user(alice), f"/api/images/notes/{note.id}").get_json()["image"]
    return note, image


def object_bytes(bucket, url: str) -> bytes:
    key = "variants" + url.removeprefix("/Images")
    return bucket.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def test_an_image_url_redirects_to_a_presigned_url_of_its_object(api, record):
    response = api.get(record["mediumUrl"])
    assert response.status_code == 302
    assert response.data == b""
    assert response.headers["Cache-Control"] == "private, no-store"
    location = response.headers["Location"]
    parts = urlsplit(location)
    assert f"{parts.scheme}://{parts.netloc}" == ENDPOINT
    assert parts.path == f"/{BUCKET}/variants/Medium/{record['contentImageId']}-612.jpg"
    params = check_presigned(location, "GET")
    assert params["X-Amz-Expires"] == "30"
    assert params["response-content-type"] == "image/jpeg"
    assert params["response-cache-control"] == "private, max-age=30"


def test_the_presigned_url_serves_the_jpeg_bytes(api, bucket, record):
    location = api.get(record["largeUrl"]).headers["Location"]
    served = requests.get(location, timeout=10)
    assert served.status_code == 200
    assert served.content[:3] == JPEG_START
    assert served.content == object_bytes(bucket, record["largeUrl"])
    assert served.headers["Content-Type"] == "image/jpeg"
    assert served.headers["Cache-Control"] == "private, max-age=30"


@pytest.mark.parametrize(("who", "status"), [("anonymous", 404), ("owner", 302)])
def test_a_parent_made_private_is_refused_at_once_with_no_new_url(
    api, alice, note_image, who, status
):
    note, image = note_image
    assert api.get(image["smallUrl"]).status_code == 302  # public: anyone is sent on
    note.visibility = NoteVisibility.PRIVATE
    db.session.commit()
    response = api.as_user(alice if who == "owner" else None).get(image["smallUrl"])
    assert response.status_code == status
    if status == 404:
        assert_problem(response, 404)
        assert "Location" not in response.headers


def test_a_deleted_parent_is_refused_at_once(api, alice, note_image):
    note, image = note_image
    note.is_deleted = True
    db.session.commit()
    response = api.as_user(alice).get(image["smallUrl"])
    assert_problem(response, 404)
    assert "Location" not in response.headers


def test_a_deleted_image_is_refused_and_its_earlier_url_finds_nothing(api, alice, record):
    earlier = api.get(record["smallUrl"]).headers["Location"]
    assert requests.get(earlier, timeout=10).status_code == 200
    assert api.as_user(alice).delete(f"/api/images/{record['contentImageId']}").status_code == 204
    assert_problem(api.get(record["smallUrl"]), 404)
    # Its object went with it: S3 answers 403 for a missing key to a reader who may not
    # list the bucket (moto too), 404 to one who may.
    assert requests.get(earlier, timeout=10).status_code in (403, 404)


def test_the_presigned_url_expires_after_its_seconds(app, api, record):
    app.config["IMAGE_PRESIGNED_SECONDS"] = 1
    location = api.get(record["smallUrl"]).headers["Location"]
    params = check_presigned(location, "GET")
    assert params["X-Amz-Expires"] == "1"
    assert params["response-cache-control"] == "private, max-age=1"
    signed = datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - signed) < timedelta(seconds=5)
    with pytest.raises(Refused, match="expired"):
        check_presigned(location, "GET", now=signed + timedelta(seconds=2))


def test_a_head_request_redirects_to_a_url_signed_for_head(api, bucket, record):
    response = api.open("HEAD", record["smallUrl"])
    assert response.status_code == 302
    location = response.headers["Location"]
    check_presigned(location, "HEAD")
    with pytest.raises(Refused, match="Signature"):
        check_presigned(location, "GET")  # the method is signed: a GET URL is another
    followed = requests.head(location, timeout=10)
    assert followed.status_code == 200
    assert followed.headers["Content-Type"] == "image/jpeg"
    size = len(object_bytes(bucket, record["smallUrl"]))
    assert followed.headers["Content-Length"] == str(size)


def test_a_client_holding_the_etag_gets_304_and_no_redirect(api, record):
    etag = f'"{record["contentImageId"]}-612"'
    held = api.get(record["mediumUrl"], headers={"If-None-Match": etag})
    assert held.status_code == 304
    assert "Location" not in held.headers
    assert held.headers["ETag"] == etag
    assert held.headers["Cache-Control"] == "private, max-age=30"
    other = api.get(record["mediumUrl"], headers={"If-None-Match": '"other"'})
    assert other.status_code == 302


def test_with_the_redirect_off_the_app_streams_the_bytes(app, api, bucket, record):
    app.config["IMAGE_S3_REDIRECT"] = False
    response = api.get(record["mediumUrl"])
    assert response.status_code == 200
    assert "Location" not in response.headers
    assert response.data == object_bytes(bucket, record["mediumUrl"])
    assert response.headers["ETag"] == f'"{record["contentImageId"]}-612"'
    assert response.headers["Cache-Control"] == "public, max-age=3600"


def test_a_public_endpoint_signs_urls_for_the_host_clients_reach(app, api, bucket, record):
    app.config["IMAGE_S3_PUBLIC_ENDPOINT"] = "https://images.example.org"
    location = api.get(record["mediumUrl"]).headers["Location"]
    assert location.startswith(
        f"https://images.example.org/{BUCKET}/variants/Medium/{record['contentImageId']}-612.jpg?"
    )
    check_presigned(location, "GET")  # the host clients reach is the one signed
    # The app itself still reads the store at its own endpoint.
    app.config["IMAGE_S3_REDIRECT"] = False
    assert api.get(record["mediumUrl"]).data[:3] == JPEG_START


def test_the_api_download_route_keeps_streaming(api, bucket, record):
    response = api.get(f"/api/images/{record['contentImageId']}/medium")
    assert response.status_code == 200
    assert response.data == object_bytes(bucket, record["mediumUrl"])


@pytest.mark.parametrize(
    ("settings", "origin"),
    [
        ({}, ENDPOINT),
        ({"IMAGE_S3_PUBLIC_ENDPOINT": "https://images.example.org"}, "https://images.example.org"),
        ({"IMAGE_S3_REDIRECT": False}, None),
    ],
    # The store's port is picked at random per process: ids that name it would differ
    # between pytest-xdist's workers, which then refuse to run.
    ids=["store", "public-endpoint", "streaming"],
)
def test_pages_allow_images_from_where_image_urls_redirect(app, api, settings, origin):
    app.config.update(settings)
    trackable = make_trackable(make_user())
    policy = api.get(f"/trackable/{trackable.public_code}").headers["Content-Security-Policy"]
    (img_src,) = [part.strip() for part in policy.split(";") if "img-src" in part]
    expected = ["img-src", "'self'", "data:"] + ([origin] if origin else [])
    assert img_src.split() == expected


def test_a_photo_on_the_public_page_loads_from_the_store_in_a_browser(
    app,
    api,
    bucket,
    live_server,
    phone,
):
    from app.models.trackable import TrackableVisibility

    owner = make_user("olga")
    trackable = make_trackable(owner, visibility=TrackableVisibility.ALWAYS_VISIBLE)
    upload(api.as_user(owner), f"/api/images/trackables/{trackable.id}")
    page = phone.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text))
    landed: list[str] = []
    page.on("requestfinished", lambda request: landed.append(request.url))
    page.goto(f"{live_server}/en/trackables/{trackable.public_code}")
    photo = page.locator("#photos img").first
    photo.scroll_into_view_if_needed()  # it loads lazily
    page.wait_for_function(
        "() => { const img = document.querySelector('#photos img'); return img && img.complete; }",
        timeout=30_000,
    )
    assert photo.evaluate("img => img.naturalWidth") > 0, problems
    assert any(url.startswith(f"{ENDPOINT}/{BUCKET}/variants/") for url in landed)
    assert not [text for text in problems if "Content Security Policy" in text]
