"""The export store of the app (app.storage.exports), from the settings, and file removal
that waits for the commit (as the image files' do: a rollback keeps them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.platform.database import RoutingSession
from app.storage.exports import ExportStore, LocalExportStore, S3ExportStore

PENDING_REMOVALS = "privacy.export_files_removed_on_commit"


def export_store(config: Mapping[str, Any]) -> ExportStore:
    """`EXPORT_STORAGE` (empty: as `IMAGE_STORAGE`): `local` is the directory
    `EXPORT_ROOT`; `s3` the bucket `EXPORT_S3_BUCKET` (empty: `IMAGE_S3_BUCKET`) under
    `EXPORT_S3_PREFIX`, at the image store's endpoint and region."""
    kind = config.get("EXPORT_STORAGE") or config["IMAGE_STORAGE"]
    if kind == "s3":
        client = _s3_client(config["IMAGE_S3_ENDPOINT_URL"] or None, config["IMAGE_S3_REGION"])
        bucket = config.get("EXPORT_S3_BUCKET") or config["IMAGE_S3_BUCKET"]
        return S3ExportStore(client, bucket, config["EXPORT_S3_PREFIX"])
    return LocalExportStore(config["EXPORT_ROOT"])


@lru_cache(maxsize=4)
def _s3_client(endpoint_url: str | None, region: str) -> Any:
    # One client per endpoint for the process; credentials from boto3's usual chain.
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region)


def remove_after_commit(store: ExportStore, keys: Iterable[str]) -> None:
    db.session.info.setdefault(PENDING_REMOVALS, []).extend((store, key) for key in keys)


@event.listens_for(RoutingSession, "after_commit")
def _remove_committed(session: Session) -> None:
    for store, key in session.info.pop(PENDING_REMOVALS, []):
        store.delete(key)


@event.listens_for(RoutingSession, "after_soft_rollback")
def _keep_on_rollback(session: Session, previous_transaction: SessionTransaction) -> None:
    if previous_transaction.parent is None:  # the whole transaction, not a savepoint
        session.info.pop(PENDING_REMOVALS, None)
