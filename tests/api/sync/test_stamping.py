"""The sync clock stamps, at commit, the rows of the synced tables a transaction wrote, and
searches no other (app.services.sync.clock): a note's write sends no stamping UPDATE to
categories or to sync departures, and every row a write left unstamped is stamped by the
time it commits, whichever way it was written (the ORM, a statement, a batch)."""

from __future__ import annotations

from sqlalchemy import event, func, select

from app.extensions import db
from app.models.category import Category
from app.models.note import Note
from app.models.sync import SyncDeparture
from tests.api.sync.helpers import category_record, note_record, pulled, pushed
from tests.factories import make_category, make_user

SYNCED = {"notes": Note, "categories": Category, "sync_departures": SyncDeparture}


def _stamping(api, call) -> tuple[list[str], object]:
    """The tables `call`'s request sent a stamping UPDATE to, and its response."""
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        words = statement.lower().split()
        if words[:1] == ["update"] and words[2:3] == ["set"] and words[3].startswith("sync_utc="):
            seen.append(words[1])

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        response = call()
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    return seen, response


def _unstamped() -> dict[str, int]:
    db.session.rollback()
    return {
        name: db.session.scalar(
            select(func.count()).select_from(model).where(model.sync_utc.is_(None))
        )
        for name, model in SYNCED.items()
    }


def test_a_note_create_stamps_only_the_notes(api):
    alice = make_user("alice")
    seen, response = _stamping(
        api, lambda: api.as_user(alice).post("/api/notes/mine", json={"title": "Oak"})
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    # Its default category was made in the same transaction: both tables, no departures.
    assert sorted(seen) == ["categories", "notes"]
    seen, response = _stamping(
        api, lambda: api.as_user(alice).post("/api/notes/mine", json={"title": "Elm"})
    )
    assert response.status_code == 201
    assert seen == ["notes"]
    assert _unstamped() == {"notes": 0, "categories": 0, "sync_departures": 0}


def test_a_read_stamps_nothing(api):
    alice = make_user("alice")
    seen, response = _stamping(api, lambda: api.as_user(alice).get("/api/notes/mine"))
    assert response.status_code == 200
    assert seen == []


def test_a_push_of_notes_and_categories_stamps_both_and_a_pull_gets_them(api):
    alice = make_user("alice")
    folder = make_category(alice, name="Trail")
    first = pulled(api, alice)
    new_category = category_record(name="Ridge")
    records = [note_record(categoryId=str(folder.id)) for _ in range(3)]
    seen, response = _stamping(
        api, lambda: pushed(api, alice, notes=records, categories=[new_category])
    )
    assert sorted(response["appliedNoteIds"]) == sorted(r["noteId"] for r in records)
    assert sorted(seen) == ["categories", "notes"]
    assert _unstamped() == {"notes": 0, "categories": 0, "sync_departures": 0}
    later = pulled(api, alice, first["serverSyncUtc"])
    assert {n["noteId"] for n in later["userNotes"]} == {r["noteId"] for r in records}
    assert new_category["categoryId"] in {c["categoryId"] for c in later["userCategories"]}
