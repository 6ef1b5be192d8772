"""Where image variant files live: a small interface, the local directory (default) and an
S3-compatible bucket.

Keys look like `Medium/{image id}-612.jpg` (the website URL's tail). A write is crash-safe:
the bytes go to a temporary name beside the target (`.tmp-...`) and are renamed into place,
so a reader never sees half a file; a killed upload leaves only temporary or complete files
with no database row, which `flask images sweep` removes.

Serving may skip the app's bytes (README: Images from storage): an S3 store signs
short-lived URLs of its objects, and `internal_uri` names a local file for nginx's
X-Accel-Redirect. Both take only a well-formed variant key, never a path from a request.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from app.storage.imaging import VARIANTS, VARIANTS_BY_URL_NAME, Variant

TEMP_PREFIX = ".tmp-"
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


class ImageStore(Protocol):
    def put(self, key: str, data: bytes) -> None:
        """Store `data` under `key` atomically (readers see all of it or nothing)."""

    def read(self, key: str) -> bytes | None:
        """The bytes under `key`, or None."""

    def delete(self, key: str) -> None:
        """Remove `key`; a missing key is not an error."""

    def list_files(self) -> Iterator[StoredFile]:
        """Every file in the store, temporary ones included."""


class LocalImageStore:
    """Files under one directory (`IMAGE_ROOT`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        if ".." in key.split("/") or key.startswith("/"):
            raise ValueError(f"not a store key: {key!r}")
        return self.root / key

    def put(self, key: str, data: bytes) -> None:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}-{target.name}")
        try:
            with open(temporary, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def read(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list_files(self) -> Iterator[StoredFile]:
        if not self.root.is_dir():
            return
        for path in sorted(self.root.rglob("*")):
            if not path.is_file():
                continue
            key = path.relative_to(self.root).as_posix()
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            yield StoredFile(key=key, image_id=image_id_of(key), modified_utc=modified)


class S3ImageStore:
    """Objects in an S3-compatible bucket (boto3). A PUT is atomic on S3: an object appears
    whole or not at all, so no temporary names are needed.

    `signer` is the client that presigns URLs (no request is sent): by default `client`,
    or one naming the endpoint clients reach when the app reaches the store elsewhere."""

    def __init__(self, client: Any, bucket: str, prefix: str = "", *, signer: Any = None) -> None:
        self.client = client
        self.signer = signer if signer is not None else client
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(
            Bucket=self.bucket, Key=self.prefix + key, Body=data, ContentType="image/jpeg"
        )

    def read(self, key: str) -> bytes | None:
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)
        except self.client.exceptions.NoSuchKey:
            return None
        data: bytes = found["Body"].read()
        return data

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + key)

    def list_files(self) -> Iterator[StoredFile]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                key = item["Key"][len(self.prefix) :]
                yield StoredFile(
                    key=key, image_id=image_id_of(key), modified_utc=item["LastModified"]
                )

    def presigned_url(
        self, key: str, *, seconds: int, cache_control: str, head: bool = False
    ) -> str:
        """A URL that reads `key` without credentials for `seconds` (a GET, or a HEAD when
        `head`: the method is part of the signature), answered as `image/jpeg` with
        `cache_control`. Made here, with no request to the store."""
        _require_variant_key(key)
        url: str = self.signer.generate_presigned_url(
            "head_object" if head else "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self.prefix + key,
                "ResponseContentType": "image/jpeg",
                "ResponseCacheControl": cache_control,
            },
            ExpiresIn=seconds,
        )
        return url
