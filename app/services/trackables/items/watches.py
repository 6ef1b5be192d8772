"""Watch lists (contract: Trackable watch; Events: watch lists exist, delivery is not
described).

Starting and stopping a watch, of a trackable or a group, are idempotent: a repeat changes
nothing and says `changed` false. One watch per user and target is the table's primary key,
so a concurrent double start inserts once. Starting needs the target to be visible (else
404 `trackable_not_found`); stopping never does, so a watch whose target became hidden can
still be ended. Who hears of activity is the events area's fan-out (app.services.events).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, exc, select
from sqlalchemy.orm import selectinload

from app.auth import Viewer
from app.extensions import db
from app.models.trackable import (
    Trackable,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableWatch,
)
from app.policies import trackables as trackable_policy
from app.services.trackables.items.reads import trackable_views


@dataclass(frozen=True)
class WatchOutcome:
    """Whether the caller watches the target now, and whether this request changed it."""

    watching: bool
    changed: bool


@dataclass(frozen=True)
class MyWatches:
    """The ids the caller watches, most recent watch first."""

    trackable_ids: list[uuid.UUID]
    group_ids: list[uuid.UUID]


@dataclass(frozen=True)
class WatchedTarget:
    """One watch of the caller's: its target's id, and its name (and a trackable's public
    code) while the caller may see it; None once hidden, so it can still be ended."""

    target_id: uuid.UUID
    name: str | None
    public_code: str | None = None


@dataclass(frozen=True)
class WatchedTargets:
    """The caller's watches as `list_watches` orders them, with what each one names."""

    trackables: list[WatchedTarget]
    groups: list[WatchedTarget]


def find_watch(model: Any, key: dict[str, uuid.UUID]) -> Any:
    """The caller's watch row of a target, if any."""
    return db.session.get(model, key)


# The loser of a concurrent double start has its unique violation absorbed.
def _start(model: Any, **key: uuid.UUID) -> WatchOutcome:
    if find_watch(model, key) is not None:
        return WatchOutcome(watching=True, changed=False)
    try:
        with db.session.begin_nested():  # the same user starting twice at once
            db.session.add(model(**key))
    except exc.IntegrityError:
        return WatchOutcome(watching=True, changed=False)
    return WatchOutcome(watching=True, changed=True)


def _stop(model: Any, *where: Any) -> bool:
    removed = db.session.execute(delete(model).where(*where))
    return bool(removed.rowcount)  # type: ignore[attr-defined]


def watch_trackable(viewer: Viewer, trackable_id: uuid.UUID) -> WatchOutcome:
    trackable = trackable_policy.get_visible(viewer, trackable_id)
    return _start(TrackableWatch, user_id=viewer.account.id, trackable_id=trackable.id)


# Without a watch, an unknown or hidden target is 404.
def unwatch_trackable(viewer: Viewer, trackable_id: uuid.UUID) -> WatchOutcome:
    user_id = viewer.account.id
    if _stop(
        TrackableWatch,
        TrackableWatch.user_id == user_id,
        TrackableWatch.trackable_id == trackable_id,
    ):
        return WatchOutcome(watching=False, changed=True)
    trackable_policy.get_visible(viewer, trackable_id)  # 404 for what the caller cannot see
    return WatchOutcome(watching=False, changed=False)


# A group the caller controls or may see an item of; a group watch covers the group's items the
# watcher may see. 404 trackable_not_found is the contract's not-found code; its
# trackable_request_rejected is a 400 or 403.
def watch_group(viewer: Viewer, group_id: uuid.UUID) -> WatchOutcome:
    group = trackable_policy.get_visible_group(viewer, group_id)
    return _start(TrackableGroupWatch, user_id=viewer.account.id, group_id=group.id)


def unwatch_group(viewer: Viewer, group_id: uuid.UUID) -> WatchOutcome:
    user_id = viewer.account.id
    if _stop(
        TrackableGroupWatch,
        TrackableGroupWatch.user_id == user_id,
        TrackableGroupWatch.group_id == group_id,
    ):
        return WatchOutcome(watching=False, changed=True)
    trackable_policy.get_visible_group(viewer, group_id)  # 404 for what the caller cannot see
    return WatchOutcome(watching=False, changed=False)


def list_watches(viewer: Viewer) -> MyWatches:
    """Every watch of the caller, including those whose target they can no longer see
    (ids only, so that they can end them)."""
    user_id = viewer.account.id
    trackable_ids = db.session.scalars(
        select(TrackableWatch.trackable_id)
        .where(TrackableWatch.user_id == user_id)
        .order_by(TrackableWatch.created_utc.desc(), TrackableWatch.trackable_id)
    ).all()
    group_ids = db.session.scalars(
        select(TrackableGroupWatch.group_id)
        .where(TrackableGroupWatch.user_id == user_id)
        .order_by(TrackableGroupWatch.created_utc.desc(), TrackableGroupWatch.group_id)
    ).all()
    return MyWatches(list(trackable_ids), list(group_ids))


def describe_watches(viewer: Viewer) -> WatchedTargets:
    """Every watch of the caller (`list_watches`), each with its target's name and a
    trackable's public code where the caller may still see it (the read model's name, by
    the visibility policy), for a page that lists them."""
    mine = list_watches(viewer)
    found = db.session.scalars(
        select(Trackable)
        .where(Trackable.id.in_(mine.trackable_ids), trackable_policy.visible_filter(viewer))
        .options(selectinload(Trackable.group))
    ).all()
    views = {view.trackable_id: view for view in trackable_views(viewer, found)}
    items = [
        WatchedTarget(one, views[one].name, views[one].public_code)
        if one in views
        else WatchedTarget(one, None)
        for one in mine.trackable_ids
    ]
    groups = []
    for group_id in mine.group_ids:
        group = db.session.get(TrackableGroup, group_id)
        visible = group is not None and trackable_policy.can_view_group(viewer, group)
        groups.append(WatchedTarget(group_id, group.name if group and visible else None))
    return WatchedTargets(items, groups)
