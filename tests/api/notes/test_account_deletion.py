"""DELETE /api/account removes the user's notes and categories and reports real counts
(contract: Identity and account; Account deletion result)."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note, NoteComment
from app.models.trackable import TrackableUnlock, note_trackables
from tests.factories import (
    attach_trackable,
    make_category,
    make_comment,
    make_note,
    make_trackable,
    make_user,
    unlock_trackable,
)


def count(model, *where) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


def test_account_deletion_counts_and_removes_notes_and_categories(api):
    user = make_user()
    root = make_category(user)
    child = make_category(user, parent=root)
    make_category(user, is_deleted=True)
    make_note(user, category=root)
    make_note(user, category=child)
    make_note(user, category=child, is_deleted=True)
    response = api.as_user(user).delete("/api/account")
    assert response.status_code == 200
    body = response.get_json()
    assert (body["notesDeleted"], body["categoriesDeleted"]) == (2, 2)
    assert count(Note) == 0
    assert count(Category) == 0


def test_account_deletion_removes_comments_attachments_and_unlocks(api):
    user, other = make_user(), make_user()
    mine = make_note(user, visibility=NoteVisibility.PUBLIC)
    theirs = make_note(other, visibility=NoteVisibility.PUBLIC)
    make_comment(mine, other, body="on the deleted user's note")
    make_comment(theirs, user, body="written by the deleted user")
    kept = make_comment(theirs, other, body="someone else's")
    # Trackables belong to `other`: what happens to a deleted user's own trackables is
    # the trackables area's clean-up.
    attach_trackable(mine, make_trackable(other))
    unlock_trackable(user, attach_trackable(theirs))
    mine_id, theirs_id, kept_id = mine.id, theirs.id, kept.id
    assert api.as_user(user).delete("/api/account").status_code == 200
    assert set(db.session.scalars(select(NoteComment.id))) == {kept_id}
    assert count(note_trackables, note_trackables.c.note_id == mine_id) == 0
    assert count(TrackableUnlock) == 0
    assert set(db.session.scalars(select(Note.id))) == {theirs_id}


def test_account_deletion_leaves_other_users_and_team_trees_alone(api):
    user, other = make_user(), make_user()
    make_note(other)
    team_category = make_category(team_id=uuid.uuid4())
    body = api.as_user(user).delete("/api/account").get_json()
    assert (body["notesDeleted"], body["categoriesDeleted"]) == (0, 0)
    assert count(Note) == 1
    assert db.session.get(Category, team_category.id) is not None
