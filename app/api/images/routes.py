"""Image routes (contract: Images, rules 1-5; decisions: Images)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import Response, request

from app.api.base import PROBLEM_JSON, Blueprint, ProblemSchema
from app.api.images.schemas import ImageEnvelopeSchema, ImageSchema, ImageUploadFormSchema
from app.auth import current_viewer
from app.errors import ValidationFailed
from app.extensions import db
from app.models.image import ImageTarget
from app.platform.http_files import cached_file
from app.services import images

blp = Blueprint("images", __name__, url_prefix="/api", description="Images")

JPEG_DOC = {
    "responses": {
        "200": {
            "description": "The variant, a JPEG (strong `ETag`; `304` on `If-None-Match`).",
            "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
        },
        "304": {"description": "The client's copy (`If-None-Match`) is current."},
    }
}


def _problem(status: int, title: str, code: str, detail: str) -> dict[str, Any]:
    return {
        "value": {"type": "about:blank", "title": title, "status": status, "detail": detail}
        | {"code": code}
    }


UPLOAD_REFUSED = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The upload is refused and nothing is stored: not an accepted format, "
    "too many bytes or pixels, broken, or, with a `code`: `image_aspect_ratio` (one side "
    "more than 50 times the other), `image_truncated` (the data cannot hold the size its "
    "header claims), `image_memory_limit` (decoding would take more memory than allowed), "
    "`image_limit_reached` (the parent holds 400 images). The limits are settings, "
    "published in `GET /api/system/status` under `limits`.",
    "examples": {
        "image_limit_reached": _problem(
            400,
            "Bad request",
            "image_limit_reached",
            "This holds 400 images, the most allowed: delete one to add another.",
        ),
        "image_truncated": _problem(
            400,
            "Bad request",
            "image_truncated",
            "The image is truncated: 633 bytes cannot hold 7000 x 8000 pixels.",
        ),
    },
}
DAILY_LIMIT = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "The account uploaded its images for the day (500 in 24 hours by "
    "default); `Retry-After` says when the next one fits.",
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "example": _problem(
        429,
        "Too many requests",
        "image_daily_limit_reached",
        "At most 500 images uploaded per account per day. Try again in 3600 seconds.",
    )["value"],
}


def _list(target: ImageTarget, parent_id: UUID) -> Any:
    return images.list_images(current_viewer(), target, parent_id)


def _upload(target: ImageTarget, parent_id: UUID) -> Any:
    parts = request.files.getlist("file") + request.files.getlist("files")
    if len(parts) != 1:
        raise ValidationFailed(
            {"file": ["Send exactly one image, as the multipart part `file`."]},
            detail=f"Expected one file part, got {len(parts)}.",
        )
    image = images.upload_image(current_viewer(), target, parent_id, parts[0].stream)
    try:
        db.session.commit()
    except BaseException:
        images.discard_files(image.id)  # no row: its files go too
        raise
    return {"image": image}


@blp.route("/images/profiles/<uuid:user_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_profile_images(user_id: UUID) -> Any:
    """List a profile's images

    Oldest first; an empty list when the user does not exist.
    """
    return _list(ImageTarget.PROFILE, user_id)


@blp.route("/images/notes/<uuid:note_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_note_images(note_id: UUID) -> Any:
    """List a note's images

    Oldest first; an empty list when the caller may not open the note.
    """
    return _list(ImageTarget.NOTE, note_id)


@blp.route("/images/teams/<uuid:team_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_team_images(team_id: UUID) -> Any:
    """List a team page's images

    Oldest first; an empty list when the caller may not open the team page.
    """
    return _list(ImageTarget.TEAM, team_id)


@blp.route("/images/trackables/<uuid:trackable_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_trackable_images(trackable_id: UUID) -> Any:
    """List a trackable's images

    Oldest first; an empty list when the caller may not open the trackable.
    """
    return _list(ImageTarget.TRACKABLE, trackable_id)


@blp.route("/images/trackable-groups/<uuid:trackable_group_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_trackable_group_images(trackable_group_id: UUID) -> Any:
    """List a trackable group's images

    Oldest first; an empty list when the caller may not open the group.
    """
    return _list(ImageTarget.TRACKABLE_GROUP, trackable_group_id)


@blp.route("/images/<uuid:content_image_id>/<string:variant>", methods=["GET"])
@blp.auth(optional=True)
@blp.doc(**JPEG_DOC)
def download_image(content_image_id: UUID, variant: str) -> Response:
    """Download an image variant

    `variant` is `thumbnail` (64x64), `small` (306), `medium` (612) or `large` (1024).
    404 when the caller may not open the image's parent, or for another variant name.
    Public images may be cached publicly for an hour, others privately.
    """
    found = images.read_variant(current_viewer(), content_image_id, variant)
    return cached_file(
        found.data, mimetype="image/jpeg", etag=found.etag, is_public=found.is_public
    )


@blp.route("/images/profiles", methods=["POST"])
@blp.auth()
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **DAILY_LIMIT)
def upload_profile_image(form: dict) -> Any:
    """Upload an image to my profile

    Multipart, one part `file`. Screened by content (JPEG, PNG, WebP, GIF, HEIC/HEIF), at
    most 20 MB and 60 megapixels, one side at most 50 times the other, data that holds
    the claimed size, decodable within the memory limit (400 with the reason otherwise,
    413 over the request limit), stored only as the four JPEG variants with no metadata.
    A parent holds at most 400 images (400 `image_limit_reached`); an account uploads at
    most 500 a day (429 `image_daily_limit_reached` with `Retry-After`).
    """
    return _upload(ImageTarget.PROFILE, current_viewer().account.id)


@blp.route("/images/notes/<uuid:note_id>", methods=["POST"])
@blp.auth()
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **DAILY_LIMIT)
def upload_note_image(form: dict, note_id: UUID) -> Any:
    """Upload an image to a note

    The note's owner or an admin of its team (403 otherwise; 404 when the note is hidden).
    The upload rules of the profile route apply.
    """
    return _upload(ImageTarget.NOTE, note_id)


@blp.route("/images/teams/<uuid:team_id>", methods=["POST"])
@blp.auth()
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **DAILY_LIMIT)
def upload_team_image(form: dict, team_id: UUID) -> Any:
    """Upload an image to a team page

    A team admin (403 otherwise; 404 when the team page is hidden). The upload rules of
    the profile route apply.
    """
    return _upload(ImageTarget.TEAM, team_id)


@blp.route("/images/trackables/<uuid:trackable_id>", methods=["POST"])
@blp.auth()
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **DAILY_LIMIT)
def upload_trackable_image(form: dict, trackable_id: UUID) -> Any:
    """Upload an image to a trackable

    Whoever manages the trackable (403 otherwise; 404 when it is hidden). The upload
    rules of the profile route apply.
    """
    return _upload(ImageTarget.TRACKABLE, trackable_id)


@blp.route("/images/trackable-groups/<uuid:trackable_group_id>", methods=["POST"])
@blp.auth()
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **DAILY_LIMIT)
def upload_trackable_group_image(form: dict, trackable_group_id: UUID) -> Any:
    """Upload an image to a trackable group

    Whoever controls the group (403 otherwise; 404 when it is hidden). The upload rules
    of the profile route apply.
    """
    return _upload(ImageTarget.TRACKABLE_GROUP, trackable_group_id)


@blp.route("/images/<uuid:content_image_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_image(content_image_id: UUID) -> None:
    """Delete an image

    The same permission as uploading to its parent; the record and its four variants go
    together. A GET on this path is 405.
    """
    images.delete_image(current_viewer(), content_image_id)
    db.session.commit()
