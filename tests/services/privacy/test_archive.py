"""The archive writer's pieces: rows read in keyset batches (single and composite keys),
values written as the API writes them, and field names in camelCase."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.trackable import TrackableWatch
from app.services.privacy.archive import camel, iter_rows, plain
from app.services.privacy.catalogue import table_of
from tests.factories import make_note, make_trackable, make_user


def test_rows_are_read_in_batches_by_a_single_key(app):
    ada, kim = make_user(), make_user()
    made = {str(make_note(ada).id) for _ in range(5)}
    make_note(kim)
    table = table_of(Note)
    rows = list(iter_rows(table, ["id", "title"], table.c.owner_user_id == ada.id, batch_rows=2))
    assert {str(row["id"]) for row in rows} == made
    assert len(rows) == 5


def test_rows_are_read_in_batches_by_a_composite_key(app):
    from app.extensions import db

    ada = make_user()
    trackables = [make_trackable(make_user()) for _ in range(5)]
    db.session.add_all(TrackableWatch(user_id=ada.id, trackable_id=each.id) for each in trackables)
    db.session.commit()
    table = table_of(TrackableWatch)
    rows = list(iter_rows(table, ["trackable_id"], table.c.user_id == ada.id, batch_rows=2))
    assert sorted(row["trackable_id"] for row in rows) == sorted(each.id for each in trackables)


def test_values_are_written_as_the_api_writes_them():
    some_id = uuid.UUID("2cb04f79-4f6e-43a4-99d2-b1d203494dbd")
    assert plain(some_id) == "2cb04f79-4f6e-43a4-99d2-b1d203494dbd"
    moment = datetime(2026, 12, 2, 9, 30, 1, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert plain(moment) == "2026-12-02T07:30:01.123Z"
    assert plain(datetime(2026, 12, 2, tzinfo=UTC)) == "2026-12-02T00:00:00.000Z"
    assert plain(NoteVisibility.PUBLIC) == "Public"
    assert plain({"a": [1]}) == {"a": [1]}


def test_field_names_are_camel_case():
    assert camel("owner_user_id") == "ownerUserId"
    assert camel("id") == "id"
    assert camel("two_factor_last_step") == "twoFactorLastStep"
