"""GET/PUT /api/notifications/settings: the defaults, applying the fields present, refused
values and fields, signed in only, and the settings gone with the account."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models.notification_mail import (
    NotificationDigest,
    NotificationMail,
    NotificationSettings,
)
from tests.conftest import assert_problem
from tests.factories import make_user
from tests.inboxes import World
from tests.jobs import run_jobs

URL = "/api/notifications/settings"


def put(api, user, body):
    return api.as_user(user).put(URL, json=body)


@pytest.mark.parametrize("method", ["get", "put"])
def test_the_settings_need_a_bearer_token(api, method):
    response = getattr(api.as_user(None), method)(URL, json={"mail": "none"})
    assert_problem(response, 401)


def test_the_defaults_are_a_daily_digest_in_english(api):
    response = api.as_user(make_user()).get(URL)
    assert response.status_code == 200
    assert response.get_json() == {"mail": "daily", "language": "en"}


def test_a_change_is_kept_and_fields_left_out_stay(api):
    user = make_user()
    assert put(api, user, {"mail": "each"}).get_json() == {"mail": "each", "language": "en"}
    assert put(api, user, {"language": "de"}).get_json() == {"mail": "each", "language": "de"}
    assert api.as_user(user).get(URL).get_json() == {"mail": "each", "language": "de"}


def test_the_settings_are_ones_own(api):
    user, other = make_user(), make_user()
    put(api, user, {"mail": "none"})
    assert api.as_user(other).get(URL).get_json()["mail"] == "daily"


def test_the_read_model_may_be_sent_back_whole(api):
    user = make_user()
    body = api.as_user(user).get(URL).get_json() | {"mail": "none"}
    assert put(api, user, body).get_json() == {"mail": "none", "language": "en"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"mail": "weekly"}, "mail"),
        ({"mail": None}, "mail"),
        ({"language": "fr"}, "language"),
        ({"digestHourUtc": 6}, "digestHourUtc"),
    ],
)
def test_an_unknown_value_or_field_is_refused(api, body, field):
    user = make_user()
    body = assert_problem(put(api, user, body), 400, code="validation_failed")
    assert field in body["errors"]
    assert db.session.scalar(select(func.count()).select_from(NotificationSettings)) == 0


def test_account_deletion_removes_settings_and_pending_digest(app, api, world: World):
    watcher = world.item_watcher
    watcher.is_email_confirmed = True
    db.session.commit()
    put(api, watcher, {"language": "de"})
    response = api.as_user(world.author).post(
        f"/api/trackables/{world.trackable.id}/comments", json={"body": "Found it"}
    )
    assert response.status_code == 201
    run_jobs(app)
    for model in (NotificationSettings, NotificationDigest, NotificationMail):
        assert db.session.scalars(select(model)).all(), model  # the digest waits
    assert api.as_user(watcher).delete("/api/account").status_code == 200
    for model in (NotificationSettings, NotificationDigest, NotificationMail):
        assert db.session.scalars(select(model)).all() == [], model
