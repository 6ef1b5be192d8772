"""The website's image file URLs: /Images/{Variant}/{guid}-{size}.jpg (contract: Images
rule 2), with the API download's visibility check, validators and caching. After the
check, the settings choose how the file leaves (docs/operations.md, Images from storage): a 302 to a
short-lived presigned URL of the S3 store, an empty answer nginx fills (X-Accel-Redirect),
or the bytes themselves."""

from __future__ import annotations

from uuid import UUID

from flask import Blueprint, Response, request

from app.auth import current_viewer
from app.error_codes import Code
from app.errors import NotFound
from app.platform.http_files import cached_file, internal_file, redirect_file
from app.services import images
from app.storage.imaging import VARIANTS_BY_URL_NAME

files = Blueprint("images_web", __name__)
JPEG = "image/jpeg"


@files.get("/Images/<string:variant>/<string:name>.jpg")
def image_file(variant: str, name: str) -> Response:
    """A stored variant; 404 when the name is malformed or the parent hidden."""
    found = VARIANTS_BY_URL_NAME.get(variant)
    guid, _, size = name.rpartition("-")
    try:
        image_id = UUID(guid)
    except ValueError:
        image_id = None
    if found is None or image_id is None or size != str(found.size):
        raise NotFound("Image not found.", code=Code.IMAGE_NOT_FOUND)
    served = images.serve_variant(
        current_viewer(), image_id, found.name, head=request.method == "HEAD"
    )
    if served.store_url is not None:
        held = images.presigned_cache_control(served.seconds)
        return redirect_file(served.store_url, etag=served.etag, cache_control=held)
    if served.internal_uri is not None:
        return internal_file(
            served.internal_uri, mimetype=JPEG, etag=served.etag, is_public=served.is_public
        )
    return cached_file(served.data, mimetype=JPEG, etag=served.etag, is_public=served.is_public)
