"""A real S3-compatible server for the tests of the object store (moto's server mode on a
free local port) and an empty bucket on it. Tests that use them skip, saying why, when
moto is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.serving import free_port

SECRET = "testing"  # moto accepts any credentials; the presign checks need the secret


def s3_endpoint() -> str:
    """An endpoint on a free port, for a module's server (nothing listens there yet)."""
    return f"http://127.0.0.1:{free_port()}"


@contextmanager
def s3_serving(endpoint: str) -> Iterator[None]:
    """moto's S3 server listening at `endpoint`, with credentials in the environment."""
    moto_server = pytest.importorskip(
        "moto.server", reason="moto[server] (test extras) provides the S3-compatible server"
    )
    port = int(endpoint.rsplit(":", 1)[1])
    credentials = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": SECRET}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in credentials.items():
            patch.setenv(name, value)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
        server.start()
        try:
            yield
        finally:
            server.stop()


@contextmanager
def empty_bucket(endpoint: str, name: str) -> Iterator[Any]:
    """A boto3 client with bucket `name` created empty, emptied and removed afterwards."""
    boto3 = pytest.importorskip("boto3")
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=name)
    try:
        yield client
    finally:
        for item in client.list_objects_v2(Bucket=name).get("Contents", []):
            client.delete_object(Bucket=name, Key=item["Key"])
        client.delete_bucket(Bucket=name)


def bucket_keys(client: Any, bucket: str) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", []))
