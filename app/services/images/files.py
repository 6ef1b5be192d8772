"""The image file store of the app, and file removal that waits for the commit.

Rows and files cannot change in one transaction, so the order is what keeps them
consistent: an upload writes its files first and its row is committed last; a delete
removes the row and the files go only after the commit succeeded (a rollback keeps them).
A crash in between leaves files without a row, never a row without files, and
`flask images sweep` removes such files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.storage.images import ImageStore, LocalImageStore, S3ImageStore

PENDING_REMOVALS = "images.files_removed_on_commit"
REMOVED_COUNT = "images.removed_in_transaction"  # what account deletion reports


def image_store(config: Mapping[str, Any]) -> ImageStore:
    """The store the settings name: `IMAGE_STORAGE=local` (the directory `IMAGE_ROOT`, the
    default) or `s3` (the bucket `IMAGE_S3_BUCKET` under `IMAGE_S3_PREFIX`)."""
    if config["IMAGE_STORAGE"] == "s3":
        client = _s3_client(config["IMAGE_S3_ENDPOINT_URL"] or None, config["IMAGE_S3_REGION"])
        return S3ImageStore(client, config["IMAGE_S3_BUCKET"], config["IMAGE_S3_PREFIX"])
    return LocalImageStore(config["IMAGE_ROOT"])


@lru_cache(maxsize=4)
def _s3_client(endpoint_url: str | None, region: str) -> Any:
    # One client per endpoint for the process: making one costs tens of milliseconds.
    # Credentials come from boto3's usual chain (AWS_ACCESS_KEY_ID, ..., instance roles).
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region)


def remove_after_commit(store: ImageStore, keys: Iterable[str]) -> None:
    db.session.info.setdefault(PENDING_REMOVALS, []).extend((store, key) for key in keys)
    db.session.info[REMOVED_COUNT] = db.session.info.get(REMOVED_COUNT, 0) + 1


def removed_in_transaction() -> int:
    """Images removed in this transaction so far (one call per image to remove_after_commit)."""
    count: int = db.session.info.get(REMOVED_COUNT, 0)
    return count


@event.listens_for(Session, "after_commit")
def _remove_committed(session: Session) -> None:
    session.info.pop(REMOVED_COUNT, None)
    for store, key in session.info.pop(PENDING_REMOVALS, []):
        store.delete(key)


@event.listens_for(Session, "after_soft_rollback")
def _keep_on_rollback(session: Session, previous_transaction: SessionTransaction) -> None:
    if previous_transaction.parent is None:  # the whole transaction, not a savepoint
        session.info.pop(PENDING_REMOVALS, None)
        session.info.pop(REMOVED_COUNT, None)
