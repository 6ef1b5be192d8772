"""The S3 image store against a real S3-compatible server: moto's server mode, started
here on a local port (skipped, with the reason, when moto is not installed)."""

from __future__ import annotations

import socket
import uuid
from datetime import timedelta

import pytest

from tests.api.images.conftest import upload
from tests.conftest import assert_problem
from tests.factories import make_user

moto_server = pytest.importorskip(
    "moto.server", reason="moto[server] (test extras) provides the S3-compatible server"
)
boto3 = pytest.importorskip("boto3")

BUCKET = "images-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PORT = _free_port()
ENDPOINT = f"http://127.0.0.1:{PORT}"


@pytest.fixture(scope="module", autouse=True)
def s3_server():
    credentials = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
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
def app_overrides():
    return {
        "IMAGE_STORAGE": "s3",
        "IMAGE_S3_BUCKET": BUCKET,
        "IMAGE_S3_PREFIX": "variants",
        "IMAGE_S3_ENDPOINT_URL": ENDPOINT,
    }


@pytest.fixture
def bucket(app):
    client = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def keys(client) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def test_upload_download_and_delete_go_through_the_bucket(api, bucket, image_files):
    alice = make_user()
    record = upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]
    guid = record["contentImageId"]
    assert keys(bucket) == sorted(
        f"variants/{name}"
        for name in (
            f"Large/{guid}-1024.jpg",
            f"Medium/{guid}-612.jpg",
            f"Small/{guid}-306.jpg",
            f"Thumbnail/{guid}-64.jpg",
        )
    )
    assert image_files() == []  # nothing on the local disk
    response = api.get(record["mediumUrl"])
    assert response.status_code == 200
    assert response.data[:3] == b"\xff\xd8\xff"
    assert api.as_user(alice).delete(f"/api/images/{guid}").status_code == 204
    assert keys(bucket) == []
    assert_problem(api.get(record["mediumUrl"]), 404)


def test_sweep_removes_objects_without_a_row(app, bucket):
    from app.services import images

    stray = f"variants/Small/{uuid.uuid4()}-306.jpg"
    bucket.put_object(Bucket=BUCKET, Key=stray, Body=b"\xff\xd8\xff")
    assert images.sweep_files(dry_run=True, grace=timedelta(0)) == [stray[len("variants/") :]]
    assert keys(bucket) == [stray]
    images.sweep_files(dry_run=False, grace=timedelta(0))
    assert keys(bucket) == []
