"""The website's image file URLs: /Images/{Variant}/{guid}-{size}.jpg (contract: Images
rule 2), with the API download's visibility check, validators and caching."""

from __future__ import annotations

from uuid import UUID

from flask import Blueprint, Response

from app.auth import current_viewer
from app.errors import NotFound
from app.platform.http_files import cached_file
from app.services import images
from app.storage.imaging import VARIANTS_BY_URL_NAME

files = Blueprint("images_web", __name__)


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
        raise NotFound("Image not found.", code="image_not_found")
    file = images.read_variant(current_viewer(), image_id, found.name)
    return cached_file(file.data, mimetype="image/jpeg", etag=file.etag, is_public=file.is_public)
