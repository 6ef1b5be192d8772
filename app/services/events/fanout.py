"""Fan-out: the worker's job that turns one event into inbox rows (at least once).

Who hears (issue 25, "Who hears what"; contract: "owner-or-watch overlap is deduplicated
per user"): the owner side of the trackable (its activator; for a team trackable the
team's current admins), the trackable's watchers, and the watchers of the group the event
names; each user once, never the event's actor. Visibility is checked now, at delivery,
by each user's account (policies.trackables.can_view): a user who can no longer see the
trackable hears nothing. Rows are unique per (event, user), so a rerun after a crash adds
only who is still missing. Then the app's event listeners (mail, webhooks) are given the
event and the inbox rows written, in the same transaction.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select

from app.extensions import db
from app.hooks import area_hooks
from app.models.event import Event, Notification
from app.models.team import MembershipStatus, TeamMembership
from app.models.trackable import Trackable, TrackableGroupWatch, TrackableWatch
from app.models.user import User
from app.platform.jobs import JobKind, Task
from app.policies import trackables as trackable_policy
from app.services.events.recording import FAN_OUT


def fan_out(task: Task) -> None:
    """The job: deliver the event named in the payload to its audience's inboxes."""
    event = db.session.get(Event, uuid.UUID(task.payload["eventId"]))
    if event is None or event.trackable_id is None:
        return  # its trackable was deleted since: nobody is told of it
    trackable = db.session.get(Trackable, event.trackable_id)
    if trackable is None:  # pragma: no cover - the event cascades with its trackable
        return
    audience = candidates(event, trackable) - {event.actor_user_id}
    already = set(
        db.session.scalars(select(Notification.user_id).where(Notification.event_id == event.id))
    )
    users = db.session.scalars(select(User).where(User.id.in_(audience - already)))
    written = [
        Notification(event_id=event.id, user_id=user.id, created_utc=event.created_utc)
        for user in users
        if trackable_policy.can_view(trackable_policy.account_viewer(user), trackable)
    ]
    db.session.add_all(written)
    db.session.flush()
    for listener in area_hooks().event_listeners:
        listener(event, written)


def candidates(event: Event, trackable: Trackable) -> set[uuid.UUID | None]:
    """Everyone the event may concern, before the visibility check."""
    found: set[uuid.UUID | None] = {trackable.owner_user_id} if trackable.owner_user_id else set()
    if trackable.team_id is not None:
        found |= set(
            db.session.scalars(
                select(TeamMembership.user_id).where(
                    TeamMembership.team_id == trackable.team_id,
                    TeamMembership.status == MembershipStatus.MEMBER,
                    TeamMembership.is_admin.is_(True),
                )
            )
        )
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


JOB_KINDS = (JobKind(FAN_OUT, fan_out),)
