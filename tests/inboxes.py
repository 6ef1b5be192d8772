"""The inbox tests' cast and helpers, shared by the notification, webhook and trackable
tests: a team trackable in a group, activated by `owner` (a team member who also controls
the group), the team's `admin`, a trackable watcher, a group watcher, an `author` who
writes comments and stops, and a `stranger` (the `world` fixture); the inbox as each of
them reads it once the worker has run; and area watches around a point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from app.extensions import db
from app.models.trackable import Trackable, TrackableGroup, TrackableGroupWatch, TrackableWatch
from app.models.user import User
from tests.factories import make_group, make_team, make_trackable, make_user
from tests.jobs import run_jobs

ZURICH = (47.37, 8.54)


@dataclass
class World:
    trackable: Trackable
    group: TrackableGroup
    team: Any
    owner: User
    admin: User
    item_watcher: User
    group_watcher: User
    author: User
    stranger: User

    def people(self) -> dict[str, User]:
        return {
            name: getattr(self, name)
            for name in ("owner", "admin", "item_watcher", "group_watcher", "author", "stranger")
        }


def watch(user: User, trackable: Trackable | None = None, group: Any = None) -> None:
    if trackable is not None:
        db.session.add(TrackableWatch(user_id=user.id, trackable_id=trackable.id))
    if group is not None:
        db.session.add(TrackableGroupWatch(user_id=user.id, group_id=group.id))
    db.session.commit()


@pytest.fixture
def world(app) -> World:
    owner, admin = make_user("olga"), make_user("tara")
    team = make_team(admin, members=(owner,))
    group = make_group(owner, name="Travel bugs")
    trackable = make_trackable(owner, team_id=team.id, group_id=group.id, name="Blue bug")
    item_watcher, group_watcher = make_user("iris"), make_user("gwen")
    watch(item_watcher, trackable=trackable)
    watch(group_watcher, group=group)
    return World(
        trackable=trackable,
        group=group,
        team=team,
        owner=owner,
        admin=admin,
        item_watcher=item_watcher,
        group_watcher=group_watcher,
        author=make_user("ann"),
        stranger=make_user("sam"),
    )


def inbox(app: Any, api: Any, user: User, **query: Any) -> list[dict[str, Any]]:
    """The user's notifications once every due job ran."""
    run_jobs(app)
    response = api.as_user(user).get("/api/notifications", query_string=query)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def hearers(app: Any, api: Any, world: World, event_type: str) -> set[str]:
    """Who of the world's people has a notification of `event_type`."""
    run_jobs(app)
    return {
        name
        for name, user in world.people().items()
        if any(one["eventType"] == event_type for one in inbox(app, api, user))
    }


def watch_area(
    api: Any, user: User, south: float, west: float, north: float, east: float, **extra: Any
) -> None:
    body = {"minLatitude": south, "minLongitude": west, "maxLatitude": north, "maxLongitude": east}
    response = api.as_user(user).post("/api/watches/areas", json={**body, **extra})
    assert response.status_code == 201, response.data


def around(api: Any, user: User, point: tuple[float, float] = ZURICH, **extra: Any) -> None:
    latitude, longitude = point
    watch_area(api, user, latitude - 0.1, longitude - 0.1, latitude + 0.1, longitude + 0.1, **extra)
