"""Fan-out: the worker's job that turns one event into inbox rows (at least once).

Who hears depends on the event's kind (contract: "owner-or-watch overlap is deduplicated
per user"), each user once, never the event's actor. What may be heard is checked at
delivery, not when the event was written (`may_still_hear`). Rows are unique per (event,
user), so a rerun after a crash adds only who is still missing. Then the app's event
listeners (mail, webhooks) are given the event and the inbox rows written, in the same
transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, insert, select

from app.auth import ANONYMOUS
from app.extensions import db
from app.hooks import area_hooks
from app.models.base import new_id
from app.models.event import Event, Notification
from app.models.note import Note
from app.models.trackable import JourneyStop, Trackable, TrackableGroupWatch, TrackableWatch
from app.models.user import User
from app.platform.jobs import JobKind, Task
from app.policies import teams as team_policy
from app.policies import trackables as trackable_policy
from app.services.events.area_watches import watchers_at
from app.services.events.recording import FAN_OUT, EventType

# The inbox table itself: its rows are written by plain multi-row INSERTs, not ORM objects.
INBOX = cast(Table, Notification.__table__)


@dataclass(frozen=True)
class Audience:
    """Who the event may concern (before the actor and the rows already written are left
    out), and the check at delivery: of those ids, the ones who may hear it now."""

    user_ids: set[uuid.UUID]
    may_hear: Callable[[set[uuid.UUID]], set[uuid.UUID]] = lambda user_ids: user_ids


@dataclass(frozen=True)
class Delivered:
    """An inbox row just written: what the event listeners (mail, webhooks) are given."""

    id: uuid.UUID
    user_id: uuid.UUID


def fan_out(task: Task) -> None:
    """The job: deliver the event named in the payload to its audience's inboxes, in one
    multi-row INSERT (an event may reach thousands of group watchers)."""
    event = db.session.get(Event, uuid.UUID(task.payload["eventId"]))
    if event is None:
        return
    audience = audience_of(event)
    if audience is None:
        return  # its subject was deleted since: nobody is told of it
    wanted = audience.user_ids - {event.actor_user_id}
    already = set(
        db.session.scalars(select(Notification.user_id).where(Notification.event_id == event.id))
    )
    written = [
        Delivered(new_id(), user_id) for user_id in sorted(audience.may_hear(wanted - already))
    ]
    if written:
        db.session.execute(
            insert(INBOX).execution_options(insertmanyvalues_page_size=5000),
            [
                {
                    "id": row.id,
                    "event_id": event.id,
                    "user_id": row.user_id,
                    "created_utc": event.created_utc,
                    "read_utc": None,
                }
                for row in written
            ],
        )
    for listener in area_hooks().event_listeners:
        listener(event, written)


# A trackable's events: its owner side (the activator; for a team trackable the team's current
# admins), its watchers, and the watchers of the group the event names; a new journey stop also
# reaches the area watchers around it when anyone may see the trackable
# (services.events.area_watches). team.*: the team's current admins. note.published: the area
# watchers around the note, in its language. Checked now: a trackable hearer by their account
# (policies.trackables.can_view), a team's admins by being admins now, area watchers only on what
# the anonymous viewer sees now.
def audience_of(event: Event) -> Audience | None:
    """The audience of the event's kind; None when its subject is gone."""
    kind = EventType(event.event_type)
    if kind.is_team_event:
        return team_audience(event)
    if kind is EventType.NOTE_PUBLISHED:
        return published_note_audience(event)
    return trackable_audience(event)


def team_audience(event: Event) -> Audience | None:
    """The team's admins now: who lost the right since the change hears nothing."""
    if event.team_id is None:  # pragma: no cover - the event cascades with its team
        return None
    return Audience(team_admins(event.team_id))


def published_note_audience(event: Event) -> Audience | None:
    """The watchers of an area holding the note, if anonymous discovery still lists it."""
    note = db.session.get(Note, event.note_id) if event.note_id is not None else None
    if note is None or not note.is_publicly_discoverable:
        return None
    if note.latitude is None or note.longitude is None:
        return None
    return Audience(
        watchers_at(note.latitude, note.longitude, content_language=note.content_language)
    )


def trackable_audience(event: Event) -> Audience | None:
    """The owner side, the item's and the group's watchers, and for a new journey stop
    of a trackable anyone may see, the area watchers around the stop."""
    if event.trackable_id is None:
        return None  # its trackable was deleted since
    trackable = db.session.get(Trackable, event.trackable_id)
    if trackable is None:  # pragma: no cover - the event cascades with its trackable
        return None
    found = trackable_candidates(event, trackable)
    if event.event_type == EventType.STOP_ADDED and trackable_policy.can_view(ANONYMOUS, trackable):
        found |= stop_area_watchers(event)

    return Audience(found, lambda user_ids: trackable_policy.viewers_among(trackable, user_ids))


def stop_area_watchers(event: Event) -> set[uuid.UUID]:
    stop_id = event.fields.get("stopId")
    stop = db.session.get(JourneyStop, uuid.UUID(stop_id)) if stop_id else None
    if stop is None:
        return set()  # deleted since
    return watchers_at(stop.latitude, stop.longitude)


def may_still_hear(event: Event, user: User) -> bool:
    """The delivery check again, later (a mail or webhook sent after the fan-out): whether
    `user` may still hear of `event` now, by the same rule as its kind's audience."""
    kind = EventType(event.event_type)
    if kind.is_team_event:
        return event.team_id is not None and user.id in team_admins(event.team_id)
    if kind is EventType.NOTE_PUBLISHED:
        note = db.session.get(Note, event.note_id) if event.note_id is not None else None
        return note is not None and note.is_publicly_discoverable
    trackable = db.session.get(Trackable, event.trackable_id) if event.trackable_id else None
    return trackable is not None and user.id in trackable_policy.viewers_among(trackable, {user.id})


def team_admins(team_id: uuid.UUID) -> set[uuid.UUID]:
    return team_policy.active_member_ids([team_id], admins=True)


def trackable_candidates(event: Event, trackable: Trackable) -> set[uuid.UUID]:
    """Everyone a trackable's event may concern, before the visibility check."""
    found: set[uuid.UUID] = {trackable.owner_user_id} if trackable.owner_user_id else set()
    if trackable.team_id is not None:
        found |= team_admins(trackable.team_id)
    found |= set(
        db.session.scalars(
            select(TrackableWatch.user_id).where(TrackableWatch.trackable_id == trackable.id)
        )
    )
    if event.group_id is not None:
        found |= set(
            db.session.scalars(
                select(TrackableGroupWatch.user_id).where(
                    TrackableGroupWatch.group_id == event.group_id
                )
            )
        )
    return found


JOB_KINDS = (JobKind(FAN_OUT, fan_out, lane="events"),)
