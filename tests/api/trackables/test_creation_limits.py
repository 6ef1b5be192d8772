"""Trackables created per account per hour: singles and group items
count together; past the budget 429 with `code` and Retry-After, and nothing is made; one
full group of 100 always fits an unused hour."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.budget import BudgetSpend
from app.models.trackable import Trackable, TrackableGroup
from tests.conftest import assert_problem
from tests.factories import count_rows as count
from tests.factories import make_user

CODE = "trackable_hourly_limit_reached"


@pytest.fixture
def alice(app):
    return make_user("alice")


def create(api, user):
    return api.as_user(user).post("/api/trackables", json={"name": "Blue travel bug"})


def create_group(api, user, trackable_count: int, name: str = "Summer Hike"):
    body = {"name": name, "trackableCount": trackable_count}
    return api.as_user(user).post("/api/trackables/groups", json=body)


def test_single_creations_past_the_hourly_budget_are_429(app, api, alice):
    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 2
    assert create(api, alice).status_code == 201
    assert create(api, alice).status_code == 201
    response = create(api, alice)
    body = assert_problem(response, 429, code=CODE)
    assert 3500 < int(response.headers["Retry-After"]) <= 3600
    assert "2 trackables created per account per hour" in body["detail"]
    assert count(Trackable) == 2
    assert create(api, make_user("bob")).status_code == 201  # a budget per account


def test_one_full_group_fits_the_default_budget_and_a_second_one_too(app, api, alice):
    assert app.config["TRACKABLES_PER_USER_PER_HOUR"] >= app.config["TRACKABLES_PER_GROUP_MAX"]
    assert create_group(api, alice, 100).status_code == 201
    assert create_group(api, alice, 100, name="Autumn Hike").status_code == 201
    assert_problem(create(api, alice), 429, code=CODE)
    assert count(Trackable) == 200


def test_a_group_larger_than_what_is_left_makes_nothing(app, api, alice):
    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 10
    assert create(api, alice).status_code == 201
    assert_problem(create_group(api, alice, 10), 429, code=CODE)
    assert (count(Trackable), count(TrackableGroup)) == (1, 0)
    assert create_group(api, alice, 9).status_code == 201


def test_retry_after_waits_until_enough_of_a_group_left_the_window(app, api, alice):
    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 100
    db.session.add(
        BudgetSpend(
            budget="trackable-create",
            subject=str(alice.id),
            amount=100,
            spent_utc=utcnow() - timedelta(minutes=40),
        )
    )
    db.session.commit()
    response = create(api, alice)
    assert_problem(response, 429, code=CODE)
    assert 1150 <= int(response.headers["Retry-After"]) <= 1200


def test_creations_older_than_an_hour_leave_the_budget(app, api, alice):
    app.config["TRACKABLES_PER_USER_PER_HOUR"] = 100
    db.session.add(
        BudgetSpend(
            budget="trackable-create",
            subject=str(alice.id),
            amount=100,
            spent_utc=utcnow() - timedelta(minutes=61),
        )
    )
    db.session.commit()
    assert create_group(api, alice, 100).status_code == 201


def test_the_creation_routes_document_their_429(api):
    paths = api.get("/api/openapi.json").get_json()["paths"]
    for path in ("/api/trackables", "/api/trackables/groups"):
        too_many = paths[path]["post"]["responses"]["429"]
        assert "Retry-After" in too_many["headers"]
        assert CODE in str(too_many)


def test_an_accounts_counted_creations_go_with_the_account(app, api, alice):
    bob = make_user("bob")
    assert create_group(api, alice, 3).status_code == 201
    assert create(api, bob).status_code == 201
    alice_id, bob_id = str(alice.id), str(bob.id)
    assert api.as_user(alice).delete("/api/account").status_code == 200
    assert count(BudgetSpend, BudgetSpend.subject == alice_id) == 0
    assert count(BudgetSpend, BudgetSpend.subject == bob_id) == 1
