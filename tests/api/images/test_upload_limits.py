"""Upload limits against abuse: small files that claim huge images (aspect ratio,
data that cannot hold the claimed size, memory decoding would take), and the counts of
images per parent and per account per day."""

from __future__ import annotations

from datetime import timedelta

import pytest
from PIL import ImageFile
from sqlalchemy import func, select

from app.extensions import db
from app.models.base import utcnow
from app.models.budget import BudgetSpend
from app.models.image import ContentImage
from tests.api.images.samples import flat_png, jpeg_claiming, sample
from tests.conftest import assert_problem
from tests.factories import make_note, make_user
from tests.uploads import upload

PROFILE = "/api/images/profiles"


@pytest.fixture
def alice(app):
    return make_user("alice")


@pytest.fixture
def no_decoding(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)


def small_jpeg() -> bytes:
    return sample("JPEG", 120, 90)


def image_count() -> int:
    return db.session.scalar(select(func.count()).select_from(ContentImage)) or 0


# --- small files, huge images --------------------------------------------------------------


@pytest.mark.slow
def test_a_one_pixel_wide_59_megapixel_png_is_refused_before_decoding(
    api, alice, image_files, no_decoding
):
    data = flat_png(1, 59_000_000)
    assert len(data) < 200_000  # small on disk, inside the 60-megapixel limit
    body = assert_problem(upload(api.as_user(alice), PROFILE, data), 400, code="image_aspect_ratio")
    assert "1 x 59000000" in body["detail"]
    assert image_files() == []


@pytest.mark.slow
def test_the_memory_bound_alone_refuses_the_59_megapixel_line(app, api, alice, no_decoding):
    app.config["IMAGE_MAX_ASPECT_RATIO"] = 1e9  # only the memory estimate is left to refuse it
    response = upload(api.as_user(alice), PROFILE, flat_png(1, 59_000_000))
    body = assert_problem(response, 400, code="image_memory_limit")
    assert "MiB" in body["detail"]


@pytest.mark.parametrize(("width", "height", "status"), [(500, 10, 201), (10, 501, 400)])
def test_the_aspect_ratio_limit_is_inclusive(app, api, alice, width, height, status):
    response = upload(api.as_user(alice), PROFILE, sample("PNG", width, height))
    assert response.status_code == status
    if status == 400:
        assert_problem(response, 400, code="image_aspect_ratio")


@pytest.mark.parametrize("progressive", [False, True])
def test_a_tiny_jpeg_claiming_7000_by_8000_is_refused_as_truncated(
    api, alice, image_files, progressive
):
    data = jpeg_claiming(7000, 8000, progressive=progressive)
    assert len(data) < 1000
    response = upload(api.as_user(alice), PROFILE, data)
    body = assert_problem(response, 400, code="image_truncated")
    assert "7000 x 8000" in body["detail"]
    assert image_files() == []
    assert image_count() == 0


def test_a_png_whose_data_cannot_hold_its_size_is_refused_before_decoding(api, alice, no_decoding):
    data = flat_png(4000, 4000, colour_type=2, channels=3)  # deflates about 1000 to 1
    cut = data[:1000] + data[-12:]  # an IDAT chunk's length now points past the end
    response = upload(api.as_user(alice), PROFILE, cut)
    assert_problem(response, 400, code="image_truncated")


def test_truncated_data_is_refused_even_when_pillow_was_told_to_accept_it(api, alice, monkeypatch):
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    data = sample("JPEG", 1200, 900)
    response = upload(api.as_user(alice), PROFILE, data[: len(data) // 2])
    assert "truncated" in assert_problem(response, 400)["detail"]


def test_an_image_needing_more_memory_than_allowed_is_refused_before_decoding(
    app, api, alice, no_decoding
):
    app.config["IMAGE_MAX_DECODE_BYTES"] = 4 * 1024 * 1024
    response = upload(api.as_user(alice), PROFILE, sample("PNG", 1200, 900))  # RGBA: 4 MB each
    body = assert_problem(response, 400, code="image_memory_limit")
    assert "at most 4 MiB" in body["detail"]


@pytest.mark.parametrize(
    ("fmt", "width", "height"),
    [("JPEG", 4000, 3000), ("PNG", 2000, 1500), ("WEBP", 1600, 1200), ("HEIF", 1200, 900)],
)
def test_normal_photos_are_still_accepted(api, alice, fmt, width, height):
    response = upload(api.as_user(alice), PROFILE, sample(fmt, width, height))
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["image"]["originalWidth"] == width


def test_a_large_progressive_jpeg_is_accepted(api, alice):
    from tests.api.images.samples import encode, photo

    data = encode(photo(5000, 4000), "JPEG", progressive=True)
    assert upload(api.as_user(alice), PROFILE, data).status_code == 201


# --- images per parent ------------------------------------------------------------------


def test_a_full_parent_refuses_the_next_image_with_image_limit_reached(
    app, api, alice, image_files
):
    app.config["IMAGES_PER_PARENT_MAX"] = 2
    note = make_note(alice)
    url = f"/api/images/notes/{note.id}"
    client = api.as_user(alice)
    first = upload(client, url, small_jpeg()).get_json()["image"]
    assert upload(client, url, small_jpeg()).status_code == 201
    stored = image_files()
    body = assert_problem(upload(client, url, small_jpeg()), 400, code="image_limit_reached")
    assert "2 images" in body["detail"]
    assert image_files() == stored  # the refused upload's files are gone
    assert upload(client, PROFILE, small_jpeg()).status_code == 201  # another parent
    assert client.delete(f"/api/images/{first['contentImageId']}").status_code == 204
    assert upload(client, url, small_jpeg()).status_code == 201  # a slot again


# --- images per account per day ---------------------------------------------------------


def test_the_daily_upload_budget_is_429_with_retry_after(app, api, alice, image_files):
    app.config["IMAGES_PER_USER_PER_DAY"] = 2
    client = api.as_user(alice)
    first = upload(client, PROFILE, small_jpeg()).get_json()["image"]
    assert upload(client, PROFILE, small_jpeg()).status_code == 201
    stored = image_files()
    response = upload(client, PROFILE, small_jpeg())
    body = assert_problem(response, 429, code="image_daily_limit_reached")
    assert 86_000 < int(response.headers["Retry-After"]) <= 86_400
    assert "2 images uploaded per account per day" in body["detail"]
    assert image_files() == stored
    # Deleting gives no budget back: the work of making the image was done.
    assert client.delete(f"/api/images/{first['contentImageId']}").status_code == 204
    assert_problem(upload(client, PROFILE, small_jpeg()), 429, code="image_daily_limit_reached")
    # Another account has its own budget.
    assert upload(api.as_user(make_user("bob")), PROFILE, small_jpeg()).status_code == 201


def test_uploads_older_than_a_day_leave_the_budget(app, api, alice):
    app.config["IMAGES_PER_USER_PER_DAY"] = 1
    db.session.add(
        BudgetSpend(
            budget="image-upload",
            subject=str(alice.id),
            amount=1,
            spent_utc=utcnow() - timedelta(hours=24, minutes=1),
        )
    )
    db.session.commit()
    assert upload(api.as_user(alice), PROFILE, small_jpeg()).status_code == 201
    spends = db.session.scalars(
        select(BudgetSpend.spent_utc).where(BudgetSpend.subject == str(alice.id))
    )
    assert len(list(spends)) == 1  # the expired use was pruned


def test_retry_after_waits_for_the_oldest_use_to_leave_the_window(app, api, alice):
    app.config["IMAGES_PER_USER_PER_DAY"] = 1
    db.session.add(
        BudgetSpend(
            budget="image-upload",
            subject=str(alice.id),
            amount=1,
            spent_utc=utcnow() - timedelta(hours=23),
        )
    )
    db.session.commit()
    response = upload(api.as_user(alice), PROFILE, small_jpeg())
    assert_problem(response, 429, code="image_daily_limit_reached")
    assert 3500 <= int(response.headers["Retry-After"]) <= 3600


def test_the_status_publishes_the_image_and_creation_limits(app, api):
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["imageMaxDecodeBytes"] == app.config["IMAGE_MAX_DECODE_BYTES"]
    assert limits["imageMaxAspectRatio"] == app.config["IMAGE_MAX_ASPECT_RATIO"] == 50
    assert limits["imagesPerParentMax"] == app.config["IMAGES_PER_PARENT_MAX"] == 400
    assert limits["imageUploads"] == {
        "attempts": app.config["IMAGES_PER_USER_PER_DAY"],
        "windowMinutes": 24 * 60,
    }
    assert limits["trackableCreations"] == {
        "attempts": app.config["TRACKABLES_PER_USER_PER_HOUR"],
        "windowMinutes": 60,
    }
    assert limits["trackableCreations"]["attempts"] >= limits["trackablesPerGroupMax"]


def test_the_upload_routes_document_their_400_and_429(api):
    paths = api.get("/api/openapi.json").get_json()["paths"]
    operation = paths["/api/images/notes/{noteId}"]["post"]
    refused = operation["responses"]["400"]["content"]["application/problem+json"]
    assert "image_limit_reached" in refused["examples"]
    too_many = operation["responses"]["429"]
    assert "Retry-After" in too_many["headers"]
    assert "image_daily_limit_reached" in str(too_many)
