"""Group membership of a trackable: detach and attach (contract: Trackable group
membership; Limits: a trackable in one group at a time, at most 100 per group).

One group at a time is the schema's (`group_id` is one column); attaching is one
conditional UPDATE, so of two concurrent attaches exactly one wins, and the group's row is
locked first so two attaches cannot both take its last place. Attach checks run in this
order: the trackable (404), its state (400), the group (404), permission (403), room
(400).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import func, select, update

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import Trackable, TrackableGroup
from app.policies import trackables as trackable_policy
from app.services import events

ALREADY_IN_GROUP = "The trackable is already in a group: detach it from its group first."


@dataclass(frozen=True)
class GroupMembership:
    """A trackable and the group it is in now (None when detached)."""

    trackable_id: uuid.UUID
    group: TrackableGroup | None


# The original activator or an eligible group admin (policies.trackables.can_detach), else 403
# trackable_group_detach_forbidden. Not in a group: 400 trackable_request_rejected.
def detach_from_group(viewer: Viewer, trackable_id: uuid.UUID) -> GroupMembership:
    """Take the trackable out of its group."""
    trackable = trackable_policy.get_visible(viewer, trackable_id)
    if trackable.group_id is None:
        raise TrackableError(Code.TRACKABLE_REQUEST_REJECTED, "The trackable is not in a group.")
    if not trackable_policy.can_detach(viewer, trackable):
        raise TrackableError(
            Code.TRACKABLE_GROUP_DETACH_FORBIDDEN,
            "Only the trackable's activator or an admin of its group may detach it.",
        )
    left = trackable.group_id
    trackable.group = None
    trackable.updated_utc = utcnow()
    events.record(
        events.EventType.GROUP_ITEM_REMOVED, trackable, actor_id=viewer.user_id, group_id=left
    )
    db.session.flush()
    return GroupMembership(trackable.id, None)


def claim_place(trackable: Trackable, group: TrackableGroup, capacity: int) -> bool:
    """Put a detached trackable into the group, unless it joined a group meanwhile or the
    group filled up (True: done). One conditional UPDATE decides."""
    members = (
        select(func.count())
        .select_from(Trackable)
        .where(Trackable.group_id == group.id)
        .scalar_subquery()
    )
    placed = db.session.execute(
        update(Trackable)
        .where(Trackable.id == trackable.id, Trackable.group_id.is_(None), members < capacity)
        .values(group_id=group.id, updated_utc=utcnow())
        .execution_options(synchronize_session=False)
    )
    return placed.rowcount == 1  # type: ignore[attr-defined]


def _group_count(group: TrackableGroup) -> int:
    return (
        db.session.scalar(
            select(func.count()).select_from(Trackable).where(Trackable.group_id == group.id)
        )
        or 0
    )


# The original activator who also controls the destination group, or an eligible team admin
# (can_attach), else 403 trackable_group_attach_forbidden. Already in a group (any caller): 400
# trackable_request_rejected, detach must come first. The group must be visible to the caller (else
# 404) and have room: at most TRACKABLES_PER_GROUP_MAX items, as at creation.
def attach_to_group(
    viewer: Viewer, trackable_id: uuid.UUID, group_id: uuid.UUID
) -> GroupMembership:
    """Put a detached trackable into a group the caller may attach it to."""
    trackable = trackable_policy.get_visible(viewer, trackable_id)
    if trackable.group_id is not None:
        raise TrackableError(Code.TRACKABLE_REQUEST_REJECTED, ALREADY_IN_GROUP)
    group = trackable_policy.get_visible_group(viewer, group_id)
    if not trackable_policy.can_attach(viewer, trackable, group):
        raise TrackableError(
            Code.TRACKABLE_GROUP_ATTACH_FORBIDDEN,
            "Only the trackable's activator (or an admin of its team) who also controls "
            "the destination group may attach it.",
        )
    capacity = current_app.config["TRACKABLES_PER_GROUP_MAX"]
    # Lock the group's row (PostgreSQL; SQLite runs one writer at a time anyway) so that
    # concurrent attaches into this group count its items one after the other.
    db.session.execute(
        select(TrackableGroup.id).where(TrackableGroup.id == group.id).with_for_update()
    )
    if not claim_place(trackable, group, capacity):
        if _group_count(group) >= capacity:
            raise TrackableError(
                Code.TRACKABLE_REQUEST_REJECTED,
                f"The group is full: a group holds at most {capacity} trackables.",
            )
        raise TrackableError(Code.TRACKABLE_REQUEST_REJECTED, ALREADY_IN_GROUP)
    db.session.refresh(trackable)
    events.record(events.EventType.GROUP_ITEM_ADDED, trackable, actor_id=viewer.user_id)
    return GroupMembership(trackable.id, trackable.group)
