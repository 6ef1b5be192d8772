"""Recording an event (the transactional outbox): one row in the caller's transaction, and
with it the job that fans it out to inboxes, so a rollback leaves neither and a commit
always has both. Services call `record` where they make the change.

An event names its subjects by id and keeps only fields any viewer of the trackable may
see (its public code and name); never a secret, a comment's or status message's text, or
anything its viewer-dependent views hide.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any

from app.extensions import db
from app.models.base import new_id, utcnow
from app.models.event import Event
from app.models.trackable import Trackable
from app.platform.jobs import enqueue

FAN_OUT = "events.fan_out"


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
    fields: dict[str, Any] = {"publicCode": trackable.public_code, "name": trackable.name}
    fields.update({_camel(name): str(value) for name, value in ids.items()})
    event = Event(
        id=new_id(),  # the job names it before any flush
        event_type=event_type.value,
        trackable_id=trackable.id,
        group_id=group_id if group_id is not None else trackable.group_id,
        note_id=note_id,
        team_id=trackable.team_id,
        actor_user_id=actor_id,
        fields=fields,
        created_utc=utcnow(),
    )
    db.session.add(event)
    enqueue(FAN_OUT, {"eventId": str(event.id)})
    return event


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
