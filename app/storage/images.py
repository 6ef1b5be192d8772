"""Where image variant files live: the project's object store (app.storage.objects, a local
directory by default or an S3-compatible bucket) with the variants' keys.

Keys look like `Medium/{image id}-612.jpg` (the website URL's tail). A killed upload leaves
only temporary or complete files with no database row, which `flask images sweep` removes.

Serving may skip the app's bytes (docs/operations.md, Images from storage): an S3 store signs
short-lived URLs of its objects, and `internal_uri` names a local file for nginx's
X-Accel-Redirect. Both take only a well-formed variant key, never a path from a request.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from app.storage.imaging import VARIANTS, VARIANTS_BY_URL_NAME, Variant
from app.storage.objects import (
    TEMP_PREFIX,
    LocalObjectStore,
    ObjectEntry,
    ObjectStore,
    S3ObjectStore,
)

__all__ = ["TEMP_PREFIX", "ImageStore", "LocalImageStore", "S3ImageStore", "StoredFile"]
KEY_PATTERN = re.compile(
    r"^(?P<variant>[A-Za-z]+)/(?P<guid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
    r"[0-9a-f]{12})-(?P<size>\d+)\.jpg$"
)


def variant_key(image_id: uuid.UUID, variant: Variant) -> str:
    return f"{variant.url_name}/{image_id}-{variant.size}.jpg"


def image_keys(image_id: uuid.UUID) -> list[str]:
    return [variant_key(image_id, variant) for variant in VARIANTS]


@dataclass(frozen=True)
class StoredFile:
    key: str
    image_id: uuid.UUID | None  # None: a temporary or foreign file
    modified_utc: datetime


def internal_uri(prefix: str, key: str) -> str:
    """`prefix` + `key` for nginx's X-Accel-Redirect: the URI of an `internal` location
    whose `alias` is the store's directory. Only a variant key (KEY_PATTERN: variant name,
    UUID, size) is accepted, so no value can reach outside that directory."""
    _require_variant_key(key)
    base = prefix.strip("/")
    return f"/{base}/{key}" if base else f"/{key}"


def _require_variant_key(key: str) -> None:
    if image_id_of(key) is None:
        raise ValueError(f"not a variant key: {key!r}")


def image_id_of(key: str) -> uuid.UUID | None:
    """The image id a well-formed variant key names, else None."""
    match = KEY_PATTERN.match(key)
    if match is None:
        return None
    variant = VARIANTS_BY_URL_NAME.get(match["variant"])
    if variant is None or int(match["size"]) != variant.size:
        return None
    return uuid.UUID(match["guid"])


class ImageStore(ObjectStore, Protocol):
    def list_files(self) -> Iterator[StoredFile]:
        """Every file in the store, temporary ones included, with the image it belongs to."""


def _stored_files(entries: Iterator[ObjectEntry]) -> Iterator[StoredFile]:
    for entry in entries:
        yield StoredFile(entry.key, image_id_of(entry.key), entry.modified_utc)


class LocalImageStore(LocalObjectStore):
    """Files under one directory (`IMAGE_ROOT`)."""

    def list_files(self) -> Iterator[StoredFile]:
        return _stored_files(self.entries())


class S3ImageStore(S3ObjectStore):
    """Objects in an S3-compatible bucket (boto3)."""

    def __init__(self, client: Any, bucket: str, prefix: str = "", *, signer: Any = None) -> None:
        super().__init__(client, bucket, prefix, content_type="image/jpeg", signer=signer)

    def list_files(self) -> Iterator[StoredFile]:
        return _stored_files(self.entries())

    def presigned_url(
        self, key: str, *, seconds: int, cache_control: str, head: bool = False
    ) -> str:
        """Only a variant key is signed, never a path from a request."""
        _require_variant_key(key)
        return super().presigned_url(key, seconds=seconds, cache_control=cache_control, head=head)
