"""A trackable's photos on its public page: each image as its stored variants, for an
`<img>` that loads lazily, picks its size from `srcset` and keeps its box before it
loads (width and height of the small variant, from the original's proportions). The
files are served by /Images/... (app.web.images), with the API's visibility check and
cache headers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.models.image import ContentImage
from app.storage.images import variant_key
from app.storage.imaging import VARIANTS_BY_NAME

SHOWN = VARIANTS_BY_NAME["small"]  # the page's column, 306 px, and srcset for sharper
SOURCES = ("small", "medium", "large")


@dataclass(frozen=True)
class Photo:
    src: str
    srcset: str
    full: str  # the largest variant, the link target
    width: int
    height: int


def _url(image: ContentImage, name: str) -> str:
    return "/Images/" + variant_key(image.id, VARIANTS_BY_NAME[name])


def _fit(width: int, height: int, longest: int) -> tuple[int, int]:
    """A variant's size: the original fitted into `longest`, never enlarged."""
    scale = min(1.0, longest / max(width, height, 1))
    return max(1, round(width * scale)), max(1, round(height * scale))


def photos_of(found: Iterable[ContentImage]) -> list[Photo]:
    photos = []
    for image in found:
        width, height = _fit(image.original_width, image.original_height, SHOWN.size)
        sources: dict[int, str] = {}  # by width: a small original's variants are alike
        for name in SOURCES:
            size = VARIANTS_BY_NAME[name].size
            fitted = _fit(image.original_width, image.original_height, size)[0]
            sources.setdefault(fitted, _url(image, name))
        srcset = ", ".join(f"{url} {fitted}w" for fitted, url in sources.items())
        photos.append(Photo(_url(image, "small"), srcset, _url(image, "large"), width, height))
    return photos
