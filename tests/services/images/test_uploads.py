"""Images through services.images, without HTTP: a real JPEG uploaded to a profile gives
four JPEG variants of the documented sizes; a private note's image is listed and served
to its owner only; an upload that is not an image, or to someone else's parent, is
refused; a deleted image is gone from the list and its files from the store."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from app.auth import build_viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.image import ImageTarget
from app.services import images
from app.storage.images import image_keys
from tests.factories import make_note, make_user

SIZES = {"thumbnail": (64, 64), "small": (306, 204), "medium": (612, 408), "large": (900, 600)}


def jpeg(width=900, height=600):
    """A small real JPEG: a gradient, so the encoder has something to do."""
    picture = Image.new("RGB", (width, height))
    picture.putdata(
        [(x * 255 // width, y * 255 // height, 128) for y in range(height) for x in range(width)]
    )
    data = io.BytesIO()
    picture.save(data, "JPEG", quality=90)
    data.seek(0)
    return data


def test_an_upload_is_stored_as_four_jpeg_variants(app):
    owner = make_user()
    viewer = build_viewer(owner)

    image = images.upload_image(viewer, ImageTarget.PROFILE, owner.id, jpeg())
    db.session.commit()

    assert (image.original_width, image.original_height) == (900, 600)
    assert [one.id for one in images.list_images(viewer, ImageTarget.PROFILE, owner.id)] == [
        image.id
    ]
    for name, size in SIZES.items():
        variant = images.read_variant(build_viewer(None), image.id, name)
        decoded = Image.open(io.BytesIO(variant.data))
        assert decoded.format == "JPEG"
        assert decoded.size == size, name
        assert variant.is_public  # a profile is public
    with pytest.raises(NotFound) as unknown:
        images.read_variant(viewer, image.id, "huge")
    assert unknown.value.code == "image_variant_not_found"


def test_a_private_notes_image_is_its_owners_alone(app):
    owner, stranger = make_user(), make_user()
    note = make_note(owner, visibility=NoteVisibility.PRIVATE)
    image = images.upload_image(build_viewer(owner), ImageTarget.NOTE, note.id, jpeg(120, 80))
    db.session.commit()

    assert images.list_images(build_viewer(stranger), ImageTarget.NOTE, note.id) == []
    assert images.list_images(build_viewer(None), ImageTarget.NOTE, note.id) == []
    for viewer in (build_viewer(stranger), build_viewer(None)):
        with pytest.raises(NotFound) as hidden:
            images.read_variant(viewer, image.id, "small")
        assert hidden.value.code == "image_not_found"
    mine = images.read_variant(build_viewer(owner), image.id, "small")
    assert mine.is_public is False
    # never enlarged: the small variant of a 120 x 80 image keeps its size
    assert Image.open(io.BytesIO(mine.data)).size == (120, 80)


def test_bytes_that_are_not_an_image_are_refused(app):
    owner = make_user()

    with pytest.raises(images.ImageRejected) as refused:
        images.upload_image(
            build_viewer(owner),
            ImageTarget.PROFILE,
            owner.id,
            io.BytesIO(b"%PDF-1.4 not a picture"),
        )

    assert refused.value.status == 400
    assert images.list_images(build_viewer(owner), ImageTarget.PROFILE, owner.id) == []


def test_only_whoever_manages_the_parent_uploads(app):
    owner, stranger = make_user(), make_user()
    note = make_note(owner, visibility=NoteVisibility.PUBLIC)

    with pytest.raises(Forbidden) as profile:
        images.upload_image(build_viewer(stranger), ImageTarget.PROFILE, owner.id, jpeg(80, 60))
    with pytest.raises(Forbidden) as public_note:
        images.upload_image(build_viewer(stranger), ImageTarget.NOTE, note.id, jpeg(80, 60))

    assert profile.value.code == public_note.value.code == "image_change_forbidden"


def test_a_deleted_image_leaves_the_list_and_the_store(app):
    owner = make_user()
    viewer = build_viewer(owner)
    image = images.upload_image(viewer, ImageTarget.PROFILE, owner.id, jpeg(80, 60))
    db.session.commit()
    image_id = image.id

    with pytest.raises(Forbidden):
        images.delete_image(build_viewer(make_user()), image_id)
    images.delete_image(viewer, image_id)
    db.session.commit()

    assert images.list_images(viewer, ImageTarget.PROFILE, owner.id) == []
    with pytest.raises(NotFound):
        images.read_variant(viewer, image_id, "thumbnail")
    store = images.image_store(app.config)
    assert [store.read(key) for key in image_keys(image_id)] == [None] * 4
