"""Data exports kept in an S3-compatible bucket (moto's server mode, started here on a
local port; skipped, with the reason, when moto is not installed): a worker on one machine
stores the ZIP, any machine serves it, the sweep removes it."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.privacy import AccountExport
from app.services import privacy
from app.storage.exports import S3ExportStore
from tests.api.privacy.conftest import export_ready, open_zip
from tests.conftest import assert_problem
from tests.factories import make_user
from tests.s3 import bucket_keys, empty_bucket, s3_endpoint, s3_serving

boto3 = pytest.importorskip("boto3")

BUCKET = "exports-test"
ENDPOINT = s3_endpoint()


@pytest.fixture(scope="module", autouse=True)
def s3_server():
    with s3_serving(ENDPOINT):
        yield


@pytest.fixture
def app_overrides():
    return {
        "IMAGE_STORAGE": "s3",
        "IMAGE_S3_BUCKET": BUCKET,
        "IMAGE_S3_PREFIX": "",
        "IMAGE_S3_ENDPOINT_URL": ENDPOINT,
    }


@pytest.fixture
def bucket(app):
    with empty_bucket(ENDPOINT, BUCKET) as client:
        yield client


def keys(client) -> list[str]:
    return bucket_keys(client, BUCKET)


def test_an_export_is_stored_in_the_bucket_and_downloaded_from_it(app, api, bucket):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    assert keys(bucket) == [f"exports/{record['exportId']}.zip"]
    assert not (app.config["EXPORT_ROOT"]).exists()  # nothing on the local disk
    response = me.get(record["downloadUrl"])
    assert "README.md" in open_zip(response).namelist()
    assert len(response.data) == record["sizeBytes"]


def test_the_image_sweep_leaves_exports_alone(app, api, bucket):
    from app.services import images

    record = export_ready(app, api.as_user(make_user()))
    assert images.sweep_files(dry_run=False, grace=timedelta(0)) == []
    assert keys(bucket) == [f"exports/{record['exportId']}.zip"]


def test_the_sweep_removes_an_expired_export_from_the_bucket(app, api, bucket):
    me = api.as_user(make_user())
    record = export_ready(app, me)
    export = db.session.get(AccountExport, uuid.UUID(record["exportId"]))
    export.expires_utc = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert privacy.sweep_exports(utcnow(), app.config) == 1
    db.session.commit()
    assert keys(bucket) == []
    assert_problem(me.get(record["downloadUrl"]), 410)


def test_the_store_streams_in_and_out_and_lists_only_its_prefix(app, bucket):
    store = S3ExportStore(
        boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1"), BUCKET, "exports"
    )
    bucket.put_object(Bucket=BUCKET, Key="exports/deeper/other.zip", Body=b"x")
    bucket.put_object(Bucket=BUCKET, Key="Large/not-ours.jpg", Body=b"x")
    data = bytes(range(256)) * 40_000  # 10 MB: a multipart upload
    store.put_file("a.zip", io.BytesIO(data))
    opened = store.open("a.zip")
    assert opened is not None
    assert opened.size == len(data)
    assert b"".join(opened.chunks) == data
    assert [each.key for each in store.list_files()] == ["a.zip"]
    store.delete("a.zip")
    assert store.open("a.zip") is None
