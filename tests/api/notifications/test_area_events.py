"""Area watchers hear of notes anonymous discovery newly lists inside their window (in
their language, when they chose one) and of new journey stops of publicly visible
trackables inside it; nobody else, never the actor, nothing of what the anonymous viewer
cannot see at delivery, and once per event even with another reason to hear."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.event import Event
from app.models.trackable import TrackableVisibility
from app.models.user import User
from tests.factories import make_team, make_trackable, make_user, unlock_trackable
from tests.inboxes import ZURICH, around, inbox, watch, watch_area
from tests.jobs import run_jobs


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.data
    return response.get_json() if response.data else None


def note(
    api: Any,
    user: User,
    point: tuple[float, float] = ZURICH,
    visibility: str = "Public",
    **extra: Any,
) -> str:
    latitude, longitude = point
    body = {"title": "A bench", "visibility": visibility, "latitude": latitude}
    body |= {"longitude": longitude, **extra}
    return ok(api.as_user(user).post("/api/notes/mine", json=body), 201)["noteId"]


def move(api: Any, user: User, note_id: str, **changes: Any) -> None:
    ok(api.as_user(user).post(f"/api/notes/mine/{note_id}/move", json=changes))


def kinds(app: Any, api: Any, user: User) -> list[str]:
    return [one["eventType"] for one in inbox(app, api, user)]


@pytest.fixture
def author(app) -> User:
    return make_user("ann")


# --- new public notes --------------------------------------------------------------------


def test_a_public_note_reaches_the_watchers_of_areas_holding_it(app, api, author):
    inside, outside, bystander = make_user(), make_user(), make_user()
    around(api, inside)
    around(api, outside, (48.2, 16.37))
    note_id = note(api, author)
    (heard,) = inbox(app, api, inside)
    assert heard["eventType"] == "note.published"
    assert heard["noteId"] == note_id
    assert heard["text"] == "A new public note in an area you watch."
    assert inbox(app, api, outside) == []
    assert inbox(app, api, bystander) == []
    assert inbox(app, api, author) == []


def test_the_watch_language_filters_notes(app, api, author):
    german, english, every = make_user(), make_user(), make_user()
    around(api, german, contentLanguage="de")
    around(api, english, contentLanguage="EN")
    around(api, every)
    note(api, author, contentLanguage="en")
    assert kinds(app, api, german) == []
    assert kinds(app, api, english) == ["note.published"]
    assert kinds(app, api, every) == ["note.published"]


def test_a_note_anonymous_discovery_does_not_list_reaches_nobody(app, api, author):
    watcher = make_user()
    around(api, watcher)
    note(api, author, visibility="Private")
    assert inbox(app, api, watcher) == []
    assert db.session.scalars(select(Event)).all() == []


def test_a_gated_note_discovery_lists_is_heard(app, api, author):
    watcher = make_user()
    around(api, watcher)
    note(api, author, visibility="VisibleOnceAssociatedTrackableAccessed")
    assert kinds(app, api, watcher) == ["note.published"]


def test_a_note_without_a_position_records_no_publication(app, api, author):
    ok(
        api.as_user(author).post("/api/notes/mine", json={"title": "x", "visibility": "Public"}),
        201,
    )
    assert db.session.scalars(select(Event)).all() == []


def test_the_watcher_who_publishes_does_not_hear_of_it(app, api, author):
    around(api, author)
    note(api, author)
    assert inbox(app, api, author) == []


def test_a_note_made_public_later_is_heard_once(app, api, author):
    watcher = make_user()
    around(api, watcher)
    note_id = note(api, author, visibility="Private")
    move(api, author, note_id, visibility="Public")
    move(api, author, note_id, visibility="Private")
    move(api, author, note_id, visibility="Public")
    move(api, author, note_id, title="Renamed")
    assert kinds(app, api, watcher) == ["note.published"]


def test_a_note_hidden_again_before_delivery_reaches_nobody(app, api, author):
    watcher = make_user()
    around(api, watcher)
    note_id = note(api, author)
    move(api, author, note_id, visibility="Private")
    assert inbox(app, api, watcher) == []


def test_a_window_across_the_antimeridian(app, api, author):
    watcher = make_user()
    watch_area(api, watcher, -20.0, 175.0, -10.0, -175.0)
    note(api, author, (-15.0, 179.5))
    note(api, author, (-15.0, -179.5))
    note(api, author, (-15.0, 0.0))
    note(api, author, (-15.0, 170.0))
    assert kinds(app, api, watcher) == ["note.published"] * 2


def test_a_window_edge_is_inside(app, api, author):
    watcher = make_user()
    watch_area(api, watcher, 40.0, 0.0, 50.0, 10.0)  # exactly the largest span
    note(api, author, (40.0, 0.0))
    note(api, author, (50.0, 10.0))
    note(api, author, (39.99, 5.0))
    assert kinds(app, api, watcher) == ["note.published"] * 2


def test_a_public_team_note_is_heard_by_area_watchers_and_admins_apart(app, api, author):
    admin, watcher = make_user(), make_user()
    team = make_team(admin, members=(author,))
    around(api, watcher)
    body = {"title": "Team bench", "visibility": "Public", "latitude": 47.37, "longitude": 8.54}
    ok(api.as_user(author).post(f"/api/teams/{team.id}/notes", json=body), 201)
    assert kinds(app, api, admin) == ["team.note.created"]
    assert kinds(app, api, watcher) == ["note.published"]
    assert inbox(app, api, watcher)[0]["teamId"] is None


# --- new journey stops -------------------------------------------------------------------


def stop(api: Any, trackable: Any, by: User, point: tuple[float, float] = ZURICH) -> None:
    body = {"latitude": point[0], "longitude": point[1]}
    ok(api.as_user(by).post(f"/api/trackables/{trackable.id}/journey-stops", json=body), 201)


@pytest.fixture
def bug(app) -> Any:
    return make_trackable(make_user(), visibility=TrackableVisibility.ALWAYS_VISIBLE)


def test_a_stop_of_a_public_trackable_reaches_area_watchers_inside(app, api, author, bug):
    inside, outside, german = make_user(), make_user(), make_user()
    around(api, inside)
    around(api, outside, (48.2, 16.37))
    around(api, german, contentLanguage="de")  # a stop has no language: every watch hears
    stop(api, bug, author)
    (heard,) = inbox(app, api, inside)
    assert heard["eventType"] == "trackable.journey_stop.added"
    assert heard["trackableId"] == str(bug.id)
    assert inbox(app, api, outside) == []
    assert kinds(app, api, german) == ["trackable.journey_stop.added"]
    assert inbox(app, api, author) == []


def test_a_stop_of_a_trackable_the_anonymous_viewer_cannot_see_reaches_no_area_watcher(
    app, api, author, bug
):
    watcher = make_user()
    around(api, watcher)
    unlock_trackable(watcher, bug)  # the watcher may see it, but not anonymously
    bug.visibility = TrackableVisibility.ONCE_ACCESSED
    db.session.commit()
    stop_as_owner(api, bug)
    assert inbox(app, api, watcher) == []
    assert kinds(app, api, author) == []


def stop_as_owner(api: Any, trackable: Any) -> None:
    owner = db.session.get(User, trackable.owner_user_id)
    stop(api, trackable, owner)


def test_a_trackable_made_private_before_delivery_reaches_no_area_watcher(app, api, author, bug):
    watcher = make_user()
    around(api, watcher)
    unlock_trackable(watcher, bug)
    stop(api, bug, author)
    bug.visibility = TrackableVisibility.ONCE_ACCESSED
    db.session.commit()
    assert inbox(app, api, watcher) == []


def test_an_area_watcher_who_also_watches_the_trackable_hears_once(app, api, author, bug):
    watcher = make_user()
    around(api, watcher)
    watch(watcher, trackable=bug)
    stop(api, bug, author)
    run_jobs(app)
    assert kinds(app, api, watcher) == ["trackable.journey_stop.added"]


def test_the_owner_who_watches_the_area_hears_once(app, api, author, bug):
    owner = db.session.get(User, bug.owner_user_id)
    around(api, owner)
    stop(api, bug, author)
    assert kinds(app, api, owner) == ["trackable.journey_stop.added"]
