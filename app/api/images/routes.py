"""Image routes (contract: Images, rules 1-5; decisions: Images), finders' photos (images
of a trackable comment or journey stop, targetType 5 and 6) included: same upload, same
pipeline, one DELETE (docs/contract/images.md, Finders' photos)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import Response, request

from app.api.base import PROBLEM_JSON, Blueprint, ProblemSchema
from app.api.examples import coded_problem
from app.api.images.schemas import ImageEnvelopeSchema, ImageSchema, ImageUploadFormSchema
from app.auth import current_viewer
from app.error_codes import Code
from app.errors import ValidationFailed
from app.extensions import client_ip, db
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


def _problem(status: int, code: str, detail: str) -> dict[str, Any]:
    return {"value": coded_problem(status, code, detail)}


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
        Code.IMAGE_LIMIT_REACHED: _problem(
            400,
            Code.IMAGE_LIMIT_REACHED,
            "This holds 400 images, the most allowed: delete one to add another.",
        ),
        Code.IMAGE_TRUNCATED: _problem(
            400,
            Code.IMAGE_TRUNCATED,
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
        Code.IMAGE_DAILY_LIMIT_REACHED,
        "At most 500 images uploaded per account per day. Try again in 3600 seconds.",
    )["value"],
}

FINDER_LIMIT = {
    "schema": ProblemSchema,
    "content_type": PROBLEM_JSON,
    "description": "A signed-in finder's account uploaded its images for the day "
    "(`image_daily_limit_reached`); an anonymous finder's access session (12) or network "
    "(60) uploaded its photos for the window, a day by default "
    "(`finder_photo_limit_reached`). `Retry-After` says when the next one fits.",
    "headers": DAILY_LIMIT["headers"],
    "examples": {
        Code.FINDER_PHOTO_LIMIT_REACHED: _problem(
            429,
            Code.FINDER_PHOTO_LIMIT_REACHED,
            "At most 12 photos per finder session in 1440 minutes. Try again in 3600 seconds.",
        ),
        Code.IMAGE_DAILY_LIMIT_REACHED: {"value": DAILY_LIMIT["example"]},
    },
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
    image = images.upload_image(
        current_viewer(), target, parent_id, parts[0].stream, client_address=client_ip()
    )
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


@blp.route("/images/trackable-comments/<uuid:comment_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_trackable_comment_images(comment_id: UUID) -> Any:
    """List a trackable comment's photos

    A finder's photos of their comment, oldest first; an empty list when the caller may
    not see the trackable (or the comment does not exist).
    """
    return _list(ImageTarget.TRACKABLE_COMMENT, comment_id)


@blp.route("/images/journey-stops/<uuid:journey_stop_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, ImageSchema(many=True))
def list_journey_stop_images(journey_stop_id: UUID) -> Any:
    """List a journey stop's photos

    A finder's photos of their stop, oldest first; an empty list when the caller may not
    see the trackable (or the stop does not exist).
    """
    return _list(ImageTarget.JOURNEY_STOP, journey_stop_id)


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


@blp.route("/images/trackable-comments/<uuid:comment_id>", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **FINDER_LIMIT)
def upload_trackable_comment_image(form: dict, comment_id: UUID) -> Any:
    """Add a photo to a trackable comment

    A finder's photo of their find: only the comment's writer, a signed-in author by
    account, an anonymous one from the browser holding the access session the comment
    was written with (403 `image_change_forbidden` otherwise; 404
    `trackable_comment_not_found` when the trackable is hidden). At most 4 per comment
    (400 `image_limit_reached`); an anonymous finder's photos are capped per session and
    per network (429 `finder_photo_limit_reached`). The upload rules of the profile
    route apply (metadata, EXIF GPS included, is never kept).
    """
    return _upload(ImageTarget.TRACKABLE_COMMENT, comment_id)


@blp.route("/images/journey-stops/<uuid:journey_stop_id>", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(ImageUploadFormSchema, location="files")
@blp.response(201, ImageEnvelopeSchema)
@blp.alt_response(400, **UPLOAD_REFUSED)
@blp.alt_response(429, **FINDER_LIMIT)
def upload_journey_stop_image(form: dict, journey_stop_id: UUID) -> Any:
    """Add a photo to a journey stop

    As for a comment: only the stop's writer (403 `image_change_forbidden`; 404
    `trackable_journey_stop_not_found` when the trackable is hidden), at most 4 per
    stop, anonymous finders capped per session and per network (429).
    """
    return _upload(ImageTarget.JOURNEY_STOP, journey_stop_id)


@blp.route("/images/<uuid:content_image_id>", methods=["DELETE"])
@blp.auth(optional=True)
@blp.response(204)
def delete_image(content_image_id: UUID) -> None:
    """Delete an image

    The same permission as uploading to its parent; the record and its four variants go
    together. A finder's photo (of a comment or stop): its writer (an anonymous one by
    the access session it wrote with), or the trackable's owner or a current admin of
    its team. Without a bearer token only such a photo can be deleted: any other is 401.
    A GET on this path is 405.
    """
    images.delete_image(current_viewer(), content_image_id)
    db.session.commit()
