"""The S3 image store against a real S3-compatible server: moto's server mode, started
here on a local port (skipped, with the reason, when moto is not installed)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import requests

from tests.api.images.s3 import BUCKET, S3_SETTINGS, keys
from tests.conftest import assert_problem
from tests.factories import make_user
from tests.uploads import upload


@pytest.fixture
def app_overrides():
    return S3_SETTINGS


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
    assert response.status_code == 302  # to the bucket (README: Images from storage)
    assert requests.get(response.headers["Location"], timeout=10).content[:3] == b"\xff\xd8\xff"
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
