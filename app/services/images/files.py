"""The image file store of the app, and file removal that waits for the commit.

Rows and files cannot change in one transaction, so the order is what keeps them
consistent: an upload writes its files first and its row is committed last; a delete
removes the row and the files go only after the commit succeeded (a rollback keeps them).
A crash in between leaves files without a row, never a row without files, and
`flask images sweep` removes such files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.storage.images import ImageStore, LocalImageStore

PENDING_REMOVALS = "images.files_removed_on_commit"
REMOVED_COUNT = "images.removed_in_transaction"  # what account deletion reports


def image_store(config: Mapping[str, Any]) -> ImageStore:
    """The local directory under `IMAGE_ROOT`."""
    return LocalImageStore(config["IMAGE_ROOT"])


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
