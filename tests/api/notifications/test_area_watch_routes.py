"""The area watch routes: create (the discovery's window, antimeridian included, an
optional language in canonical casing), list (newest first, paged), delete (one's own
only); the span and per-account caps; signed in only; gone with the account."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.event import AreaWatch
from tests.conftest import assert_problem
from tests.factories import make_user

URL = "/api/watches/areas"
ZURICH = {"minLatitude": 47.3, "minLongitude": 8.4, "maxLatitude": 47.5, "maxLongitude": 8.7}


def create(api: Any, user: Any, **body: Any) -> Any:
    return api.as_user(user).post(URL, json={**ZURICH, **body})


def test_a_watch_is_created_with_its_window_and_canonical_language(app, api):
    response = create(api, make_user(), contentLanguage="de-ch")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {
        "areaWatchId",
        "minLatitude",
        "minLongitude",
        "maxLatitude",
        "maxLongitude",
        "contentLanguage",
        "createdUtc",
    }
    assert body["contentLanguage"] == "de-CH"
    assert body["minLongitude"] == 8.4


def test_a_watch_without_a_language_hears_every_language(app, api):
    assert create(api, make_user()).get_json()["contentLanguage"] is None


def test_a_window_across_the_antimeridian_is_accepted(app, api):
    window = {"minLongitude": 175.0, "maxLongitude": -176.0}
    assert create(api, make_user(), **window).status_code == 201


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"maxLatitude": 58.0}, "maxLatitude"),  # 10.7 degrees tall
        ({"maxLongitude": 19.0}, "maxLongitude"),
        ({"minLongitude": 170.0, "maxLongitude": -175.0}, "maxLongitude"),  # 15 across
        ({"minLatitude": 47.6}, "minLatitude"),  # south of north
        ({"minLatitude": -91.0}, "minLatitude"),
        ({"maxLongitude": 181.0}, "maxLongitude"),
        ({"contentLanguage": "not a tag"}, "contentLanguage"),
        ({"radiusKm": 5}, "radiusKm"),  # unknown field
    ],
)
def test_a_bad_window_is_refused_naming_the_field(app, api, change, field):
    body = assert_problem(create(api, make_user(), **change), 400, code="validation_failed")
    assert field in body["errors"]
    assert db.session.scalars(select(AreaWatch)).all() == []


@pytest.mark.parametrize("missing", ["minLatitude", "minLongitude", "maxLatitude", "maxLongitude"])
def test_every_side_is_required(app, api, missing):
    body = {key: value for key, value in ZURICH.items() if key != missing}
    response = api.as_user(make_user()).post(URL, json=body)
    assert missing in assert_problem(response, 400, code="validation_failed")["errors"]


def test_a_window_of_exactly_the_span_is_accepted(app, api):
    window = {"minLatitude": 40.0, "maxLatitude": 50.0, "minLongitude": 0.0, "maxLongitude": 10.0}
    assert create(api, make_user(), **window).status_code == 201


def test_the_per_account_cap_refuses_one_more(app, api):
    app.config["AREA_WATCHES_PER_USER_MAX"] = 2
    user, other = make_user(), make_user()
    for _ in range(2):
        assert create(api, user).status_code == 201
    assert_problem(create(api, user), 400, code="area_watch_limit_reached")
    assert create(api, other).status_code == 201  # per account
    first = api.as_user(user).get(URL).get_json()[0]["areaWatchId"]
    assert api.as_user(user).delete(f"{URL}/{first}").status_code == 204
    assert create(api, user).status_code == 201


def test_the_list_is_mine_newest_first_and_paged(app, api):
    user = make_user()
    made = [create(api, user).get_json()["areaWatchId"] for _ in range(3)]
    create(api, make_user())
    listed = api.as_user(user).get(URL).get_json()
    assert [one["areaWatchId"] for one in listed] == made[::-1]
    first = api.as_user(user).get(URL, query_string={"limit": 2})
    assert [one["areaWatchId"] for one in first.get_json()] == made[:0:-1]
    next_url = first.headers["Link"].split(">")[0].lstrip("<")
    second = api.as_user(user).get(next_url)
    assert [one["areaWatchId"] for one in second.get_json()] == made[:1]
    assert "Link" not in second.headers


def test_another_users_watch_cannot_be_deleted(app, api):
    owner = make_user()
    watch_id = create(api, owner).get_json()["areaWatchId"]
    response = api.as_user(make_user()).delete(f"{URL}/{watch_id}")
    assert_problem(response, 404, code="area_watch_not_found")
    assert len(api.as_user(owner).get(URL).get_json()) == 1
    assert api.as_user(owner).delete(f"{URL}/{watch_id}").status_code == 204
    assert_problem(api.as_user(owner).delete(f"{URL}/{watch_id}"), 404, code="area_watch_not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", URL), ("post", URL), ("delete", f"{URL}/00000000-0000-4000-8000-000000000000")],
)
def test_signed_in_only(app, api, method, path):
    assert_problem(getattr(api.as_user(None), method)(path, json=ZURICH), 401)


def test_account_deletion_removes_the_users_area_watches(app, api):
    user, other = make_user(), make_user()
    create(api, user)
    create(api, other)
    assert api.as_user(user).delete("/api/account").status_code == 200
    assert [watch.user_id for watch in db.session.scalars(select(AreaWatch))] == [other.id]
