"""Fixtures of the image API tests: an uploader helper and the stored files."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.api.images.samples import sample


def upload(client, url: str, data: bytes | None = None, *, field: str = "file", name="x.jpg"):
    data = sample("JPEG") if data is None else data
    return client.post(
        url, data={field: (io.BytesIO(data), name)}, content_type="multipart/form-data"
    )


@pytest.fixture
def image_files(app):
    """The variant files stored under IMAGE_ROOT, as relative paths."""

    def files() -> list[str]:
        root = Path(app.config["IMAGE_ROOT"])
        if not root.is_dir():
            return []
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    return files
