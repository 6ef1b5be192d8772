"""`flask images sweep`: remove stored files that no image row names.

An upload writes its files before its row commits, and a delete removes files after its
commit; a crash between the two leaves files without a row (never a row without files).
The sweep removes those, and temporary files left by an interrupted write. Files younger
than the grace period are left alone: they may belong to an upload still in flight.
Files whose names are not the store's (neither variants nor temporary) are not touched.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from flask import current_app
from sqlalchemy import select

from app.extensions import db
from app.models.image import ContentImage
from app.services.images.files import image_store
from app.storage.images import TEMP_PREFIX

CHUNK = 500  # ids per IN (...) query


def _known(ids: set[uuid.UUID]) -> set[uuid.UUID]:
    ordered = sorted(ids)
    known: set[uuid.UUID] = set()
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        known.update(db.session.scalars(select(ContentImage.id).where(ContentImage.id.in_(chunk))))
    return known


def sweep_files(*, dry_run: bool, grace: timedelta, now: datetime | None = None) -> list[str]:
    """The keys of stray files (removed unless `dry_run`), oldest name order."""
    store = image_store(current_app.config)
    cutoff = (now or datetime.now(UTC)) - grace
    files = [each for each in store.list_files() if each.modified_utc <= cutoff]
    known = _known({each.image_id for each in files if each.image_id is not None})
    stray = [
        each.key
        for each in files
        if (each.image_id is not None and each.image_id not in known)
        or (each.image_id is None and each.key.rsplit("/", 1)[-1].startswith(TEMP_PREFIX))
    ]
    if not dry_run:
        for key in stray:
            store.delete(key)
    return stray
