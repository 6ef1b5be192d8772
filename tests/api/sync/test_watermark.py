"""The pull watermark never misses a write (contract: Sync; app.models.sync): a row
written by a transaction that began before a pull and committed after it reaches the
next pull, although its `updatedUtc` is older than the first pull's `serverSyncUtc`.
Two connections interleaved by hand: the writer's own session, and the pull's request."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.extensions import db
from app.models.note import Note
from app.platform.database import RoutingSession
from app.services.sync.clock import stamp_changes
from tests.api.sync.helpers import pulled
from tests.factories import make_category, make_user


@pytest.fixture
def alice(app):
    return make_user("alice")


@pytest.mark.parametrize("stamped_before_the_pull", [False, True])
def test_a_write_committed_after_a_pull_reaches_the_next_pull(api, alice, stamped_before_the_pull):
    folder = make_category(alice)
    writer = RoutingSession(db, bind=db.engine)  # a second connection, its own transaction
    try:
        note = Note(
            owner_user_id=alice.id,
            category_id=folder.id,
            title="Late",
            content_language=folder.content_language,
        )
        writer.add(note)
        writer.flush()
        note_id, updated = str(note.id), note.updated_utc
        if stamped_before_the_pull:
            # The writer has taken its stamp (and holds the clock) but not committed yet.
            stamp_changes(writer)
        pull_began = datetime.now(UTC)
        first = pulled(api, alice)
        assert note_id not in {n["noteId"] for n in first["userNotes"]}
        writer.commit()
    finally:
        writer.close()
    # A watermark of the pull's own time would skip the note: it was saved before the pull
    # began, so its updatedUtc is older than any such watermark.
    assert updated < pull_began
    second = pulled(api, alice, first["serverSyncUtc"])
    assert [n["noteId"] for n in second["userNotes"]] == [note_id]
    third = pulled(api, alice, second["serverSyncUtc"])
    assert third["userNotes"] == []
