"""Where finished data exports (ZIP files) live until they expire: the local directory
(`EXPORT_ROOT`, the default) or an S3-compatible bucket, as the image variants do
(app.storage.images), so that every machine that serves a download sees the file a worker
on another machine wrote (with the local store, only when `EXPORT_ROOT` is shared).

Files are streamed in and out, never held whole in memory. A write is whole or nothing:
the local store writes a temporary name beside the target (`.tmp-...`) and renames it into
place; an S3 upload (multipart for a large file) makes the object appear only once every
part is in. Keys are `{export id}.zip`.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

TEMP_PREFIX = ".tmp-"
CHUNK_BYTES = 256 * 1024
KEY_PATTERN = re.compile(
    r"^(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.zip$"
)


def export_key(export_id: uuid.UUID) -> str:
    return f"{export_id}.zip"


def export_id_of(key: str) -> uuid.UUID | None:
    """The export id a well-formed key names, else None (a temporary or foreign file)."""
    match = KEY_PATTERN.match(key)
    return uuid.UUID(match["id"]) if match else None


@dataclass(frozen=True)
class StoredExport:
    """An export file opened for reading: its size and its bytes, read chunk by chunk
    (the iterator closes the file when it ends or is closed)."""

    size: int
    chunks: Iterator[bytes]


@dataclass(frozen=True)
class ExportFile:
    key: str
    modified_utc: datetime
    is_temporary: bool


class ExportStore(Protocol):
    def put_file(self, key: str, source: IO[bytes]) -> None:
        """Store what `source` holds from its current position, under `key`, whole or
        not at all."""

    def open(self, key: str) -> StoredExport | None:
        """The file under `key`, or None."""

    def delete(self, key: str) -> None:
        """Remove `key`; a missing key is not an error."""

    def list_files(self) -> Iterator[ExportFile]:
        """Every file of the store, temporary ones included."""


def _file_chunks(handle: IO[bytes]) -> Iterator[bytes]:
    try:
        while chunk := handle.read(CHUNK_BYTES):
            yield chunk
    finally:
        handle.close()


class LocalExportStore:
    """Files in one directory (`EXPORT_ROOT`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        if "/" in key or "\\" in key or key in {"", ".", ".."}:
            raise ValueError(f"not an export key: {key!r}")
        return self.root / key

    def put_file(self, key: str, source: IO[bytes]) -> None:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}-{target.name}")
        try:
            with open(temporary, "wb") as file:
                shutil.copyfileobj(source, file, CHUNK_BYTES)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def open(self, key: str) -> StoredExport | None:
        try:
            handle = open(self._path(key), "rb")  # noqa: SIM115 - closed by the iterator
        except FileNotFoundError:
            return None
        return StoredExport(size=os.fstat(handle.fileno()).st_size, chunks=_file_chunks(handle))

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list_files(self) -> Iterator[ExportFile]:
        if not self.root.is_dir():
            return
        for path in sorted(self.root.iterdir()):
            if not path.is_file():
                continue
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            yield ExportFile(path.name, modified, path.name.startswith(TEMP_PREFIX))


class S3ExportStore:
    """Objects in an S3-compatible bucket (boto3), under a prefix of their own."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def put_file(self, key: str, source: IO[bytes]) -> None:
        # upload_fileobj streams the file, in parts when it is large; the object exists
        # only once the upload completes.
        self.client.upload_fileobj(
            source,
            self.bucket,
            self.prefix + key,
            ExtraArgs={"ContentType": "application/zip"},
        )

    def open(self, key: str) -> StoredExport | None:
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)
        except self.client.exceptions.NoSuchKey:
            return None
        body = found["Body"]

        def chunks() -> Iterator[bytes]:
            try:
                yield from body.iter_chunks(CHUNK_BYTES)
            finally:
                body.close()

        return StoredExport(size=int(found["ContentLength"]), chunks=chunks())

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + key)

    def list_files(self) -> Iterator[ExportFile]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                key = item["Key"][len(self.prefix) :]
                if "/" in key:  # another prefix's object below ours
                    continue
                yield ExportFile(key, item["LastModified"], False)
