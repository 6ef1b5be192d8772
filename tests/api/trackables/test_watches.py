"""Trackable and group watches: POST/DELETE /api/trackables/{trackableId}/watch,
POST/DELETE /api/trackables/groups/{trackableGroupId}/watch, GET /api/trackables/watches
and `watchGroupActivityWhenCreated` (contract: Trackable watch; Trackable group;
Authentication item 3; error codes): idempotent starts and stops, one row per user and
target (also under a concurrent double start), 404 for what the caller cannot see, and
whom a group watch covers."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from app.auth import issue_access_token
from app.extensions import db
from app.models.trackable import (
    TrackableGroupWatch,
    TrackableVisibility,
    TrackableWatch,
)
from app.services.trackables.items import watches
from tests.conftest import assert_problem
from tests.factories import codes_of, make_group, make_team, make_trackable, make_user
from tests.factories import count_rows as count

HIDDEN = TrackableVisibility.ONCE_ACCESSED
WATCHES = "/api/trackables/watches"
LOOKUP = "/api/trackables/lookup"
COOKIE = "ln_trackable_access"


def item_watch(target: Any) -> str:
    return f"/api/trackables/{getattr(target, 'id', target)}/watch"


def group_watch(target: Any) -> str:
    return f"/api/trackables/groups/{getattr(target, 'id', target)}/watch"


def state(response, *, watching: bool, changed: bool) -> None:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json() == {"watching": watching, "changed": changed}


def item_rows(user=None, trackable=None) -> int:
    where = []
    if user is not None:
        where.append(TrackableWatch.user_id == user.id)
    if trackable is not None:
        where.append(TrackableWatch.trackable_id == trackable.id)
    return count(TrackableWatch, *where)


def group_rows(user=None, group=None) -> int:
    where = []
    if user is not None:
        where.append(TrackableGroupWatch.user_id == user.id)
    if group is not None:
        where.append(TrackableGroupWatch.group_id == group.id)
    return count(TrackableGroupWatch, *where)


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def watcher(app):
    return make_user("walt")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner)


@pytest.fixture
def group(owner):
    """A group with one activated, always-visible item."""
    group = make_group(owner, name="Summer Hike")
    make_trackable(owner, group_id=group.id)
    return group


# --- authentication ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "item"),
        ("DELETE", "item"),
        ("POST", "group"),
        ("DELETE", "group"),
        ("GET", "list"),
    ],
)
def test_watch_routes_need_a_bearer_token(api, trackable, group, method, path):
    url = {"item": item_watch(trackable), "group": group_watch(group), "list": WATCHES}[path]
    assert_problem(api.open(method, url), 401)
    assert item_rows() == 0
    assert group_rows() == 0


# --- trackable watch ---------------------------------------------------------------------


def test_watching_a_trackable_starts_one_watch(api, watcher, trackable):
    state(api.as_user(watcher).post(item_watch(trackable)), watching=True, changed=True)
    assert item_rows(watcher, trackable) == 1


def test_watching_a_trackable_twice_changes_nothing(api, watcher, trackable):
    api.as_user(watcher).post(item_watch(trackable))
    state(api.as_user(watcher).post(item_watch(trackable)), watching=True, changed=False)
    assert item_rows() == 1


def test_stopping_a_trackable_watch_removes_it_and_a_repeat_changes_nothing(
    api, watcher, trackable
):
    other = make_user()
    api.as_user(watcher).post(item_watch(trackable))
    api.as_user(other).post(item_watch(trackable))
    state(api.as_user(watcher).delete(item_watch(trackable)), watching=False, changed=True)
    assert item_rows(watcher) == 0
    state(api.as_user(watcher).delete(item_watch(trackable)), watching=False, changed=False)
    assert item_rows(other, trackable) == 1  # someone else's watch stays


def test_stopping_without_a_watch_changes_nothing(api, watcher, trackable):
    state(api.as_user(watcher).delete(item_watch(trackable)), watching=False, changed=False)


def test_two_users_each_have_their_own_watch(api, watcher, trackable):
    other = make_user()
    for user in (watcher, other):
        state(api.as_user(user).post(item_watch(trackable)), watching=True, changed=True)
    assert item_rows(trackable=trackable) == 2


@pytest.mark.parametrize("who", ["stranger", "team_member"])
def test_watching_a_hidden_trackable_is_not_found(api, owner, who):
    member = make_user()
    team = make_team(owner, members=(member,))
    hidden = make_trackable(owner, team_id=team.id, visibility=HIDDEN)
    caller = member if who == "team_member" else make_user()
    assert_problem(api.as_user(caller).post(item_watch(hidden)), 404, code="trackable_not_found")
    assert item_rows() == 0


def test_watching_an_unactivated_trackable_of_someone_else_is_not_found(api, owner, watcher):
    unactivated = make_trackable(None, created_by_user_id=owner.id)
    response = api.as_user(watcher).post(item_watch(unactivated))
    assert_problem(response, 404, code="trackable_not_found")
    state(api.as_user(owner).post(item_watch(unactivated)), watching=True, changed=True)


def test_watching_an_unknown_trackable_is_not_found(api, watcher):
    response = api.as_user(watcher).post(item_watch(uuid.uuid4()))
    assert_problem(response, 404, code="trackable_not_found")
    assert item_rows() == 0


def test_stopping_a_watch_of_an_unknown_trackable_is_not_found(api, watcher):
    response = api.as_user(watcher).delete(item_watch(uuid.uuid4()))
    assert_problem(response, 404, code="trackable_not_found")


def test_stopping_without_a_watch_on_a_hidden_trackable_is_not_found(api, owner, watcher):
    hidden = make_trackable(owner, visibility=HIDDEN)
    response = api.as_user(watcher).delete(item_watch(hidden))
    assert_problem(response, 404, code="trackable_not_found")


def test_a_hidden_trackable_can_be_watched_once_unlocked(api, owner, watcher):
    hidden = make_trackable(owner, visibility=HIDDEN)
    secret, _ = codes_of(hidden)
    assert api.as_user(watcher).post(LOOKUP, json={"code": secret}).get_json()["found"]
    state(api.as_user(watcher).post(item_watch(hidden)), watching=True, changed=True)


def test_a_watch_on_a_trackable_that_became_hidden_can_still_be_ended(
    api, owner, watcher, trackable
):
    api.as_user(watcher).post(item_watch(trackable))
    trackable.visibility = HIDDEN
    db.session.commit()
    assert_problem(
        api.as_user(make_user()).post(item_watch(trackable)), 404, code="trackable_not_found"
    )
    state(api.as_user(watcher).delete(item_watch(trackable)), watching=False, changed=True)
    assert item_rows() == 0


def test_a_malformed_trackable_id_is_not_found(api, watcher):
    assert_problem(api.as_user(watcher).post("/api/trackables/not-a-guid/watch"), 404)


# --- group watch -------------------------------------------------------------------------


def test_watching_a_group_starts_one_watch_and_a_repeat_changes_nothing(api, watcher, group):
    state(api.as_user(watcher).post(group_watch(group)), watching=True, changed=True)
    state(api.as_user(watcher).post(group_watch(group)), watching=True, changed=False)
    assert group_rows(watcher, group) == 1
    assert group_rows() == 1


def test_stopping_a_group_watch_removes_it_and_a_repeat_changes_nothing(api, watcher, group):
    api.as_user(watcher).post(group_watch(group))
    state(api.as_user(watcher).delete(group_watch(group)), watching=False, changed=True)
    state(api.as_user(watcher).delete(group_watch(group)), watching=False, changed=False)
    assert group_rows() == 0


def test_a_group_and_an_item_of_it_are_watched_separately(api, watcher, group):
    [item] = group.trackables
    api.as_user(watcher).post(group_watch(group))
    state(api.as_user(watcher).post(item_watch(item)), watching=True, changed=True)
    state(api.as_user(watcher).delete(group_watch(group)), watching=False, changed=True)
    assert item_rows(watcher, item) == 1


def test_the_controller_of_a_group_without_items_may_watch_it(api, owner):
    empty = make_group(owner)
    state(api.as_user(owner).post(group_watch(empty)), watching=True, changed=True)


def test_a_team_admin_may_watch_a_team_group_without_visible_items(api, owner):
    admin = make_user()
    team = make_team(admin, members=(owner,))
    team_group = make_group(owner, team_id=team.id)
    make_trackable(owner, team_id=team.id, group_id=team_group.id, visibility=HIDDEN)
    state(api.as_user(admin).post(group_watch(team_group)), watching=True, changed=True)


@pytest.mark.parametrize("target", ["unknown", "only_hidden_items", "only_unactivated_items"])
def test_watching_a_group_the_caller_cannot_see_is_not_found(api, owner, watcher, target):
    if target == "unknown":
        group_id: Any = uuid.uuid4()
    else:
        hidden = make_group(owner)
        if target == "only_hidden_items":
            make_trackable(owner, group_id=hidden.id, visibility=HIDDEN)
        else:
            make_trackable(None, created_by_user_id=owner.id, group_id=hidden.id)
        group_id = hidden.id
    response = api.as_user(watcher).post(group_watch(group_id))
    body = assert_problem(response, 404, code="trackable_not_found")
    assert body["detail"] == "Trackable group not found."
    assert group_rows() == 0


def test_stopping_without_a_watch_on_an_unknown_group_is_not_found(api, watcher):
    response = api.as_user(watcher).delete(group_watch(uuid.uuid4()))
    assert_problem(response, 404, code="trackable_not_found")


def test_a_group_becomes_watchable_once_an_item_of_it_is_unlocked(api, owner, watcher):
    hidden_group = make_group(owner)
    item = make_trackable(owner, group_id=hidden_group.id, visibility=HIDDEN)
    assert_problem(api.as_user(watcher).post(group_watch(hidden_group)), 404)
    secret, _ = codes_of(item)
    api.as_user(watcher).post(LOOKUP, json={"code": secret})
    state(api.as_user(watcher).post(group_watch(hidden_group)), watching=True, changed=True)


def test_a_watch_on_a_group_that_became_hidden_can_still_be_ended(api, watcher, group):
    api.as_user(watcher).post(group_watch(group))
    for item in group.trackables:
        item.visibility = HIDDEN
    db.session.commit()
    assert_problem(api.as_user(make_user()).post(group_watch(group)), 404)
    state(api.as_user(watcher).delete(group_watch(group)), watching=False, changed=True)
    assert group_rows() == 0


# --- concurrent double start -------------------------------------------------------------


def start_together(app, monkeypatch, user, url: str) -> list[tuple[int, Any]]:
    """The user POSTs `url` from two threads at once, each with its own test client, app
    context, session and connection; both pass the "is there a watch?" check before either
    inserts."""
    token = issue_access_token(user)
    db.session.commit()  # the test's own session holds nothing while the threads run
    barrier = threading.Barrier(2, timeout=30)
    real_find = watches.find_watch

    def find_then_wait(model: Any, key: Any) -> Any:
        found = real_find(model, key)
        barrier.wait()
        return found

    monkeypatch.setattr(watches, "find_watch", find_then_wait)
    results: list[Any] = [None, None]

    def run(index: int) -> None:
        response = app.test_client().post(url, headers={"Authorization": f"Bearer {token}"})
        results[index] = (response.status_code, response.get_json(force=True))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    db.session.expire_all()
    return results


def assert_one_start_won(results: list[tuple[int, Any]]) -> None:
    assert [status for status, _ in results] == [200, 200], results
    assert all(body["watching"] is True for _, body in results)
    assert sorted(body["changed"] for _, body in results) == [False, True]


def test_a_concurrent_double_trackable_watch_leaves_one_row(app, monkeypatch, watcher, trackable):
    assert_one_start_won(start_together(app, monkeypatch, watcher, item_watch(trackable)))
    assert item_rows(watcher, trackable) == 1


def test_a_concurrent_double_group_watch_leaves_one_row(app, monkeypatch, watcher, group):
    assert_one_start_won(start_together(app, monkeypatch, watcher, group_watch(group)))
    assert group_rows(watcher, group) == 1


# --- watchGroupActivityWhenCreated -------------------------------------------------------


def create_group(api, user, **body):
    body = {"name": "Lake Paddles", "trackableCount": 2, **body}
    response = api.as_user(user).post("/api/trackables/groups", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def test_creating_a_group_with_watch_group_activity_watches_it(api, owner):
    created = create_group(api, owner, watchGroupActivityWhenCreated=True)
    group_id = uuid.UUID(created["trackableGroupId"])
    assert count(TrackableGroupWatch, TrackableGroupWatch.group_id == group_id) == 1
    assert group_rows(owner) == 1
    assert item_rows() == 0
    assert api.as_user(owner).get(WATCHES).get_json()["groups"] == [str(group_id)]
    state(api.as_user(owner).post(group_watch(group_id)), watching=True, changed=False)


@pytest.mark.parametrize("body", [{}, {"watchGroupActivityWhenCreated": False}])
def test_creating_a_group_without_watch_group_activity_watches_nothing(api, owner, body):
    create_group(api, owner, **body)
    assert group_rows() == 0


# --- GET /api/trackables/watches (beyond the contract) -----------------------------------


def test_my_watches_lists_trackable_and_group_ids_most_recent_first(api, owner, watcher):
    first, second = make_trackable(owner), make_trackable(owner)
    group = make_group(owner)
    make_trackable(owner, group_id=group.id)
    for url in (item_watch(first), group_watch(group), item_watch(second)):
        assert api.as_user(watcher).post(url).status_code == 200
    # Make the order independent of the clock's resolution.
    for index, trackable in enumerate((first, second)):
        row = db.session.get(TrackableWatch, {"user_id": watcher.id, "trackable_id": trackable.id})
        row.created_utc = row.created_utc.replace(year=2020 + index)
    db.session.commit()
    api.as_user(make_user()).post(item_watch(first))  # not the caller's

    response = api.as_user(watcher).get(WATCHES)
    assert response.status_code == 200
    assert response.get_json() == {
        "trackables": [str(second.id), str(first.id)],
        "groups": [str(group.id)],
    }


def test_my_watches_is_empty_without_watches(api, watcher):
    assert api.as_user(watcher).get(WATCHES).get_json() == {"trackables": [], "groups": []}


def test_my_watches_keeps_a_watch_whose_trackable_became_hidden(api, owner, watcher, trackable):
    api.as_user(watcher).post(item_watch(trackable))
    trackable.visibility = HIDDEN
    db.session.commit()
    assert api.as_user(watcher).get(WATCHES).get_json()["trackables"] == [str(trackable.id)]
