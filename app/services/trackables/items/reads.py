"""Trackable reads (contract: Trackable; Trackable group; Trackables: reads, creation,
groups; decisions: Lists, Responses the contract leaves open): the read model, the public
list, the caller's own list and one trackable.

The read model never carries a secret code or QR token. An unactivated grouped item shows
the group's defaults where its own values are blank (contract: "Unactivated items fall back
to group defaults"); once activated an item shows its own values only. Lists: most recent
activity first, ties by id; the public list is capped. `journey_statistics` are the ones
stored on the row (services.trackables.statistics).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from sqlalchemy import or_, select
from sqlalchemy.orm import selectinload

from app.auth import Viewer
from app.extensions import db
from app.models.team import Team
from app.models.trackable import Trackable, TrackableGroup, TrackableVisibility
from app.models.user import User
from app.policies import trackables as policy
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.trackables.journey.statistics import JourneyStatistics, stored

CODE_PARAMETER = "trackableCode"


class TrackableRelation(StrEnum):
    """Why a trackable is in the caller's own list, strongest first."""

    ACTIVATED = "Activated"
    TEAM_ADMIN = "TeamAdmin"
    CREATED = "Created"
    UNLOCKED = "Unlocked"


@dataclass(frozen=True)
class TrackableView:
    """A trackable as its read model shows it to one viewer."""

    trackable_id: uuid.UUID
    public_code: str
    name: str
    description: str
    status_message: str
    visibility: TrackableVisibility
    is_activated: bool
    activated_utc: datetime | None
    created_utc: datetime
    last_activity_utc: datetime
    group: TrackableGroup | None
    owner_user_name: str | None
    team_id: uuid.UUID | None
    team_name: str | None
    external_link_url: str | None
    external_link_description: str
    external_link_append_public_trackable_code: bool
    can_manage: bool
    journey_statistics: JourneyStatistics
    relation: TrackableRelation | None = None


TrackableList = Listing[TrackableView]


# A link that opts in gets the public code appended as trackableCode (a trackable's own record is "a
# specific trackable page"); the link's own query is kept as it is.
def link_with_code(url: str, public_code: str) -> str:
    """`url` with `trackableCode=<public_code>` added to its query (an existing
    `trackableCode` is replaced; every other parameter is kept byte for byte)."""
    parts = urlsplit(url)
    kept = [
        item for item in parts.query.split("&") if item and item.split("=", 1)[0] != CODE_PARAMETER
    ]
    kept.append(urlencode({CODE_PARAMETER: public_code}))
    return urlunsplit(parts._replace(query="&".join(kept)))


# The default title falls back to the group's name.
def _own_or(own: str, default: str) -> str:
    return own if own.strip() else default


def _view(
    viewer: Viewer,
    trackable: Trackable,
    group: TrackableGroup | None,
    owner_user_name: str | None,
    team_name: str | None,
) -> TrackableView:
    name, description, status = trackable.name, trackable.description, trackable.status_message
    url, link_description = trackable.external_link_url, trackable.external_link_description
    append = trackable.external_link_append_public_code
    if group is not None and not trackable.is_activated:
        name = _own_or(name, group.default_trackable_title.strip() or group.name)
        description = _own_or(description, group.default_trackable_description)
        status = _own_or(status, group.default_status_message)
        if not url:
            url = group.default_external_link_url
            link_description = group.default_external_link_description
            append = group.default_external_link_append_public_code
    if url and append:
        url = link_with_code(url, trackable.public_code)
    return TrackableView(
        trackable_id=trackable.id,
        public_code=trackable.public_code,
        name=name,
        description=description,
        status_message=status,
        visibility=trackable.visibility,
        is_activated=trackable.is_activated,
        activated_utc=trackable.activated_utc,
        created_utc=trackable.created_utc,
        last_activity_utc=trackable.last_activity_utc,
        group=group,
        owner_user_name=owner_user_name,
        team_id=trackable.team_id,
        team_name=team_name,
        external_link_url=url,
        external_link_description=link_description,
        external_link_append_public_trackable_code=append,
        can_manage=policy.can_manage(viewer, trackable),
        journey_statistics=stored(trackable),
    )


def _names(
    model: type[User] | type[Team], column: Any, ids: set[uuid.UUID | None]
) -> dict[uuid.UUID | None, str]:
    """id -> `column` of the rows of `model` with these ids, in one query."""
    wanted = [one for one in ids if one is not None]
    if not wanted:
        return {}
    rows = db.session.execute(select(model.id, column).where(model.id.in_(wanted)))
    return dict(rows.all())  # rows of (id, name)


def trackable_views(viewer: Viewer, trackables: Sequence[Trackable]) -> list[TrackableView]:
    """Read models of these trackables for this viewer (owners and teams read in one
    query each)."""
    owners = _names(User, User.user_name, {trackable.owner_user_id for trackable in trackables})
    teams = _names(Team, Team.name, {trackable.team_id for trackable in trackables})
    return [
        _view(
            viewer,
            trackable,
            trackable.group,
            owners.get(trackable.owner_user_id),
            teams.get(trackable.team_id),
        )
        for trackable in trackables
    ]


def trackable_view(viewer: Viewer, trackable: Trackable) -> TrackableView:
    """The read model of one trackable the viewer may see (routes answering with a
    trackable record use it)."""
    return trackable_views(viewer, [trackable])[0]


NEWEST_FIRST = Order(Trackable.last_activity_utc.desc(), Trackable.id.desc())


def get_trackable(viewer: Viewer, trackable_id: uuid.UUID) -> TrackableView:
    """One trackable, or 404 `trackable_not_found` when missing or not visible."""
    return trackable_view(viewer, policy.get_visible(viewer, trackable_id))


def public_trackables(viewer: Viewer, *, cap: int) -> TrackableList:
    """Activated, always-visible trackables, most recent activity first, at most `cap`."""
    found = list(
        db.session.scalars(
            select(Trackable)
            .where(policy.public_list_filter())
            .options(selectinload(Trackable.group))
            .order_by(*NEWEST_FIRST.clauses)
            .limit(cap + 1)
        )
    )
    return TrackableList(trackable_views(viewer, found[:cap]), truncated=len(found) > cap)


def relation_of(viewer: Viewer, trackable: Trackable) -> TrackableRelation | None:
    """Why the trackable is the caller's: Activated > TeamAdmin > Created > Unlocked."""
    if policy.is_activator(viewer, trackable):
        return TrackableRelation.ACTIVATED
    if trackable.is_activated and viewer.is_admin_of(trackable.team_id):
        return TrackableRelation.TEAM_ADMIN
    if not trackable.is_activated and policy.can_manage(viewer, trackable):
        return TrackableRelation.CREATED
    if policy.has_unlocked(viewer, trackable):
        return TrackableRelation.UNLOCKED
    return None


def my_trackables(viewer: Viewer, *, page: Page | None = None) -> Listing[TrackableView]:
    """What the caller manages (created and unactivated, activated, administered through
    a team) and what they unlocked, each with its relation; most recent activity first,
    all of them or one `page`."""
    grants = [policy.manage_filter(viewer)]
    if viewer.unlocked_trackable_ids:
        grants.append(Trackable.id.in_(list(viewer.unlocked_trackable_ids)))
    query = select(Trackable).where(or_(*grants)).options(selectinload(Trackable.group))
    found = read_list(query, NEWEST_FIRST, page=page, scalars=True)
    return found.with_items(
        [
            replace(view, relation=relation_of(viewer, trackable))
            for trackable, view in zip(
                found.items, trackable_views(viewer, found.items), strict=True
            )
        ]
    )
