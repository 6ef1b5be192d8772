"""Uploads: screening, formats, orientation, variant sizes, limits and metadata."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageFile

from tests.api.images.samples import jpeg_with_metadata, photo, png_header_only, sample
from tests.conftest import assert_problem
from tests.factories import make_user
from tests.uploads import upload

SIZES = {"thumbnail": 64, "small": 306, "medium": 612, "large": 1024}


@pytest.fixture
def alice(app):
    return make_user("alice")


def variants_of(api, record) -> dict[str, Image.Image]:
    found = {}
    for name in SIZES:
        response = api.get(f"/api/images/{record['contentImageId']}/{name}")
        assert response.status_code == 200
        assert response.mimetype == "image/jpeg"
        found[name] = Image.open(io.BytesIO(response.data))
    return found


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF", "HEIF"])
def test_each_accepted_format_is_stored_as_four_jpeg_variants(api, alice, fmt):
    response = upload(api.as_user(alice), "/api/images/profiles", sample(fmt, 1600, 1200))
    assert response.status_code == 201, response.get_json()
    record = response.get_json()["image"]
    assert record["targetType"] == 0
    assert record["userId"] == str(alice.id)
    assert (record["originalWidth"], record["originalHeight"]) == (1600, 1200)
    for name, image in variants_of(api, record).items():
        assert image.format == "JPEG"
        expected = (64, 64) if name == "thumbnail" else (SIZES[name], round(SIZES[name] * 3 / 4))
        assert image.size == expected


def test_record_urls_name_the_website_files(api, alice):
    record = upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]
    guid = record["contentImageId"]
    assert record["thumbnailUrl"] == f"/Images/Thumbnail/{guid}-64.jpg"
    assert record["smallUrl"] == f"/Images/Small/{guid}-306.jpg"
    assert record["mediumUrl"] == f"/Images/Medium/{guid}-612.jpg"
    assert record["largeUrl"] == f"/Images/Large/{guid}-1024.jpg"
    assert api.get(record["mediumUrl"]).status_code == 200


def test_a_gif_is_read_from_its_first_frame(api, alice):
    record = upload(api.as_user(alice), "/api/images/profiles", sample("GIF")).get_json()["image"]
    large = variants_of(api, record)["large"].convert("RGB")
    red, _green, blue = large.getpixel((10, 10))
    assert red > 200
    assert blue < 60


# Where the source's top-left (red) corner ends up once each EXIF orientation is applied.
ORIENTED_CORNER = {1: "tl", 2: "tr", 3: "br", 4: "bl", 5: "tl", 6: "tr", 7: "br", 8: "bl"}


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied(api, alice, orientation):
    data = jpeg_with_metadata(800, 400, orientation=orientation)
    record = upload(api.as_user(alice), "/api/images/profiles", data).get_json()["image"]
    turned = orientation >= 5
    assert (record["originalWidth"], record["originalHeight"]) == (
        (400, 800) if turned else (800, 400)
    )
    large = variants_of(api, record)["large"].convert("RGB")
    width, height = large.size
    assert (width < height) is turned
    corners = {
        "tl": (5, 5),
        "tr": (width - 6, 5),
        "bl": (5, height - 6),
        "br": (width - 6, height - 6),
    }
    red = [name for name, xy in corners.items() if large.getpixel(xy)[1] < 80]
    assert red == [ORIENTED_CORNER[orientation]]


def test_every_variant_is_free_of_metadata(api, alice):
    record = upload(api.as_user(alice), "/api/images/profiles", jpeg_with_metadata()).get_json()
    for image in variants_of(api, record["image"]).values():
        assert not image.getexif()
        assert "exif" not in image.info
        assert "xmp" not in image.info
        assert "icc_profile" not in image.info
        assert "comment" not in image.info
    raw = api.get(f"/api/images/{record['image']['contentImageId']}/large").data
    assert b"SecretCam" not in raw
    assert b"secret-photographer" not in raw
    assert b"Exif" not in raw


def test_variants_are_progressive_4_2_0_jpegs(api, alice):
    record = upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]
    large = variants_of(api, record)["large"]
    assert large.info.get("progressive") or large.info.get("progression")
    assert large.layer[0][1:3] == (2, 2)  # luma sampled 2x2: chroma at 4:2:0


@pytest.mark.parametrize(
    ("width", "height"),
    [(40, 30), (200, 150), (500, 375), (900, 675), (2000, 1500)],
)
def test_variants_are_never_enlarged_but_the_thumbnail_is_always_64(api, alice, width, height):
    data = sample("PNG", width, height)
    record = upload(api.as_user(alice), "/api/images/profiles", data).get_json()["image"]
    for name, image in variants_of(api, record).items():
        if name == "thumbnail":
            assert image.size == (64, 64)
        else:
            longest = min(SIZES[name], width)
            assert image.size == (longest, round(longest * height / width))


def test_the_thumbnail_is_the_centre_square(api, alice):
    wide = Image.new("RGB", (900, 300), (0, 0, 255))
    wide.paste((0, 255, 0), (300, 0, 600, 300))  # green centre third
    data = io.BytesIO()
    wide.save(data, "PNG")
    record = upload(api.as_user(alice), "/api/images/profiles", data.getvalue()).get_json()
    thumbnail = variants_of(api, record["image"])["thumbnail"].convert("RGB")
    for xy in ((2, 2), (61, 61), (32, 32)):
        _red, green, blue = thumbnail.getpixel(xy)
        assert green > 200
        assert blue < 60


def test_a_file_lying_about_its_type_is_refused(api, alice, image_files):
    response = upload(api.as_user(alice), "/api/images/profiles", b"%PDF-1.7 not an image" * 50)
    body = assert_problem(response, 400)
    assert "JPEG, PNG, WebP, GIF or HEIC" in body["detail"]
    assert image_files() == []


def test_a_text_file_named_jpg_is_refused(api, alice):
    response = upload(api.as_user(alice), "/api/images/profiles", b"hello", name="photo.jpg")
    assert_problem(response, 400)


def test_a_truncated_file_is_refused_and_nothing_is_stored(api, alice, image_files):
    data = sample("JPEG", 1200, 900)
    response = upload(api.as_user(alice), "/api/images/profiles", data[: len(data) // 2])
    body = assert_problem(response, 400)
    assert "truncated or broken" in body["detail"]
    assert image_files() == []
    assert api.get(f"/api/images/profiles/{alice.id}").get_json() == []


def test_a_png_with_a_broken_body_is_refused(api, alice):
    response = upload(api.as_user(alice), "/api/images/profiles", png_header_only(100, 100))
    assert_problem(response, 400)


def test_more_than_60_megapixels_is_refused_before_decoding(api, alice, monkeypatch):
    def no_decoding(self, *args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", no_decoding)
    response = upload(api.as_user(alice), "/api/images/profiles", png_header_only(151, 397351))
    body = assert_problem(response, 400)  # 60,000,001 pixels
    assert "more than 60,000,000 pixels" in body["detail"]


def test_a_decompression_bomb_is_refused_before_decoding(api, alice, monkeypatch):
    def no_decoding(self, *args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", no_decoding)
    response = upload(api.as_user(alice), "/api/images/profiles", png_header_only(50000, 50000))
    assert "pixels" in assert_problem(response, 400)["detail"]


def test_the_pixel_limit_is_inclusive(app, api, alice):
    app.config["IMAGE_MAX_PIXELS"] = 100 * 100
    assert (
        upload(api.as_user(alice), "/api/images/profiles", sample("PNG", 100, 100)).status_code
        == 201
    )
    response = upload(api.as_user(alice), "/api/images/profiles", sample("PNG", 100, 101))
    assert_problem(response, 400)


def test_a_file_over_the_image_size_limit_is_refused_with_400(app, api, alice, image_files):
    data = sample("PNG", 300, 300)
    app.config["IMAGE_MAX_BYTES"] = len(data) - 1
    response = upload(api.as_user(alice), "/api/images/profiles", data)
    assert "larger than" in assert_problem(response, 400)["detail"]
    assert image_files() == []


def test_a_body_over_the_request_limit_is_413_naming_the_limit(app, api, alice):
    app.config["MAX_CONTENT_LENGTH"] = 10_000
    response = upload(api.as_user(alice), "/api/images/profiles", b"\xff\xd8\xff" + bytes(20_000))
    assert assert_problem(response, 413)["detail"] == (
        "The request body is larger than this server accepts (10000 bytes)."
    )


def test_a_form_of_too_many_parts_is_413_naming_the_limit(app, api, alice):
    """1,500 small parts are far from the size limit: the answer says what is wrong."""
    parts = {f"field{number}": "x" for number in range(1_499)}
    parts["file"] = (io.BytesIO(sample("PNG", 100, 100)), "photo.png")
    response = api.as_user(alice).post(
        "/api/images/profiles", data=parts, content_type="multipart/form-data"
    )
    assert assert_problem(response, 413)["detail"] == (
        "The form has more than 1000 parts; send at most 1000."
    )


def test_a_form_text_field_over_the_field_limit_is_413_naming_the_limit(app, api, alice):
    app.config["MAX_FORM_MEMORY_SIZE"] = 1_000
    response = api.as_user(alice).post(
        "/api/images/profiles",
        data={"note": "x" * 2_000, "file": (io.BytesIO(sample("PNG", 100, 100)), "photo.png")},
        content_type="multipart/form-data",
    )
    assert assert_problem(response, 413)["detail"] == (
        "A text field of the form is larger than 1000 bytes."
    )


def test_the_files_field_with_one_part_is_accepted(api, alice):
    response = upload(api.as_user(alice), "/api/images/profiles", field="files")
    assert response.status_code == 201


def test_two_file_parts_are_refused(api, alice, image_files):
    response = api.as_user(alice).post(
        "/api/images/profiles",
        data={
            "file": [(io.BytesIO(sample("JPEG")), "a.jpg"), (io.BytesIO(sample("JPEG")), "b.jpg")]
        },
        content_type="multipart/form-data",
    )
    assert_problem(response, 400)
    assert image_files() == []


def test_an_upload_without_a_file_is_refused(api, alice):
    # A form with a text part only: one of the image record's fields, which the form
    # tolerates (an unknown part would be refused as such).
    response = api.as_user(alice).post(
        "/api/images/profiles", data={"createdUtc": "x"}, content_type="multipart/form-data"
    )
    assert list(assert_problem(response, 400)["errors"]) == ["file"]


def test_upload_needs_a_token(api):
    response = upload(api, "/api/images/profiles")
    assert_problem(response, 401)


def test_a_photo_larger_than_the_large_variant_is_drafted_yet_full_quality(api, alice):
    big = photo(4000, 3000)
    data = io.BytesIO()
    big.save(data, "JPEG", quality=90)
    record = upload(api.as_user(alice), "/api/images/profiles", data.getvalue()).get_json()
    assert (record["image"]["originalWidth"], record["image"]["originalHeight"]) == (4000, 3000)
    assert variants_of(api, record["image"])["large"].size == (1024, 768)
