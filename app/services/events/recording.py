"""Recording an event (the transactional outbox): one row in the caller's transaction, and
with it the job that fans it out to inboxes, so a rollback leaves neither and a commit
always has both. Services call one `record*` function per kind of subject where they make
the change: `record` (a trackable), `record_team` (a team's notes and memberships),
`record_note_published` (a note anonymous discovery newly lists).

An event names its subjects by id and keeps only fields any viewer of the subject may see
at the time: a trackable's public code and name, a team's fixed name, a public note's
content language; never a secret, a comment's, status message's or note's text, a note's
title (a team note may leave the team for its author's private notes) or a member's name.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import exists, insert, select
from sqlalchemy.sql.elements import ColumnElement

from app.extensions import db
from app.models.base import new_id, utcnow
from app.models.event import Event
from app.models.note import Note
from app.models.team import Team
from app.models.trackable import Trackable
from app.platform.jobs import enqueue, enqueue_many

FAN_OUT = "events.fan_out"

# Edits of one team note by one user within this window are one event (the first).
TEAM_NOTE_EDITS_COALESCED = timedelta(minutes=15)


class EventType(StrEnum):
    """Every kind of event (docs/contract/events.md, Events and notifications)."""

    ACTIVATED = "trackable.activated"
    COMMENT_WRITTEN = "trackable.comment.written"
    COMMENT_EDITED = "trackable.comment.edited"
    COMMENT_DELETED = "trackable.comment.deleted"
    STOP_ADDED = "trackable.journey_stop.added"
    STOP_DELETED = "trackable.journey_stop.deleted"
    STATUS_MESSAGE_CHANGED = "trackable.status_message.changed"
    ATTACHED_TO_NOTE = "trackable.note.attached"
    SECRET_ROTATED = "trackable.secret.rotated"  # noqa: S105 - an event name, not a secret
    GROUP_ITEM_ADDED = "group.item.added"
    GROUP_ITEM_REMOVED = "group.item.removed"
    # a team's notes and memberships, for its admins
    TEAM_NOTE_CREATED = "team.note.created"
    TEAM_NOTE_EDITED = "team.note.edited"
    TEAM_NOTE_DELETED = "team.note.deleted"
    TEAM_NOTE_REMOVED = "team.note.removed"
    MEMBERSHIP_REQUESTED = "team.membership.requested"
    MEMBER_JOINED = "team.member.joined"
    MEMBER_LEFT = "team.member.left"
    MEMBER_REMOVED = "team.member.removed"
    MEMBER_ROLE_CHANGED = "team.member.role_changed"
    # a note newly in anonymous discovery, for area watchers
    NOTE_PUBLISHED = "note.published"

    @property
    def is_team_event(self) -> bool:
        return self.value.startswith("team.")


def record(
    event_type: EventType,
    trackable: Trackable,
    *,
    actor_id: uuid.UUID | None,
    group_id: uuid.UUID | None = None,
    note_id: uuid.UUID | None = None,
    **ids: uuid.UUID,
) -> Event:
    """Add the event of a change to `trackable` (and the fan-out job) to the session.

    `group_id` defaults to the trackable's group now; a removal names the group it left.
    `ids` are further subjects by id (`comment_id`, `stop_id`), kept in camelCase."""
    return _add(
        event_type,
        {"publicCode": trackable.public_code, "name": trackable.name},
        actor_id=actor_id,
        ids=ids,
        trackable_id=trackable.id,
        group_id=group_id if group_id is not None else trackable.group_id,
        note_id=note_id,
        team_id=trackable.team_id,
    )


def record_team(
    event_type: EventType,
    team: Team,
    *,
    actor_id: uuid.UUID | None,
    note_id: uuid.UUID | None = None,
    **ids: uuid.UUID,
) -> Event | None:
    """Add the event of a change to a team's notes or memberships (`membership_id`).

    Edits of a note are coalesced: none is recorded while the same user's last edit event
    of the note is younger than TEAM_NOTE_EDITS_COALESCED (None then)."""
    if event_type is EventType.TEAM_NOTE_EDITED and _edited_lately(note_id, actor_id):
        return None
    return _add(
        event_type,
        {"teamName": team.name},
        actor_id=actor_id,
        ids=ids,
        note_id=note_id,
        team_id=team.id,
    )


def record_note_published(note: Note, *, actor_id: uuid.UUID | None, is_new: bool) -> None:
    """A note anonymous discovery now lists: heard by area watchers (services.events.
    area_watches). Only a note with a position, and once per note: a note made private
    and public again is not news twice (`is_new` spares the look for a note just made)."""
    if not _is_news(note.is_publicly_discoverable, note.latitude, note.longitude):
        return
    if not is_new and db.session.scalar(
        select(exists().where(*_published(Event.note_id == note.id)))
    ):
        return
    _add(
        EventType.NOTE_PUBLISHED,
        {"contentLanguage": note.content_language},
        actor_id=actor_id,
        ids={},
        note_id=note.id,
        team_id=note.team_id,
    )


def _is_news(is_publicly_discoverable: bool, latitude: Any, longitude: Any) -> bool:
    return is_publicly_discoverable and latitude is not None and longitude is not None


def _published(notes: ColumnElement[bool]) -> tuple[ColumnElement[bool], ...]:
    """The NOTE_PUBLISHED events of the `notes` (a condition on Event.note_id)."""
    return notes, Event.event_type == EventType.NOTE_PUBLISHED.value


def _edits_lately(
    notes: ColumnElement[bool], actor_id: uuid.UUID | None
) -> tuple[ColumnElement[bool], ...]:
    """The actor's edit events of the `notes` still within the coalescing window."""
    since = utcnow() - TEAM_NOTE_EDITS_COALESCED
    return (
        notes,
        Event.event_type == EventType.TEAM_NOTE_EDITED.value,
        Event.actor_user_id == actor_id,
        Event.created_utc >= since,
    )


def _edited_lately(note_id: uuid.UUID | None, actor_id: uuid.UUID | None) -> bool:
    lately = _edits_lately(Event.note_id == note_id, actor_id)
    return bool(db.session.scalar(select(exists().where(*lately))))


def _event_values(
    event_type: EventType,
    fields: dict[str, Any],
    *,
    actor_id: uuid.UUID | None,
    ids: dict[str, uuid.UUID],
    **subjects: uuid.UUID | None,
) -> dict[str, Any]:
    """An event's row: every column, so rows of several kinds share one INSERT."""
    fields.update({_camel(name): str(value) for name, value in ids.items()})
    return {
        "id": new_id(),  # the job names it before any flush
        "event_type": event_type.value,
        "actor_user_id": actor_id,
        "fields": fields,
        "created_utc": utcnow(),
        "trackable_id": None,
        "group_id": None,
        "note_id": None,
        "team_id": None,
        **subjects,
    }


def _add(
    event_type: EventType,
    fields: dict[str, Any],
    *,
    actor_id: uuid.UUID | None,
    ids: dict[str, uuid.UUID],
    **subjects: uuid.UUID | None,
) -> Event:
    event = Event(**_event_values(event_type, fields, actor_id=actor_id, ids=ids, **subjects))
    db.session.add(event)
    enqueue(FAN_OUT, {"eventId": str(event.id)})
    return event


# --- many note writes at once (a sync push) ----------------------------------------------


@dataclass
class NoteEvents:
    """The events of many note writes by one actor, recorded together (a sync push's
    batch, services.notes.batch): `team_note` and `note_published` keep the rules of
    `record_team` and `record_note_published`; `write` makes each look-up they need once
    for all the notes, then writes the events and their fan-out jobs with one INSERT each.
    A batch names each note once (the coalescing and "once per note" look-ups read what
    was there before it)."""

    actor_id: uuid.UUID | None
    _pending: list[tuple[EventType, dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    def team_note(self, event_type: EventType, team: Team, note_id: uuid.UUID) -> None:
        """`record_team` of a team note's change."""
        self._pending.append(
            (event_type, {"teamName": team.name}, {"note_id": note_id, "team_id": team.id})
        )

    def note_published(
        self,
        *,
        note_id: uuid.UUID,
        team_id: uuid.UUID | None,
        content_language: str,
        is_publicly_discoverable: bool,
        latitude: float | None,
        longitude: float | None,
        is_new: bool,
    ) -> None:
        """`record_note_published` on a note's values as written."""
        if not _is_news(is_publicly_discoverable, latitude, longitude):
            return
        subjects = {"note_id": note_id, "team_id": team_id, "is_new": is_new}
        self._pending.append(
            (EventType.NOTE_PUBLISHED, {"contentLanguage": content_language}, subjects)
        )

    def write(self) -> None:
        edited = [
            s["note_id"] for kind, _, s in self._pending if kind is EventType.TEAM_NOTE_EDITED
        ]
        republished = [
            s["note_id"]
            for kind, _, s in self._pending
            if kind is EventType.NOTE_PUBLISHED and not s["is_new"]
        ]
        coalesced = set()
        if edited:
            coalesced = self._found(_edits_lately(Event.note_id.in_(edited), self.actor_id))
        published = set()
        if republished:
            published = self._found(_published(Event.note_id.in_(republished)))
        rows = []
        for kind, fields, subjects in self._pending:
            note_id, team_id = subjects["note_id"], subjects["team_id"]
            if kind is EventType.TEAM_NOTE_EDITED and note_id in coalesced:
                continue
            if kind is EventType.NOTE_PUBLISHED and note_id in published:
                continue
            rows.append(
                _event_values(
                    kind, fields, actor_id=self.actor_id, ids={}, note_id=note_id, team_id=team_id
                )
            )
        self._pending.clear()
        if rows:
            db.session.execute(insert(Event), rows)
            enqueue_many(FAN_OUT, [{"eventId": str(row["id"])} for row in rows])

    @staticmethod
    def _found(where: tuple[ColumnElement[bool], ...]) -> set[uuid.UUID]:
        return set(db.session.scalars(select(Event.note_id).where(*where).distinct()))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
