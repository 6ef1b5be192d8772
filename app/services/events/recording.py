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
from datetime import timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import exists, select

from app.extensions import db
from app.models.base import new_id, utcnow
from app.models.event import Event
from app.models.note import Note
from app.models.team import Team
from app.models.trackable import Trackable
from app.platform.jobs import enqueue

FAN_OUT = "events.fan_out"

# Edits of one team note by one user within this window are one event (the first).
TEAM_NOTE_EDITS_COALESCED = timedelta(minutes=15)


class EventType(StrEnum):
    """Every kind of event (docs/contract-notes.md, Events and notifications)."""

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
    if not note.is_publicly_discoverable or note.latitude is None or note.longitude is None:
        return
    if not is_new and db.session.scalar(
        select(
            exists().where(
                Event.note_id == note.id, Event.event_type == EventType.NOTE_PUBLISHED.value
            )
        )
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


def _edited_lately(note_id: uuid.UUID | None, actor_id: uuid.UUID | None) -> bool:
    since = utcnow() - TEAM_NOTE_EDITS_COALESCED
    return bool(
        db.session.scalar(
            select(
                exists().where(
                    Event.note_id == note_id,
                    Event.event_type == EventType.TEAM_NOTE_EDITED.value,
                    Event.actor_user_id == actor_id,
                    Event.created_utc >= since,
                )
            )
        )
    )


def _add(
    event_type: EventType,
    fields: dict[str, Any],
    *,
    actor_id: uuid.UUID | None,
    ids: dict[str, uuid.UUID],
    **subjects: uuid.UUID | None,
) -> Event:
    fields.update({_camel(name): str(value) for name, value in ids.items()})
    event = Event(
        id=new_id(),  # the job names it before any flush
        event_type=event_type.value,
        actor_user_id=actor_id,
        fields=fields,
        created_utc=utcnow(),
        **subjects,
    )
    db.session.add(event)
    enqueue(FAN_OUT, {"eventId": str(event.id)})
    return event


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
