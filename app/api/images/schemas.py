"""Image shapes (contract: Image (read shape)) and the upload form."""

from __future__ import annotations

from typing import Any

from flask_smorest.fields import Upload
from marshmallow import fields, pre_dump, validate

from app.api.base import Guid, RequestSchema, Schema, UtcDateTime
from app.models.image import ContentImage, ImageTarget
from app.storage.images import variant_key
from app.storage.imaging import VARIANTS

PARENT_FIELDS = {
    ImageTarget.PROFILE: "user_id",
    ImageTarget.NOTE: "note_id",
    ImageTarget.TEAM: "team_id",
    ImageTarget.TRACKABLE: "trackable_id",
    ImageTarget.TRACKABLE_GROUP: "trackable_group_id",
    ImageTarget.TRACKABLE_COMMENT: "trackable_comment_id",
    ImageTarget.JOURNEY_STOP: "journey_stop_id",
}


def _parent(name: str) -> Guid:
    return Guid(metadata={"description": f"Present when the parent is a {name}."})


class ImageSchema(Schema):
    content_image_id = Guid(required=True)
    target_type = fields.Integer(
        required=True,
        validate=validate.OneOf([int(target) for target in ImageTarget]),
        metadata={
            "description": "0 profile, 1 note, 2 team, 3 trackable, 4 trackable group, "
            "5 trackable comment, 6 journey stop (5 and 6: a finder's photo)."
        },
    )
    user_id = _parent("profile")
    note_id = _parent("note")
    team_id = _parent("team")
    trackable_id = _parent("trackable")
    trackable_group_id = _parent("trackable group")
    trackable_comment_id = _parent("trackable comment")
    journey_stop_id = _parent("journey stop")
    original_width = fields.Integer(
        required=True,
        metadata={"description": "The uploaded source's width, after its orientation."},
    )
    original_height = fields.Integer(required=True)
    created_utc = UtcDateTime(required=True)
    thumbnail_url = fields.String(
        required=True, metadata={"description": "/Images/Thumbnail/{id}-64.jpg"}
    )
    small_url = fields.String(required=True)
    medium_url = fields.String(required=True)
    large_url = fields.String(required=True)

    @pre_dump
    def record(self, image: ContentImage, **_: Any) -> dict[str, Any]:
        values: dict[str, Any] = {
            "content_image_id": image.id,
            "target_type": image.target_type,
            PARENT_FIELDS[image.target]: image.parent_id,
            "original_width": image.original_width,
            "original_height": image.original_height,
            "created_utc": image.created_utc,
        }
        for variant in VARIANTS:
            values[f"{variant.name}_url"] = "/Images/" + variant_key(image.id, variant)
        return values


class ImageEnvelopeSchema(Schema):
    image = fields.Nested(ImageSchema, required=True)


class ImageUploadFormSchema(RequestSchema):
    """Multipart: one file part named `file` (or `files`, holding exactly one file)."""

    read_models = (ImageSchema,)

    file = Upload(
        metadata={
            "description": "JPEG, PNG, WebP, GIF (first frame) or HEIC/HEIF; at most 20 MB "
            "and 60 megapixels."
        }
    )
    files = Upload(metadata={"description": "Accepted instead of `file`: exactly one part."})
