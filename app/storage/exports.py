"""Where finished data exports (ZIP files) live until they expire: the project's object
store (app.storage.objects: the local directory `EXPORT_ROOT` by default, or an
S3-compatible bucket), so that every machine that serves a download sees the file a worker
on another machine wrote (with the local store, only when `EXPORT_ROOT` is shared).

Files are streamed in and out, never held whole in memory. Keys are `{export id}.zip`,
stored flat.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from app.storage.objects import LocalObjectStore, ObjectEntry, ObjectStore, S3ObjectStore

KEY_PATTERN = re.compile(
    r"^(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.zip$"
)


def export_key(export_id: uuid.UUID) -> str:
    return f"{export_id}.zip"


def export_id_of(key: str) -> uuid.UUID | None:
    """The export id a well-formed key names, else None (a temporary or foreign file)."""
    match = KEY_PATTERN.match(key)
    return uuid.UUID(match["id"]) if match else None


class ExportStore(ObjectStore, Protocol):
    def list_files(self) -> Iterator[ObjectEntry]:
        """Every file of the store, temporary ones included."""


def _top_level(entries: Iterator[ObjectEntry]) -> Iterator[ObjectEntry]:
    # Exports are stored flat; anything below (another prefix's objects) is not ours.
    return (entry for entry in entries if "/" not in entry.key)


class LocalExportStore(LocalObjectStore):
    """Files in one directory (`EXPORT_ROOT`)."""

    def _path(self, key: str) -> Path:
        if "/" in key or "\\" in key or key in {"", ".", ".."}:
            raise ValueError(f"not an export key: {key!r}")
        return super()._path(key)

    def list_files(self) -> Iterator[ObjectEntry]:
        return _top_level(self.entries())


class S3ExportStore(S3ObjectStore):
    """Objects in an S3-compatible bucket (boto3), under a prefix of their own."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        super().__init__(client, bucket, prefix, content_type="application/zip")

    def list_files(self) -> Iterator[ObjectEntry]:
        return _top_level(self.entries())
