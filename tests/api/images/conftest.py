"""Fixtures of the image API tests: an uploader helper, the stored files, and a real
S3-compatible server (moto's server mode, one per test module that asks for `bucket`;
those tests skip, saying why, when moto is not installed)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.api.images.s3 import BUCKET, ENDPOINT, PORT, SECRET
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


@pytest.fixture(scope="module")
def s3_server():
    moto_server = pytest.importorskip(
        "moto.server", reason="moto[server] (test extras) provides the S3-compatible server"
    )
    credentials = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": SECRET}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in credentials.items():
            patch.setenv(name, value)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=PORT)
        server.start()
        try:
            yield
        finally:
            server.stop()


@pytest.fixture
def bucket(s3_server, app):
    """The empty bucket of S3_SETTINGS on the module's server, removed after the test."""
    boto3 = pytest.importorskip("boto3")
    client = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)
