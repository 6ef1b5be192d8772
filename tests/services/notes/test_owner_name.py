"""The owner's user name stored on each note (what discovery lists without a lookup per
row) follows the owner: filled on insert, cascaded on a rename, refused when it names
someone else."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.user import User
from tests.factories import make_note, make_user


def test_a_new_note_stores_its_owners_user_name(app):
    owner = make_user("stored_owner")

    note = make_note(owner=owner)

    assert note.owner_user_name == "stored_owner"


def test_a_rename_reaches_every_note_of_the_owner_and_discovery(app, api):
    owner = make_user("before_rename")
    other = make_user("someone_else")
    for _ in range(3):
        make_note(owner=owner, visibility=NoteVisibility.PUBLIC, latitude=10.0, longitude=10.0)
    make_note(owner=other, visibility=NoteVisibility.PUBLIC, latitude=10.0, longitude=10.0)

    db.session.execute(update(User).where(User.id == owner.id).values(user_name="after_rename"))
    db.session.commit()

    stored = db.session.execute(select(Note.owner_user_id, Note.owner_user_name)).all()
    assert sorted(name for owner_id, name in stored if owner_id == owner.id) == ["after_rename"] * 3
    assert [name for owner_id, name in stored if owner_id == other.id] == ["someone_else"]
    listed = api.get(
        "/api/notes/public/bounds?minLatitude=9&minLongitude=9&maxLatitude=11&maxLongitude=11"
    ).get_json()
    assert sorted(note["ownerUserName"] for note in listed) == ["after_rename"] * 3 + [
        "someone_else"
    ]


def test_a_stored_name_of_someone_else_is_refused(app):
    owner = make_user("real_owner")
    make_user("not_the_owner")
    note = make_note(owner=owner)

    renaming = update(Note).where(Note.id == note.id).values(owner_user_name="not_the_owner")

    with pytest.raises(IntegrityError):
        db.session.execute(renaming)
    db.session.rollback()
