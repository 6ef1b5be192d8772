"""The one object store behind every kind of stored file (image variants, data exports):
a local directory or an S3-compatible bucket. The kinds differ only in their keys and
content type (app.storage.images, app.storage.exports).

A write is whole or nothing. The local store writes a temporary name beside the target
(`.tmp-...`), syncs it and renames it into place, so a reader never sees half a file and a
killed write leaves only a temporary file for the sweeps. On S3 an object appears only once
its upload (multipart for a large file) completes. Large files are streamed in and out.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

TEMP_PREFIX = ".tmp-"
CHUNK_BYTES = 256 * 1024


@dataclass(frozen=True)
class StoredObject:
    """A stored file opened for reading: its size and its bytes, chunk by chunk (the
    iterator closes the file when it ends or is closed)."""

    size: int
    chunks: Iterator[bytes]


@dataclass(frozen=True)
class ObjectEntry:
    key: str
    modified_utc: datetime
    is_temporary: bool  # a local write's temporary name (never on S3)


class ObjectStore(Protocol):
    def put(self, key: str, data: bytes) -> None:
        """Store `data` under `key`, whole or not at all."""

    def put_file(self, key: str, source: IO[bytes]) -> None:
        """Store what `source` holds from its current position, whole or not at all."""

    def read(self, key: str) -> bytes | None:
        """The bytes under `key`, or None."""

    def open(self, key: str) -> StoredObject | None:
        """The file under `key` for streaming, or None."""

    def delete(self, key: str) -> None:
        """Remove `key`; a missing key is not an error."""

    def entries(self) -> Iterator[ObjectEntry]:
        """Every file of the store, temporary ones included."""


def _chunks(handle: IO[bytes]) -> Iterator[bytes]:
    try:
        while chunk := handle.read(CHUNK_BYTES):
            yield chunk
    finally:
        handle.close()


class LocalObjectStore:
    """Files under one directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or key.startswith("/") or "\\" in key or {"", ".", ".."} & set(parts):
            raise ValueError(f"not a store key: {key!r}")
        return self.root / key

    def _write(self, key: str, write: Callable[[IO[bytes]], object]) -> None:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}-{target.name}")
        try:
            with open(temporary, "wb") as file:
                write(file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def put(self, key: str, data: bytes) -> None:
        self._write(key, lambda file: file.write(data))

    def put_file(self, key: str, source: IO[bytes]) -> None:
        self._write(key, lambda file: shutil.copyfileobj(source, file, CHUNK_BYTES))

    def read(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def open(self, key: str) -> StoredObject | None:
        try:
            handle = open(self._path(key), "rb")  # noqa: SIM115 - closed by the iterator
        except FileNotFoundError:
            return None
        return StoredObject(size=os.fstat(handle.fileno()).st_size, chunks=_chunks(handle))

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def entries(self) -> Iterator[ObjectEntry]:
        if not self.root.is_dir():
            return
        for path in sorted(self.root.rglob("*")):
            if not path.is_file():
                continue
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            key = path.relative_to(self.root).as_posix()
            yield ObjectEntry(key, modified, path.name.startswith(TEMP_PREFIX))


class S3ObjectStore:
    """Objects in an S3-compatible bucket (boto3), under a prefix of their own.

    `signer` is the client that presigns URLs (no request is sent): by default `client`,
    or one naming the endpoint clients reach when the app reaches the store elsewhere."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str = "",
        *,
        content_type: str,
        signer: Any = None,
    ) -> None:
        self.client = client
        self.signer = signer if signer is not None else client
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.content_type = content_type

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(
            Bucket=self.bucket, Key=self.prefix + key, Body=data, ContentType=self.content_type
        )

    def put_file(self, key: str, source: IO[bytes]) -> None:
        # upload_fileobj streams the file, in parts when it is large.
        self.client.upload_fileobj(
            source, self.bucket, self.prefix + key, ExtraArgs={"ContentType": self.content_type}
        )

    def _get(self, key: str) -> Any:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)
        except self.client.exceptions.NoSuchKey:
            return None

    def read(self, key: str) -> bytes | None:
        found = self._get(key)
        if found is None:
            return None
        data: bytes = found["Body"].read()
        return data

    def open(self, key: str) -> StoredObject | None:
        found = self._get(key)
        if found is None:
            return None
        body = found["Body"]

        def chunks() -> Iterator[bytes]:
            try:
                yield from body.iter_chunks(CHUNK_BYTES)
            finally:
                body.close()

        return StoredObject(size=int(found["ContentLength"]), chunks=chunks())

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + key)

    def entries(self) -> Iterator[ObjectEntry]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield ObjectEntry(item["Key"][len(self.prefix) :], item["LastModified"], False)

    def presigned_url(
        self, key: str, *, seconds: int, cache_control: str, head: bool = False
    ) -> str:
        """A URL that reads `key` without credentials for `seconds` (a GET, or a HEAD when
        `head`: the method is part of the signature), answered with the store's content
        type and `cache_control`. Made here, with no request to the store."""
        url: str = self.signer.generate_presigned_url(
            "head_object" if head else "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self.prefix + key,
                "ResponseContentType": self.content_type,
                "ResponseCacheControl": cache_control,
            },
            ExpiresIn=seconds,
        )
        return url
