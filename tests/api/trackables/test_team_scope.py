"""A trackable's `teamId` on creation, group creation and activation (contract fix of the
integrator's issue; decisions: hide, don't forbid): one of the caller's active teams; a
team the caller can see but is not an active member of is 403 with
`trackable_request_rejected`; a team they cannot see, or none, is 404 with the same code."""

from __future__ import annotations

import uuid

import pytest

from app.models.team import MembershipStatus, PageVisibility
from app.models.trackable import Trackable
from tests.conftest import assert_problem
from tests.factories import count_rows, make_membership, make_team, make_trackable, make_user


@pytest.fixture
def caller(app):
    return make_user("carla")


def team_id_for(caller, kind: str) -> str:
    if kind == "unknown":
        return str(uuid.uuid4())
    visibility = PageVisibility.MEMBERS_ONLY if "members_only" in kind else PageVisibility.PUBLIC
    team = make_team(make_user(), page_visibility=visibility)
    if kind == "members_only_requested":  # a record of their own: the team is visible
        make_membership(team, user=caller, status=MembershipStatus.REQUESTING)
    return str(team.id)


def send(api, caller, route: str, team_id: str):
    client = api.as_user(caller)
    if route == "create":
        return client.post("/api/trackables", json={"name": "Bug", "teamId": team_id})
    if route == "group":
        body = {"name": "Batch", "trackableCount": 2, "teamId": team_id}
        return client.post("/api/trackables/groups", json=body)
    fresh = make_trackable(None, created_by_user_id=caller.id)
    return client.post(
        f"/api/trackables/{fresh.id}/activate", json={"name": "Mine", "teamId": team_id}
    )


ROUTES = ["create", "group", "activate"]
CASES = [
    ("public_not_member", 403),
    ("members_only_requested", 403),
    ("members_only", 404),
    ("unknown", 404),
]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("kind", "status"), CASES)
def test_a_team_the_caller_cannot_act_for(api, caller, route, kind, status):
    before = count_rows(Trackable)
    response = send(api, caller, route, team_id_for(caller, kind))
    assert_problem(response, status, code="trackable_request_rejected")
    assert count_rows(Trackable) == before + (1 if route == "activate" else 0)  # its own row


@pytest.mark.parametrize("route", ROUTES)
def test_an_active_member_names_the_team(api, caller, route):
    team = make_team(make_user(), members=(caller,), page_visibility=PageVisibility.MEMBERS_ONLY)
    response = send(api, caller, route, str(team.id))
    assert response.status_code in (200, 201), response.get_data(as_text=True)
