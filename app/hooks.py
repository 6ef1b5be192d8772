"""Where areas plug into shared flows: the parts of the Viewer and the account clean-ups.

The factory (app.create_app) builds the one AreaHooks of an app from an explicit list, so
reading create_app shows everything that runs; this module imports no area.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import current_app

if TYPE_CHECKING:
    from app.models.event import Event
    from app.models.user import User


@dataclass
class DeletionCounts:
    """What the account clean-ups report (the counts of the account deletion result)."""

    notes_deleted: int = 0
    categories_deleted: int = 0
    linked_providers_deleted: int = 0
    images_deleted: int = 0


ViewerPart = Callable[["User | None"], Mapping[str, Any]]
AccountCleanup = Callable[["User", DeletionCounts], None]
# A parent kind ("note", "team", "trackable", "trackable_group", "profile",
# "trackable_comment", "journey_stop") and the ids of parents being deleted; the area
# removes what hangs off them and says how many.
ParentRemoval = Callable[[str, Collection[uuid.UUID]], int]
# An event was fanned out: the inbox rows just written for it (none is possible), each with
# its `id` and `user_id` (services.events.fanout.Delivered). Runs in
# the fan-out job's transaction, so what it enqueues (mail, webhook deliveries) commits
# with the inbox rows or not at all, and a rerun after a crash runs it again.
EventListener = Callable[["Event", "Sequence[Any]"], None]


@dataclass(frozen=True)
class AreaHooks:
    """`viewer_parts` each add keyword values to the Viewer of a request (sets of ids are
    merged), run when the request first asks for one of them; `account_cleanups` run in
    this order when an account is deleted; `parent_removals` run when a note, team,
    trackable, group, trackable comment or journey stop is deleted; `event_listeners`
    run after an event's fan-out to the inboxes, in this order."""

    viewer_parts: Sequence[ViewerPart]
    account_cleanups: Sequence[AccountCleanup]
    parent_removals: Sequence[ParentRemoval] = ()
    event_listeners: Sequence[EventListener] = ()


def area_hooks() -> AreaHooks:
    """The hooks of the current app."""
    hooks: AreaHooks = current_app.extensions["area_hooks"]
    return hooks


def remove_children(kind: str, parent_ids: Collection[uuid.UUID]) -> int:
    """Parents of `kind` are being deleted: every area that hangs content off them (images)
    removes it. How many things went."""
    if not parent_ids:
        return 0
    return sum(remove(kind, parent_ids) for remove in area_hooks().parent_removals)
