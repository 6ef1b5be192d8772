"""Many rows in one INSERT below the ORM (app.platform.database.insert_by_driver): on
PostgreSQL through psycopg2's execute_values, elsewhere through SQLAlchemy; either way the
rows read back as the ORM writes them, a duplicate key is SQLAlchemy's IntegrityError (or
skipped when asked), and the sync clock stamps the synced tables it wrote."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, exc, func, select

from app.extensions import db
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from app.models.sync import SyncNoteMutation
from app.platform import fast
from app.platform.database import insert_by_driver, insert_ignoring_duplicates
from tests.factories import make_note

WHEN = datetime(2026, 11, 26, 12, 30, 15, 123000, tzinfo=UTC)


@pytest.fixture
def inserts_seen_by_sqlalchemy(app) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT"):
            seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    yield seen
    event.remove(db.engine, "before_cursor_execute", record)


def note_row(template: Note, **fields: Any) -> dict[str, Any]:
    row = {
        "id": uuid.uuid4(),
        "owner_user_id": template.owner_user_id,
        "owner_user_name": template.owner_user_name,
        "team_id": None,
        "category_id": template.category_id,
        "title": "Written offline",
        "body": 'It\'s 100% "quoted" \\ text',
        "content_language": "en",
        "latitude": 52.5,
        "longitude": None,
        "visibility": NoteVisibility.PUBLIC,
        "comment_policy": CommentPolicy.TEAM_MEMBERS,
        "external_link_url": None,
        "external_link_description": "",
        "client_mutation_id": "m-1",
        "is_deleted": False,
        "is_publicly_discoverable": False,
        "created_utc": WHEN,
        "updated_utc": WHEN,
        "last_activity_utc": WHEN,
        "sync_utc": None,
    }
    return {**row, **fields}


def test_rows_read_back_as_the_orm_writes_them(app, inserts_seen_by_sqlalchemy):
    template = make_note()
    template_id = template.id
    rows = [note_row(template, title=f"Note {n}") for n in range(3)]
    inserts_seen_by_sqlalchemy.clear()
    insert_by_driver(db.session, Note.__table__, rows)
    # PostgreSQL with the shortcut on: below SQLAlchemy; else SQLAlchemy's own INSERT.
    below = db.engine.dialect.name == "postgresql" and fast.on("driver_statements")
    expected = 0 if below else 1
    assert len(inserts_seen_by_sqlalchemy) == expected
    db.session.commit()
    db.session.expunge_all()
    found = {
        note.id: note for note in db.session.scalars(select(Note).where(Note.id != template_id))
    }
    assert set(found) == {row["id"] for row in rows}
    note = found[rows[1]["id"]]
    assert note.title == "Note 1"
    assert note.body == 'It\'s 100% "quoted" \\ text'
    assert (note.latitude, note.longitude) == (52.5, None)
    assert note.visibility is NoteVisibility.PUBLIC
    assert note.comment_policy is CommentPolicy.TEAM_MEMBERS
    assert note.created_utc == WHEN


def test_the_synced_tables_it_writes_are_stamped_at_commit(app):
    template = make_note()
    row = note_row(template)
    insert_by_driver(db.session, Note.__table__, [row])
    db.session.commit()
    assert db.session.get(Note, row["id"]).sync_utc is not None


def test_a_duplicate_key_is_an_integrity_error_and_nothing_of_the_statement_stays(app):
    template = make_note()
    rows = [note_row(template), note_row(template, id=template.id)]
    db.session.commit()
    with pytest.raises(exc.IntegrityError), db.session.begin_nested():
        insert_by_driver(db.session, Note.__table__, rows)
    assert db.session.scalar(select(func.count()).select_from(Note)) == 1


def test_duplicates_can_be_skipped(app):
    note = make_note()
    db.session.commit()
    first = {"note_id": note.id, "client_mutation_id": "m-1", "payload_hash": "a"}
    second = {"note_id": note.id, "client_mutation_id": "m-2", "payload_hash": "b"}
    insert_ignoring_duplicates(
        db.session, SyncNoteMutation, [SyncNoteMutation.note_id, "client_mutation_id"], [first]
    )
    again = {**first, "payload_hash": "changed"}
    insert_ignoring_duplicates(
        db.session,
        SyncNoteMutation,
        [SyncNoteMutation.note_id, SyncNoteMutation.client_mutation_id],
        [again, second],
    )
    db.session.commit()
    kept = db.session.execute(
        select(SyncNoteMutation.client_mutation_id, SyncNoteMutation.payload_hash).order_by(
            SyncNoteMutation.client_mutation_id
        )
    ).all()
    assert [tuple(row) for row in kept] == [("m-1", "a"), ("m-2", "b")]


def test_no_rows_is_no_statement(app, inserts_seen_by_sqlalchemy):
    insert_by_driver(db.session, Note.__table__, [])
    assert inserts_seen_by_sqlalchemy == []
