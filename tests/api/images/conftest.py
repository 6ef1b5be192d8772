"""Fixtures of the image API tests: the stored files, and a real S3-compatible server
(moto's server mode, one per test module that asks for `bucket`; those tests skip, saying
why, when moto is not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.images.s3 import BUCKET, ENDPOINT
from tests.s3 import empty_bucket, s3_serving


@pytest.fixture
def image_files(app):
    """The variant files stored under IMAGE_ROOT, as relative paths."""

    def files() -> list[str]:
        root = Path(app.config["IMAGE_ROOT"])
        if not root.is_dir():
            return []
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    return files


@pytest.fixture(scope="module")
def s3_server():
    with s3_serving(ENDPOINT):
        yield


@pytest.fixture
def bucket(s3_server, app):
    """The empty bucket of S3_SETTINGS on the module's server, removed after the test."""
    with empty_bucket(ENDPOINT, BUCKET) as client:
        yield client
