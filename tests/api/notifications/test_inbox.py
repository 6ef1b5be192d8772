"""The inbox routes: newest first and paged, texts in the reader's language, the unread
count, marking read by ids or up to one, signed in only, one's own only (another user's
ids are ignored), and the inbox gone with the account."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.event import Notification
from tests.inboxes import World, inbox
from tests.jobs import run_jobs

PROBLEM = "application/problem+json"


def three_comments(app: Any, api: Any, world: World) -> list[dict[str, Any]]:
    url = f"/api/trackables/{world.trackable.id}/comments"
    for number in range(3):
        response = api.as_user(world.author).post(url, json={"body": f"Comment {number}"})
        assert response.status_code == 201
    return inbox(app, api, world.item_watcher)


def unread(api: Any, user: Any) -> int:
    response = api.as_user(user).get("/api/notifications/unread-count")
    assert response.status_code == 200
    return response.get_json()["unreadCount"]


def read(api: Any, user: Any, body: Any) -> Any:
    return api.as_user(user).post("/api/notifications/read", json=body)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/notifications"),
        ("get", "/api/notifications/unread-count"),
        ("post", "/api/notifications/read"),
    ],
)
def test_the_inbox_needs_a_bearer_token(api, method, path):
    response = getattr(api.as_user(None), method)(
        path, json={"upTo": None} if method == "post" else None
    )
    assert response.status_code == 401
    assert response.content_type == PROBLEM


def test_the_inbox_lists_newest_first(app, api, world):
    found = three_comments(app, api, world)
    times = [(one["createdUtc"], one["notificationId"]) for one in found]
    assert times == sorted(times, reverse=True)
    assert len(found) == 3


def test_the_inbox_pages_with_limit_cursor_and_link(app, api, world):
    whole = three_comments(app, api, world)
    first = api.as_user(world.item_watcher).get("/api/notifications?limit=2")
    assert [one["notificationId"] for one in first.get_json()] == [
        one["notificationId"] for one in whole[:2]
    ]
    link = first.headers["Link"]
    assert link.endswith('>; rel="next"')
    second = api.as_user(world.item_watcher).get(link[1 : link.index(">")])
    assert [one["notificationId"] for one in second.get_json()] == [whole[2]["notificationId"]]
    assert "Link" not in second.headers


def set_language(api: Any, user: Any, language: str) -> None:
    response = api.as_user(user).put("/api/notifications/settings", json={"language": language})
    assert response.status_code == 200, response.get_json()


def comment_texts(app: Any, api: Any, world: World, user: Any) -> list[str]:
    return [
        one["text"]
        for one in inbox(app, api, user)
        if one["eventType"] == "trackable.comment.written"
    ]


def test_each_reader_gets_the_texts_in_the_language_of_their_settings(app, api, world):
    set_language(api, world.item_watcher, "de")
    url = f"/api/trackables/{world.trackable.id}/comments"
    assert api.as_user(world.author).post(url, json={"body": "Hello"}).status_code == 201
    item = f"{world.trackable.public_code} (Blue bug)"
    assert comment_texts(app, api, world, world.item_watcher) == [
        f"Zu {item} wurde ein Kommentar geschrieben."
    ]
    assert comment_texts(app, api, world, world.group_watcher) == [
        f"A comment was written on {item}."
    ]


def test_a_changed_language_applies_to_the_notifications_already_there(app, api, world):
    url = f"/api/trackables/{world.trackable.id}/comments"
    assert api.as_user(world.author).post(url, json={"body": "Hello"}).status_code == 201
    (english,) = comment_texts(app, api, world, world.item_watcher)
    assert english.startswith("A comment was written on ")
    set_language(api, world.item_watcher, "de")
    (german,) = comment_texts(app, api, world, world.item_watcher)
    assert german.startswith("Zu ")
    assert german.endswith(" wurde ein Kommentar geschrieben.")


def test_the_unread_count_counts_only_ones_own_unread(app, api, world):
    three_comments(app, api, world)
    assert unread(api, world.item_watcher) == 3
    assert unread(api, world.stranger) == 0


def test_reading_by_ids_marks_those_only(app, api, world):
    found = three_comments(app, api, world)
    assert (
        read(api, world.item_watcher, {"notificationIds": [found[0]["notificationId"]]}).status_code
        == 204
    )
    assert unread(api, world.item_watcher) == 2
    after = inbox(app, api, world.item_watcher)
    assert after[0]["readUtc"] is not None
    assert [one["readUtc"] for one in after[1:]] == [None, None]


def test_reading_up_to_one_marks_it_and_every_older_one(app, api, world):
    found = three_comments(app, api, world)
    response = read(api, world.item_watcher, {"upTo": found[1]["notificationId"]})
    assert response.status_code == 204
    after = inbox(app, api, world.item_watcher)
    assert [one["readUtc"] is None for one in after] == [True, False, False]


def test_another_users_ids_are_ignored(app, api, world):
    theirs = three_comments(app, api, world)
    ids = [one["notificationId"] for one in theirs]
    assert read(api, world.stranger, {"notificationIds": ids}).status_code == 204
    assert read(api, world.stranger, {"upTo": ids[0]}).status_code == 204
    assert unread(api, world.item_watcher) == 3


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"notificationIds": [], "upTo": None},
        {
            "notificationIds": ["4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34"],
            "upTo": "4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34",
        },
        {"notificationIds": []},
        {"upTo": "not-an-id"},
        {"upto": "4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34"},
    ],
)
def test_reading_needs_exactly_one_of_ids_and_up_to(api, world, body):
    response = read(api, world.item_watcher, body)
    assert response.status_code == 400
    assert response.content_type == PROBLEM


def test_account_deletion_removes_the_inbox(app, api, world):
    three_comments(app, api, world)
    user_id = world.item_watcher.id
    assert api.as_user(world.item_watcher).delete("/api/account").status_code == 200
    assert run_jobs(app) >= 0
    mine = db.session.scalars(select(Notification).where(Notification.user_id == user_id))
    assert mine.all() == []
    assert len(inbox(app, api, world.group_watcher)) == 3
