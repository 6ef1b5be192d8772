"""DELETE and POST /api/trackables/{trackableId}/group (contract: Trackable group
membership; Limits: one group at a time; Errors: trackable codes)."""

from __future__ import annotations

import threading

import pytest

from app.extensions import db
from app.models.trackable import Trackable, TrackableVisibility
from app.services.trackables.items import groups as group_service
from tests.conftest import assert_problem
from tests.factories import make_group, make_team, make_trackable, make_user

UNKNOWN = "00000000-0000-4000-8000-000000000001"


def url(trackable) -> str:
    return f"/api/trackables/{trackable if isinstance(trackable, str) else trackable.id}/group"


def group_id_of(trackable):
    db.session.expire_all()
    return db.session.get(Trackable, trackable.id).group_id


@pytest.fixture
def people(app):
    """alice activated the trackable for her team, where tina is admin; gina makes groups;
    greta is admin of gina's group team; sam is a stranger."""
    users = {name: make_user(name) for name in ("alice", "tina", "gina", "greta", "sam")}
    users["team"] = make_team(users["tina"], members=(users["alice"],))
    users["group_team"] = make_team(users["greta"], members=(users["gina"],))
    return users


def group_of(people, owner: str, *, visible_item: bool = True):
    """A group controlled by `owner` ("gina+team": gina's, in greta's team), with an
    always-visible item so that every caller may see the group."""
    team_id = people["group_team"].id if owner == "gina+team" else None
    group = make_group(people[owner.split("+")[0]], team_id=team_id)
    if visible_item:
        make_trackable(people["gina"], group_id=group.id)
    return group


def team_trackable(people, **fields):
    return make_trackable(people["alice"], team_id=people["team"].id, **fields)


# --- DELETE: detach ----------------------------------------------------------------------

DETACH_TABLE = [
    ("alice", "gina", 200),  # the original activator
    ("gina", "gina", 200),  # the group's creator
    ("greta", "gina+team", 200),  # an admin of the group's team
    ("tina", "tina", 200),  # the trackable's team admin who also controls the group
    ("tina", "gina", 403),  # the trackable's team admin alone is not a group admin
    ("gina", "gina+team", 200),
    ("sam", "gina", 403),
]


@pytest.mark.parametrize(("caller", "owner", "status"), DETACH_TABLE)
def test_who_may_detach_a_trackable_from_its_group(api, people, caller, owner, status):
    group = group_of(people, owner)
    trackable = team_trackable(people, group_id=group.id)
    response = api.as_user(people[caller]).delete(url(trackable))
    if status == 200:
        assert response.status_code == 200, response.get_json()
        assert response.get_json() == {"trackableId": str(trackable.id), "group": None}
        assert group_id_of(trackable) is None
    else:
        assert_problem(response, 403, code="trackable_group_detach_forbidden")
        assert group_id_of(trackable) == group.id


def test_an_activator_who_left_the_team_may_no_longer_detach(api, people):
    group = group_of(people, "gina")
    other_team = make_team(make_user())
    trackable = make_trackable(people["alice"], team_id=other_team.id, group_id=group.id)
    response = api.as_user(people["alice"]).delete(url(trackable))
    assert_problem(response, 403, code="trackable_group_detach_forbidden")


def test_detaching_a_trackable_in_no_group_is_rejected(api, people):
    trackable = team_trackable(people)
    body = assert_problem(
        api.as_user(people["alice"]).delete(url(trackable)), 400, code="trackable_request_rejected"
    )
    assert "not in a group" in body["detail"]


def test_detaching_a_hidden_trackable_is_not_found(api, people):
    group = group_of(people, "gina")
    trackable = team_trackable(
        people, group_id=group.id, visibility=TrackableVisibility.ONCE_ACCESSED
    )
    response = api.as_user(people["sam"]).delete(url(trackable))
    assert_problem(response, 404, code="trackable_not_found")
    assert group_id_of(trackable) == group.id


def test_detaching_an_unknown_trackable_is_not_found(api, people):
    assert_problem(
        api.as_user(people["alice"]).delete(url(UNKNOWN)), 404, code="trackable_not_found"
    )


# --- POST: attach ------------------------------------------------------------------------

ATTACH_TABLE = [
    ("alice", "alice", 200),  # the activator, controlling the destination
    ("alice", "gina", 403),  # the activator, not controlling the destination
    ("gina", "gina", 403),  # controls the destination, not the trackable
    ("tina", "tina", 200),  # the trackable's team admin, controlling the destination
    ("tina", "gina", 403),
    ("greta", "gina+team", 403),  # a destination admin with no say over the trackable
    ("sam", "gina", 403),
]


def attach(api, user, trackable, group):
    group_id = group if isinstance(group, str) else str(group.id)
    return api.as_user(user).post(url(trackable), json={"trackableGroupId": group_id})


@pytest.mark.parametrize(("caller", "owner", "status"), ATTACH_TABLE)
def test_who_may_attach_a_detached_trackable_to_a_group(api, people, caller, owner, status):
    group = group_of(people, owner)
    trackable = team_trackable(people)
    response = attach(api, people[caller], trackable, group)
    if status == 200:
        assert response.status_code == 200, response.get_json()
        assert response.get_json() == {
            "trackableId": str(trackable.id),
            "group": {"trackableGroupId": str(group.id), "name": group.name, "slug": group.slug},
        }
        assert group_id_of(trackable) == group.id
    else:
        assert_problem(response, 403, code="trackable_group_attach_forbidden")
        assert group_id_of(trackable) is None


@pytest.mark.parametrize("destination", ["other", "same"])
def test_attaching_a_trackable_already_in_a_group_asks_to_detach_first(api, people, destination):
    current = group_of(people, "alice")
    trackable = team_trackable(people, group_id=current.id)
    target = group_of(people, "alice") if destination == "other" else current
    response = attach(api, people["alice"], trackable, target)
    body = assert_problem(response, 400, code="trackable_request_rejected")
    assert "detach it from its group first" in body["detail"]
    assert group_id_of(trackable) == current.id


def test_attaching_to_an_unknown_group_is_not_found(api, people):
    trackable = team_trackable(people)
    body = assert_problem(
        attach(api, people["alice"], trackable, UNKNOWN), 404, code="trackable_not_found"
    )
    assert body["detail"] == "Trackable group not found."


def test_attaching_to_a_group_the_caller_cannot_see_is_not_found(api, people):
    hidden = group_of(people, "gina", visible_item=False)
    trackable = team_trackable(people)
    body = assert_problem(
        attach(api, people["alice"], trackable, hidden), 404, code="trackable_not_found"
    )
    assert body["detail"] == "Trackable group not found."


def test_attaching_an_unknown_trackable_is_not_found(api, people):
    group = group_of(people, "alice")
    assert_problem(attach(api, people["alice"], UNKNOWN, group), 404, code="trackable_not_found")


def test_attaching_a_hidden_trackable_is_not_found(api, people):
    group = group_of(people, "sam")
    trackable = team_trackable(people, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert_problem(attach(api, people["sam"], trackable, group), 404, code="trackable_not_found")


def test_attaching_needs_a_group_id(api, people):
    trackable = team_trackable(people)
    response = api.as_user(people["alice"]).post(url(trackable), json={})
    body = assert_problem(response, 400)
    assert "trackableGroupId" in body["errors"]


def test_a_full_group_takes_no_more_trackables(app, api, people):
    app.config["TRACKABLES_PER_GROUP_MAX"] = 1
    group = group_of(people, "alice")  # holds its one visible item already
    trackable = team_trackable(people)
    body = assert_problem(
        attach(api, people["alice"], trackable, group), 400, code="trackable_request_rejected"
    )
    assert "full" in body["detail"]
    assert group_id_of(trackable) is None


@pytest.mark.parametrize("method", ["DELETE", "POST"])
def test_group_membership_needs_a_bearer_token(api, people, method):
    trackable = team_trackable(people)
    response = api.open(method, url(trackable), json={"trackableGroupId": UNKNOWN})
    assert_problem(response, 401)


def test_concurrent_attaches_into_two_groups_let_exactly_one_in(app, monkeypatch, people):
    """Two attaches of one trackable into different groups, each on its own thread, app
    context and connection. Both pass every check before either writes (the barrier), so
    only the conditional UPDATE can keep the trackable in one group."""
    from app.auth import issue_access_token

    alice = people["alice"]
    groups = [group_of(people, "alice"), group_of(people, "alice")]
    group_ids = [group.id for group in groups]
    trackable = team_trackable(people)
    path = url(trackable)
    token = issue_access_token(alice)
    barrier = threading.Barrier(2, timeout=20)
    claim = group_service.claim_place

    def claim_once_both_have_checked(trackable, group, capacity):
        barrier.wait()
        return claim(trackable, group, capacity)

    monkeypatch.setattr(group_service, "claim_place", claim_once_both_have_checked)
    results: dict[int, tuple[int, str | None]] = {}

    def run(index: int) -> None:
        client = app.test_client()  # a new thread: its own app context and session
        response = client.post(
            path,
            json={"trackableGroupId": str(group_ids[index])},
            headers={"Authorization": f"Bearer {token}"},
        )
        results[index] = (response.status_code, response.get_json().get("code"))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results.values(), key=lambda r: r[0]) == [
        (200, None),
        (400, "trackable_request_rejected"),
    ]
    winner = 0 if results[0][0] == 200 else 1
    assert group_id_of(trackable) == group_ids[winner]
