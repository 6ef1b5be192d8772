"""Many note changes of one viewer, each checked by the one-note use cases' own rules and
written together (a sync push, services.sync; contract: Note; Sync).

`WriteEach` writes each change at once through create_note, move_note and delete_note.
`NoteBatch` checks each change when it is handed in, with the functions those use cases
call, so a refused change is refused before anything is written; `write` then writes the
accepted ones with one statement per kind of change. A batch decides every change from the
notes as read before it, so it names a note at most once; the caller must have read the
changed notes locked, with their trackables. Rows go in id order, so two batches writing the
same ids wait for each other instead of deadlocking.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from sqlalchemy import select, update

from app.auth import Viewer
from app.extensions import db
from app.hooks import remove_children
from app.models.base import utcnow
from app.models.category import Category, OwnerScope
from app.models.note import Note, discoverable, owner_user_name_of
from app.policies import categories as category_policy
from app.services import categories, events
from app.services.notes import queries
from app.services.notes.notes import (
    check_managed,
    create_note,
    delete_note,
    move_note,
    moved_values,
    new_note_values,
    note_team,
    tombstone_values,
)

# Every column a move or a delete may change: each changed row is written whole, so the
# UPDATE has one form for all of them (the rows are locked: nothing else changed them).
CHANGED_COLUMNS = (
    "category_id",
    "content_language",
    "latitude",
    "longitude",
    "title",
    "body",
    "visibility",
    "comment_policy",
    "client_mutation_id",
    "external_link_url",
    "external_link_description",
    "is_deleted",
    "is_publicly_discoverable",
    "updated_utc",
    "last_activity_utc",
)


def _in_id_order(row: Mapping[str, Any]) -> int:
    """A row's place in id order: its UUID's integer, the order UUIDs compare in (sorting
    by the integer skips UUID's Python-level comparison, a few ms on 500 rows)."""
    return row["id"].int


def _held_categories(category_ids: Iterable[uuid.UUID]) -> list[Category]:
    """The categories a batch's changes name, read in one statement; the batch holds the
    list so that they stay in the session, where each rule that asks for one finds them."""
    wanted = set(category_ids)
    if not wanted:
        return []
    return list(db.session.scalars(select(Category).where(Category.id.in_(wanted))))


class NoteWrites(Protocol):
    """Where a sync push sends the note changes it accepted."""

    def create(self, scope: OwnerScope, **fields: Any) -> None: ...

    def move(self, scope: OwnerScope, note: Note, changes: dict[str, Any]) -> None: ...

    def delete(self, scope: OwnerScope, note: Note, *, client_mutation_id: str | None) -> None: ...


class WriteEach:
    """Each change written at once by the one-note use cases (they lock and read the note
    again themselves)."""

    def __init__(self, viewer: Viewer, *, category_ids: Iterable[uuid.UUID] = ()) -> None:
        """`category_ids`: the categories the changes name (`_held_categories`)."""
        self.viewer = viewer
        self._categories = _held_categories(category_ids)

    def create(self, scope: OwnerScope, **fields: Any) -> None:
        create_note(self.viewer, scope, **fields)

    def move(self, scope: OwnerScope, note: Note, changes: dict[str, Any]) -> None:
        move_note(self.viewer, scope, note.id, changes)

    def delete(self, scope: OwnerScope, note: Note, *, client_mutation_id: str | None) -> None:
        delete_note(self.viewer, scope, note.id, client_mutation_id=client_mutation_id)


class NoteBatch:
    """Changes checked as they come, written together by `write` (module docstring)."""

    def __init__(self, viewer: Viewer, *, category_ids: Iterable[uuid.UUID] = ()) -> None:
        """`category_ids`: the categories the changes name (`_held_categories`)."""
        self.viewer = viewer
        self._categories = _held_categories(category_ids)
        self._new: list[dict[str, Any]] = []
        self._changed: list[tuple[Note, dict[str, Any]]] = []
        self._deleted: list[uuid.UUID] = []
        self._events = events.NoteEvents(viewer.user_id)
        self._roots: dict[tuple[OwnerScope, str], Category] = {}

    def create(self, scope: OwnerScope, **fields: Any) -> None:
        """create_note's rules; the note is written by `write`."""
        team = category_policy.require_scope(self.viewer, scope)
        values = new_note_values(
            self.viewer.account.id, scope, team, default_category=self._root, **fields
        )
        self._new.append(values)
        if team is not None:
            self._events.team_note(events.EventType.TEAM_NOTE_CREATED, team, values["id"])
        self._published(values["id"], scope.team_id, values, is_new=True)

    def move(self, scope: OwnerScope, note: Note, changes: dict[str, Any]) -> None:
        """move_note's rules on the note read locked; written by `write`."""
        category_policy.require_scope(self.viewer, scope)
        check_managed(self.viewer, scope, note)
        now = utcnow()
        values = {**moved_values(scope, note, changes), "updated_utc": now}
        row = self._changed_row(note, {**values, "last_activity_utc": now})
        self._team_event(events.EventType.TEAM_NOTE_EDITED, note)
        if not note.is_publicly_discoverable:
            self._published(note.id, note.team_id, row, is_new=False)

    def delete(self, scope: OwnerScope, note: Note, *, client_mutation_id: str | None) -> None:
        """delete_note's rules on the note read locked; written by `write`."""
        category_policy.require_scope(self.viewer, scope)
        check_managed(self.viewer, scope, note)
        self._changed_row(note, tombstone_values(client_mutation_id))
        self._deleted.append(note.id)
        self._team_event(events.EventType.TEAM_NOTE_DELETED, note)

    # One multi-row INSERT of the new notes (queries.insert_notes), one executemany UPDATE of the
    # changed and deleted ones, one clean-up of the deleted notes' images, one INSERT of their
    # events (and one of the events' jobs). Search rows follow the notes by themselves
    # (app.models.note_search); the sync clock stamps the rows at commit (services.sync.clock).
    def write(self) -> None:
        """Write what was accepted (module docstring). A database constraint that still
        refuses a row (a concurrent request wrote the same id) raises IntegrityError: the
        caller runs this inside a savepoint and decides again."""
        if self._new:
            name = db.session.scalar(owner_user_name_of(self.viewer.account.id))
            rows = [{**values, "owner_user_name": name, "sync_utc": None} for values in self._new]
            queries.insert_notes(sorted(rows, key=_in_id_order))
        if self._changed:
            rows = [{"id": note.id, **row, "sync_utc": None} for note, row in self._changed]
            db.session.execute(update(Note), sorted(rows, key=_in_id_order))
            for note, _ in self._changed:  # the session's copies are older than the rows
                db.session.expire(note)
        remove_children("note", self._deleted)  # a tombstone keeps no images
        self._events.write()

    def _changed_row(self, note: Note, values: dict[str, Any]) -> dict[str, Any]:
        row = {name: getattr(note, name) for name in CHANGED_COLUMNS}
        row.update(values)
        row["is_publicly_discoverable"] = discoverable(
            row["is_deleted"], row["visibility"], lambda: bool(note.trackables)
        )
        self._changed.append((note, row))
        return row

    def _team_event(self, event_type: events.EventType, note: Note) -> None:
        team = note_team(note)
        if team is not None:
            self._events.team_note(event_type, team, note.id)

    def _published(
        self, note_id: uuid.UUID, team_id: uuid.UUID | None, row: dict[str, Any], *, is_new: bool
    ) -> None:
        self._events.note_published(
            note_id=note_id,
            team_id=team_id,
            content_language=row["content_language"],
            is_publicly_discoverable=row["is_publicly_discoverable"],
            latitude=row["latitude"],
            longitude=row["longitude"],
            is_new=is_new,
        )

    def _root(self, scope: OwnerScope, content_language: str) -> Category:
        """The default root for notes without a category: looked up (or made) once per
        scope and language for the whole batch."""
        key = (scope, content_language)
        if key not in self._roots:
            self._roots[key] = categories.default_category(scope, content_language)
        return self._roots[key]
