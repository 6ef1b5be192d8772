"""The mobile version gate (contract: Versioning 2): sync and team management refuse a
mobile build below `androidMinimumCompatibleVersionCode`; clients sending no version
are served."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import assert_problem
from tests.factories import make_team, make_user

HEADER = "X-Android-Version-Code"


@pytest.fixture
def alice(app):
    app.config.update(ANDROID_MIN_VERSION_CODE="42", ANDROID_MIN_DISPLAY_VERSION="2.3.0")
    return make_user("alice")


def _routes(team_id):
    return [
        ("POST", "/api/sync/push", {"deviceId": str(uuid.uuid4())}),
        ("POST", "/api/sync/pull", {}),
        ("GET", "/api/teams", None),
        ("POST", "/api/teams", {"name": "Hikers", "title": "Hikers"}),
        ("POST", f"/api/teams/{team_id}/memberships/request", None),
        ("GET", f"/api/teams/{team_id}/categories", None),
        ("GET", f"/api/teams/{team_id}/notes", None),
    ]


@pytest.mark.parametrize("index", range(7))
def test_an_old_build_is_refused_naming_the_minimum(api, alice, index):
    method, url, body = _routes(make_team().id)[index]
    response = api.as_user(alice).open(method, url, json=body, headers={HEADER: "41"})
    problem = assert_problem(response, 400, code="mobile_version_unsupported")
    assert (problem["minimumVersionCode"], problem["minimumDisplayVersion"]) == ("42", "2.3.0")
    assert "42" in problem["detail"]


@pytest.mark.parametrize("version", [None, "42", "107"])
def test_current_builds_and_other_clients_are_served(api, alice, version):
    headers = {HEADER: version} if version else {}
    response = api.as_user(alice).post("/api/sync/pull", json={}, headers=headers)
    assert response.status_code == 200
    assert api.as_user(alice).get("/api/teams", headers=headers).status_code == 200


def test_a_version_that_is_not_a_number_is_400(api, alice):
    response = api.as_user(alice).post("/api/sync/pull", json={}, headers={HEADER: "2.3"})
    assert HEADER in assert_problem(response, 400)["errors"]


def test_other_routes_are_not_gated(api, alice):
    response = api.as_user(alice).get("/api/notes/mine", headers={HEADER: "1"})
    assert response.status_code == 200
    member = make_user("bob")
    team = make_team(member, name="Walkers")
    public = api.get(
        f"/api/public/teams/{team.name}/notes/nearby?latitude=1&longitude=1", headers={HEADER: "1"}
    )
    assert public.status_code == 200
