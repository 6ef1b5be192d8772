"""Each event type reaches exactly the right inboxes: the owner side (activator, team
admins), the trackable's watchers and its group's watchers; never the actor, a stranger,
or a watcher who cannot see the trackable now; each user once."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import delete, select

from app.extensions import db
from app.models.event import Event, Notification
from app.models.trackable import TrackableUnlock, TrackableVisibility
from tests.factories import codes_of, make_note, make_trackable, make_user, unlock_trackable
from tests.inboxes import World, hearers, inbox, watch
from tests.jobs import run_jobs

EVERYONE = {"owner", "admin", "item_watcher", "group_watcher"}
BUT_OWNER = EVERYONE - {"owner"}


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.data
    return response.get_json() if response.data else None


def comment(api: Any, world: World) -> str:
    url = f"/api/trackables/{world.trackable.id}/comments"
    return ok(api.as_user(world.author).post(url, json={"body": "Found it"}), 201)[
        "trackableCommentId"
    ]


def stop(api: Any, world: World) -> str:
    url = f"/api/trackables/{world.trackable.id}/journey-stops"
    body = {"latitude": 47.37, "longitude": 8.54}
    return ok(api.as_user(world.author).post(url, json=body), 201)["journeyStopId"]


def edit_comment(api: Any, world: World) -> None:
    url = f"/api/trackables/{world.trackable.id}/comments/{comment(api, world)}"
    ok(api.as_user(world.author).put(url, json={"body": "Found it again"}))


def delete_comment(api: Any, world: World) -> None:
    url = f"/api/trackables/{world.trackable.id}/comments/{comment(api, world)}"
    ok(api.as_user(world.author).delete(url), 204)


def delete_stop(api: Any, world: World) -> None:
    url = f"/api/trackables/{world.trackable.id}/journey-stops/{stop(api, world)}"
    ok(api.as_user(world.author).delete(url), 204)


def status_message(api: Any, world: World) -> None:
    # An anonymous finder holding the item: no actor, so the owner hears too.
    finder = api.as_user(None)
    ok(finder.post("/api/trackables/lookup", json={"code": codes_of(world.trackable)[0]}))
    url = f"/api/trackables/active/{world.trackable.id}/message"
    ok(finder.post(url, json={"statusMessage": "Going south"}))


def attach_to_note(api: Any, world: World) -> None:
    note = make_note(world.owner, latitude=47.0, longitude=8.0)
    body = {"selectedActiveTrackableIds": [str(world.trackable.id)]}
    ok(api.as_user(world.owner).post(f"/api/public/notes/{note.id}/trackables", json=body), 204)


def rotate(api: Any, world: World) -> None:
    ok(api.as_user(world.owner).post(f"/api/trackables/{world.trackable.id}/secret/rotate"))


def leave_group(api: Any, world: World) -> None:
    ok(api.as_user(world.owner).delete(f"/api/trackables/{world.trackable.id}/group"))


def join_group(api: Any, world: World) -> None:
    leave_group(api, world)
    url = f"/api/trackables/{world.trackable.id}/group"
    ok(api.as_user(world.owner).post(url, json={"trackableGroupId": str(world.group.id)}))


CASES = [
    ("trackable.comment.written", comment, EVERYONE),
    ("trackable.comment.edited", edit_comment, EVERYONE),
    ("trackable.comment.deleted", delete_comment, EVERYONE),
    ("trackable.journey_stop.added", stop, EVERYONE),
    ("trackable.journey_stop.deleted", delete_stop, EVERYONE),
    ("trackable.status_message.changed", status_message, EVERYONE),
    ("trackable.note.attached", attach_to_note, BUT_OWNER),
    ("trackable.secret.rotated", rotate, BUT_OWNER),
    ("group.item.removed", leave_group, BUT_OWNER),
    ("group.item.added", join_group, BUT_OWNER),
]


@pytest.mark.parametrize(("event_type", "act", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_event_reaches_exactly_its_audience(app, api, world, event_type, act, expected):
    act(api, world)
    assert hearers(app, api, world, event_type) == expected


def test_activation_reaches_team_admins_and_watchers_not_the_activator(app, api, world):
    fresh = make_trackable(None, created_by_user_id=world.owner.id, group_id=world.group.id)
    watch(world.item_watcher, trackable=fresh)
    body = {"name": "Green bug", "teamId": str(world.team.id)}
    ok(api.as_user(world.owner).post(f"/api/trackables/{fresh.id}/activate", json=body))
    assert hearers(app, api, world, "trackable.activated") == BUT_OWNER
    (mine,) = inbox(app, api, world.admin)
    assert mine["trackableId"] == str(fresh.id)
    assert mine["groupId"] == str(world.group.id)
    assert "Green bug" in mine["text"]


def test_the_notification_names_its_subjects(app, api, world):
    attach_to_note(api, world)
    (mine,) = inbox(app, api, world.item_watcher)
    assert mine["eventType"] == "trackable.note.attached"
    assert mine["trackableId"] == str(world.trackable.id)
    assert mine["groupId"] == str(world.group.id)
    assert mine["noteId"] is not None
    assert mine["readUtc"] is None
    assert mine["text"] == f"{world.trackable.public_code} (Blue bug) was attached to a note."


def test_an_owner_who_also_watches_hears_once(app, api, world):
    watch(world.owner, trackable=world.trackable, group=world.group)
    comment(api, world)
    assert [one["eventType"] for one in inbox(app, api, world.owner)] == [
        "trackable.comment.written"
    ]


def test_a_watcher_who_lost_access_hears_nothing(app, api, world):
    world.trackable.visibility = TrackableVisibility.ONCE_ACCESSED
    db.session.commit()
    keeps, loses = make_user("kai"), make_user("lou")
    for user in (keeps, loses):
        unlock_trackable(user, world.trackable)
        watch(user, trackable=world.trackable)
    db.session.execute(delete(TrackableUnlock).where(TrackableUnlock.user_id == loses.id))
    db.session.commit()
    ok(
        api.as_user(world.owner).post(
            f"/api/trackables/{world.trackable.id}/comments", json={"body": "Still here"}
        ),
        201,
    )
    assert len(inbox(app, api, keeps)) == 1
    assert inbox(app, api, loses) == []
    # the group watcher may no longer see the item either; the team admin still may
    assert inbox(app, api, world.group_watcher) == []
    assert len(inbox(app, api, world.admin)) == 1


def test_a_rerun_of_the_fan_out_adds_nobody_twice(app, api, world):
    comment(api, world)
    run_jobs(app)
    event = db.session.scalars(select(Event)).one()
    from app.platform.jobs import enqueue

    enqueue("events.fan_out", {"eventId": str(event.id)})
    db.session.commit()
    assert run_jobs(app) == 1
    count = db.session.scalars(select(Notification).where(Notification.event_id == event.id))
    assert len(count.all()) == len(EVERYONE)


def test_a_rolled_back_change_leaves_no_event_and_no_notification(app, api, world, monkeypatch):
    from app.errors import NotFound
    from app.services.trackables.journey import comments

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise NotFound("Gone after the write.")

    monkeypatch.setattr(comments, "comment_view", fail)
    url = f"/api/trackables/{world.trackable.id}/comments"
    assert api.as_user(world.author).post(url, json={"body": "Lost"}).status_code == 404
    assert db.session.scalars(select(Event)).all() == []
    assert run_jobs(app) == 0
    assert db.session.scalars(select(Notification)).all() == []


def test_a_replayed_comment_records_no_second_event(app, api, world):
    url = f"/api/trackables/{world.trackable.id}/comments"
    body = {"body": "Once", "clientMutationId": "retry-1"}
    for _ in range(2):
        assert api.as_user(world.author).post(url, json=body).status_code in (200, 201)
    assert len(db.session.scalars(select(Event)).all()) == 1


def test_events_keep_no_secret(app, api, world):
    rotate(api, world)
    event = db.session.scalars(select(Event)).one()
    secret, token = codes_of(world.trackable)
    assert set(event.fields) == {"publicCode", "name"}
    assert secret not in str(event.fields)
    assert token not in str(event.fields)
