"""The image file store of the app, and file removal that waits for the commit.

Rows and files cannot change in one transaction, so the order is what keeps them
consistent: an upload writes its files first and its row is committed last; a delete
removes the row and the files go only after the commit succeeded (a rollback keeps them).
A crash in between leaves files without a row, never a row without files, and
`flask images sweep` removes such files.

With S3 the store also signs the short-lived URLs /Images/... redirects to (docs/operations.md,
Images from storage), and the pages allow images from their origin.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.platform.database import RoutingSession
from app.storage.images import ImageStore, LocalImageStore, S3ImageStore

PENDING_REMOVALS = "images.files_removed_on_commit"
REMOVED_COUNT = "images.removed_in_transaction"  # what account deletion reports


def image_store(config: Mapping[str, Any]) -> ImageStore:
    """The store the settings name: `IMAGE_STORAGE=local` (the directory `IMAGE_ROOT`, the
    default) or `s3` (the bucket `IMAGE_S3_BUCKET` under `IMAGE_S3_PREFIX`)."""
    if config["IMAGE_STORAGE"] == "s3":
        return _s3_store(
            config["IMAGE_S3_BUCKET"],
            config["IMAGE_S3_PREFIX"],
            config["IMAGE_S3_ENDPOINT_URL"] or None,
            config["IMAGE_S3_PUBLIC_ENDPOINT"] or None,
            config["IMAGE_S3_REGION"],
        )
    return LocalImageStore(config["IMAGE_ROOT"])


def check_store(config: Mapping[str, Any]) -> None:
    """Raises unless the S3 bucket answers within about 3 s (readiness: a store that never
    answers must not hold the probe for boto3's minute of retries)."""
    client = _probe_client(config["IMAGE_S3_ENDPOINT_URL"] or None, config["IMAGE_S3_REGION"])
    client.head_bucket(Bucket=config["IMAGE_S3_BUCKET"])


@lru_cache(maxsize=4)
def _probe_client(endpoint_url: str | None, region: str) -> Any:
    import boto3
    from botocore.config import Config

    quick = Config(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 1})
    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=quick)


def redirecting_store(config: Mapping[str, Any]) -> S3ImageStore | None:
    """The S3 store when /Images/... redirects to it (IMAGE_S3_REDIRECT, on by default),
    else None (the app streams the bytes)."""
    store = image_store(config)
    if isinstance(store, S3ImageStore) and config["IMAGE_S3_REDIRECT"]:
        return store
    return None


def redirect_origins(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Origins /Images/... sends browsers to: a page's `img-src` must name them, or the
    browser refuses the redirected image (CSP checks where a redirect lands)."""
    if config["IMAGE_STORAGE"] != "s3" or not config["IMAGE_S3_REDIRECT"]:
        return ()
    endpoint = config["IMAGE_S3_PUBLIC_ENDPOINT"] or config["IMAGE_S3_ENDPOINT_URL"] or None
    return (_url_origin(config["IMAGE_S3_BUCKET"], endpoint, config["IMAGE_S3_REGION"]),)


@lru_cache(maxsize=4)
def _url_origin(bucket: str, endpoint_url: str | None, region: str) -> str:
    # From an unsigned URL (the same host as a signed one): a page never fails for want
    # of credentials.
    locator = _presigner(endpoint_url, region, signed=False)
    url = locator.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "x"})
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@lru_cache(maxsize=4)
def _s3_store(
    bucket: str, prefix: str, endpoint_url: str | None, public_url: str | None, region: str
) -> S3ImageStore:
    signer = _presigner(public_url or endpoint_url, region, signed=True)
    return S3ImageStore(_s3_client(endpoint_url, region), bucket, prefix, signer=signer)


@lru_cache(maxsize=4)
def _s3_client(endpoint_url: str | None, region: str) -> Any:
    # One client per endpoint for the process: making one costs tens of milliseconds.
    # Credentials come from boto3's usual chain (AWS_ACCESS_KEY_ID, ..., instance roles).
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region)


@lru_cache(maxsize=8)
def _presigner(endpoint_url: str | None, region: str, *, signed: bool) -> Any:
    # Presigns only. SigV4: boto3 would sign with SigV2 in us-east-1, which MinIO and R2
    # refuse. On AWS (no endpoint) virtual-hosted names, so a bucket outside us-east-1
    # gets its region's host (bucket.s3.<region>.amazonaws.com): the global host answers
    # such a bucket with a redirect that breaks the signature. Other endpoints keep
    # boto3's path style (a bucket name in the host would not resolve there).
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    style = {} if endpoint_url else {"addressing_style": "virtual"}
    config = Config(signature_version="s3v4" if signed else UNSIGNED, s3=style)
    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)


def remove_after_commit(store: ImageStore, keys: Iterable[str]) -> None:
    db.session.info.setdefault(PENDING_REMOVALS, []).extend((store, key) for key in keys)
    db.session.info[REMOVED_COUNT] = db.session.info.get(REMOVED_COUNT, 0) + 1


def removed_in_transaction() -> int:
    """Images removed in this transaction so far (one call per image to remove_after_commit)."""
    count: int = db.session.info.get(REMOVED_COUNT, 0)
    return count


@event.listens_for(RoutingSession, "after_commit")
def _remove_committed(session: Session) -> None:
    session.info.pop(REMOVED_COUNT, None)
    for store, key in session.info.pop(PENDING_REMOVALS, []):
        store.delete(key)


@event.listens_for(RoutingSession, "after_soft_rollback")
def _keep_on_rollback(session: Session, previous_transaction: SessionTransaction) -> None:
    if previous_transaction.parent is None:  # the whole transaction, not a savepoint
        session.info.pop(PENDING_REMOVALS, None)
        session.info.pop(REMOVED_COUNT, None)
