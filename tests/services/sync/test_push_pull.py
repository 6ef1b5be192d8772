"""Offline sync through services.sync, without HTTP: a pushed category and note come back
in the owner's pull and in nobody else's; a retried push applies nothing twice; a change
made on a stale base is a `changed_on_server` conflict that leaves the server copy; a
record the schema refused is `validation_failed`; a pull since the last one carries only
what changed since, a deletion as a tombstone."""

from __future__ import annotations

import uuid
from datetime import datetime

from app.auth import build_viewer
from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from app.services import sync
from tests.factories import count_rows, make_user


def note_fields(category_id, **fields):
    values = {
        "title": "Old oak",
        "body": "",
        "content_language": "en",
        "latitude": 52.5,
        "longitude": 13.4,
        "visibility": NoteVisibility.PRIVATE,
        "comment_policy": CommentPolicy.LOGGED_IN_USERS,
        "client_mutation_id": str(uuid.uuid4()),
        "category_id": category_id,
        "is_deleted": False,
        "updated_utc": None,
        "apply_external_link_changes": False,
    }
    values.update(fields)
    return values


def category_fields(**fields):
    values = {
        "name": "Walks",
        "content_language": "en",
        "parent_category_id": None,
        "is_deleted": False,
        "updated_utc": None,
    }
    values.update(fields)
    return values


def push(app, user, notes=(), categories=()):
    result = sync.push(
        build_viewer(user),
        notes_in=list(notes),
        categories_in=list(categories),
        default_language="en",
        link_budget_seconds=app.config["SYNC_PUSH_LINK_BUDGET_SECONDS"],
    )
    db.session.commit()
    return result


def pull(app, user, since=None):
    result = sync.pull(build_viewer(user), last_sync_utc=since, public_area=None, cap=100)
    db.session.commit()
    return result


def records(found):
    """Pulled note records (in their wire form) by note id."""
    rows = (dict(zip(found.columns, row, strict=True)) for row in found.rows)
    return {uuid.UUID(row["note_id"]): row for row in rows}


def base_of(record):
    """The server copy's `updatedUtc` as a device sends it back (the schema loads it so)."""
    return datetime.fromisoformat(record["updated_utc"].replace("Z", "+00:00"))


def test_a_pushed_note_comes_back_in_its_owners_pull_only(app):
    owner, other = make_user(), make_user()
    category_id, note_id = uuid.uuid4(), uuid.uuid4()

    result = push(
        app,
        owner,
        notes=[sync.PushedRecord(note_id, note_fields(category_id, title="Hollow beech"))],
        categories=[sync.PushedRecord(category_id, category_fields())],
    )

    assert (result.applied_note_ids, result.applied_category_ids) == ([note_id], [category_id])
    assert result.conflicts == []
    mine = pull(app, owner)
    note = records(mine.user_notes)[note_id]
    assert (note["title"], note["category_id"], note["latitude"]) == (
        "Hollow beech",
        str(category_id),
        52.5,
    )
    assert [category["category_id"] for category in mine.user_categories] == [category_id]
    theirs = pull(app, other)
    assert theirs.user_notes.rows == []
    assert theirs.user_categories == []


def test_a_retried_push_applies_nothing_twice(app):
    owner = make_user()
    category_id, note_id = uuid.uuid4(), uuid.uuid4()
    category = sync.PushedRecord(category_id, category_fields())
    note = sync.PushedRecord(note_id, note_fields(category_id))

    first = push(app, owner, notes=[note], categories=[category])
    again = push(app, owner, notes=[note], categories=[category])

    assert first.applied_note_ids == again.applied_note_ids == [note_id]
    assert again.conflicts == []
    assert count_rows(Note, Note.owner_user_id == owner.id) == 1


def test_a_change_on_a_stale_base_is_a_conflict_and_changes_nothing(app):
    owner = make_user()
    category_id, note_id = uuid.uuid4(), uuid.uuid4()
    push(
        app,
        owner,
        notes=[sync.PushedRecord(note_id, note_fields(category_id))],
        categories=[sync.PushedRecord(category_id, category_fields())],
    )
    base = base_of(records(pull(app, owner).user_notes)[note_id])
    push(
        app,
        owner,
        notes=[
            sync.PushedRecord(note_id, note_fields(category_id, title="Device A", updated_utc=base))
        ],
    )

    late = push(
        app,
        owner,
        notes=[
            sync.PushedRecord(note_id, note_fields(category_id, title="Device B", updated_utc=base))
        ],
    )

    assert late.applied_note_ids == []
    [conflict] = late.conflicts
    assert (conflict.entity_type, conflict.id, conflict.reason) == (
        "note",
        note_id,
        "changed_on_server",
    )
    assert conflict.server_record is not None
    assert conflict.server_record["title"] == "Device A"
    assert records(pull(app, owner).user_notes)[note_id]["title"] == "Device A"


def test_a_record_the_schema_refused_is_a_validation_conflict(app):
    owner = make_user()
    note_id = uuid.uuid4()

    result = push(
        app, owner, notes=[sync.PushedRecord(note_id, errors={"title": ["Missing data."]})]
    )

    [conflict] = result.conflicts
    assert (conflict.id, conflict.reason, conflict.errors) == (
        note_id,
        "validation_failed",
        {"title": ["Missing data."]},
    )
    assert count_rows(Note) == 0


def test_a_pull_since_the_last_one_carries_only_changes_and_tombstones(app):
    owner = make_user()
    category_id, kept_id, gone_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    push(
        app,
        owner,
        notes=[
            sync.PushedRecord(kept_id, note_fields(category_id, title="Kept")),
            sync.PushedRecord(gone_id, note_fields(category_id, title="Gone")),
        ],
        categories=[sync.PushedRecord(category_id, category_fields())],
    )
    first = pull(app, owner)
    assert set(records(first.user_notes)) == {kept_id, gone_id}
    base = base_of(records(first.user_notes)[gone_id])

    push(
        app,
        owner,
        notes=[
            sync.PushedRecord(gone_id, note_fields(category_id, is_deleted=True, updated_utc=base))
        ],
    )
    since = pull(app, owner, since=first.server_sync_utc)

    assert since.user_notes.rows == []
    [tombstone] = since.user_note_tombstones
    assert (uuid.UUID(str(tombstone["note_id"])), tombstone["is_deleted"]) == (gone_id, True)
    assert since.user_categories == []  # unchanged since
    assert pull(app, owner, since=since.server_sync_utc).user_note_tombstones == []
