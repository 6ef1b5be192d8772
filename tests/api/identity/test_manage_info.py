"""GET/POST /api/auth/manage/info: email, confirmation, password and email change, and the
saved experience/map preferences that GET /api/system/status reads."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.user import User
from tests.api.identity.helpers import (
    OTHER_STRONG_PASSWORD,
    bearer,
    confirm_link,
    last_mail_to,
    link_query,
)
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user
from tests.jobs import delivered_mail

INFO = "/api/auth/manage/info"


def post_info(api, user, **body):
    return api.as_user(user).post(INFO, json=body)


def test_info_shows_email_confirmation_and_preferences(api):
    user = make_user(email="ada@example.com", is_email_confirmed=True)
    response = api.as_user(user).get(INFO)
    assert response.status_code == 200
    assert response.get_json() == {
        "email": "ada@example.com",
        "isEmailConfirmed": True,
        "experienceMode": None,
        "mapSource": None,
    }


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_info_needs_a_bearer_token(api, method):
    assert_problem(api.open(method, INFO, json={}), 401)


def test_empty_update_changes_nothing_and_answers_the_info(api):
    user = make_user()
    response = post_info(api, user)
    assert response.status_code == 200
    assert response.get_json()["email"] == user.email


# --- preferences -------------------------------------------------------------------------


def test_preferences_are_saved_and_shown(api):
    user = make_user()
    body = post_info(api, user, experienceMode="no_3rd_parties", mapSource="openstreetmap")
    assert body.get_json()["experienceMode"] == "no_3rd_parties"
    info = api.as_user(user).get(INFO).get_json()
    assert (info["experienceMode"], info["mapSource"]) == ("no_3rd_parties", "openstreetmap")


def test_null_clears_a_preference_and_absence_keeps_the_other(api):
    user = make_user(experience_mode="no_3rd_parties", map_source="google")
    info = post_info(api, user, experienceMode=None).get_json()
    assert (info["experienceMode"], info["mapSource"]) == (None, "google")


@pytest.mark.parametrize(
    ("field", "value"), [("experienceMode", "fastest"), ("mapSource", "bing"), ("mapSource", 3)]
)
def test_unknown_preference_values_are_400(api, field, value):
    body = assert_problem(post_info(api, make_user(), **{field: value}), 400)
    assert set(body["errors"]) == {field}


def test_saved_preference_drives_the_system_status(api):
    user = make_user()
    post_info(api, user, experienceMode="no_3rd_parties")
    status = api.as_user(user).get("/api/system/status").get_json()
    assert status["requestedExperienceMode"] == "no_3rd_parties"
    assert status["usesSavedExperienceModePreference"] is True


# --- password change ---------------------------------------------------------------------


def test_password_change_needs_the_old_password(api):
    body = assert_problem(post_info(api, make_user(), newPassword=OTHER_STRONG_PASSWORD), 400)
    assert set(body["errors"]) == {"oldPassword"}
    assert "old password is required" in body["errors"]["oldPassword"][0]


def test_password_change_with_a_wrong_old_password_is_400(api):
    user = make_user()
    response = post_info(api, user, newPassword=OTHER_STRONG_PASSWORD, oldPassword="wrong-one-1")
    assert assert_problem(response, 400)["errors"] == {"oldPassword": ["Incorrect password."]}


@pytest.mark.parametrize("new_password", ["short1", "password123", "user_ada"])
def test_password_change_applies_the_password_rules(api, new_password):
    user = make_user("user_ada")
    response = post_info(api, user, newPassword=new_password, oldPassword=DEFAULT_PASSWORD)
    assert set(assert_problem(response, 400)["errors"]) == {"newPassword"}


def test_password_change_takes_effect(api):
    user = make_user()
    response = post_info(api, user, newPassword=OTHER_STRONG_PASSWORD, oldPassword=DEFAULT_PASSWORD)
    assert response.status_code == 200
    login(api, user.email, OTHER_STRONG_PASSWORD)
    login(api, user.email, DEFAULT_PASSWORD, expect=401)


def test_password_change_stops_older_access_tokens_at_the_next_request(api):
    user = make_user()
    tokens = login(api, user)
    client = bearer(api, tokens)
    change = {"newPassword": OTHER_STRONG_PASSWORD, "oldPassword": DEFAULT_PASSWORD}
    assert client.post(INFO, json=change).status_code == 200
    body = assert_problem(client.get(INFO), 401)
    assert "revoked" in body["detail"]


def test_password_change_revokes_refresh_tokens(api):
    user = make_user()
    tokens = login(api, user)
    post_info(api, user, newPassword=OTHER_STRONG_PASSWORD, oldPassword=DEFAULT_PASSWORD)
    response = api.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert_problem(response, 401)


def test_a_rejected_update_changes_nothing_at_all(api):
    user = make_user()
    response = post_info(
        api,
        user,
        experienceMode="no_3rd_parties",
        newPassword=OTHER_STRONG_PASSWORD,
        oldPassword="wrong-one-1",
    )
    assert_problem(response, 400)
    db.session.expire_all()
    assert db.session.get(User, user.id).experience_mode is None


def test_empty_strings_mean_no_change(app, api):
    user = make_user(email="same@example.com", is_email_confirmed=True)
    stamp = user.security_stamp
    response = post_info(api, user, newEmail="", newPassword="", oldPassword="")
    assert response.status_code == 200
    assert (response.get_json()["email"], response.get_json()["isEmailConfirmed"]) == (
        "same@example.com",
        True,
    )
    db.session.expire_all()
    assert db.session.get(User, user.id).security_stamp == stamp  # the password is unchanged
    assert delivered_mail(app) == []  # no e-mail change was started
    login(api, "same@example.com")  # the old password still signs in


# --- email change ------------------------------------------------------------------------


def test_email_change_needs_the_current_password(api):
    body = assert_problem(post_info(api, make_user(), newEmail="new@example.com"), 400)
    assert body["errors"] == {
        "oldPassword": ["The current password is required to change the email address."]
    }


def test_email_change_to_an_invalid_address_is_400(api):
    response = post_info(api, make_user(), newEmail="nope", oldPassword=DEFAULT_PASSWORD)
    assert set(assert_problem(response, 400)["errors"]) == {"newEmail"}


def test_email_change_to_a_taken_address_is_400(api):
    make_user(email="taken@example.com")
    response = post_info(
        api, make_user(), newEmail="Taken@Example.com", oldPassword=DEFAULT_PASSWORD
    )
    assert set(assert_problem(response, 400)["errors"]) == {"newEmail"}


def test_email_change_waits_for_confirmation_from_the_new_address(app, api):
    user = make_user(email="old@example.com", is_email_confirmed=True)
    response = post_info(api, user, newEmail="new@example.com", oldPassword=DEFAULT_PASSWORD)
    assert response.get_json()["email"] == "old@example.com"
    query = link_query(last_mail_to(app, "new@example.com"))
    assert query["changedEmail"] == "new@example.com"
    assert query["userId"] == str(user.id)


def test_confirming_the_changed_email_switches_the_address(app, api):
    user = make_user(email="old@example.com")
    post_info(api, user, newEmail="new@example.com", oldPassword=DEFAULT_PASSWORD)
    assert api.get(confirm_link(last_mail_to(app, "new@example.com"))).status_code == 200
    info = api.as_user(user).get(INFO).get_json()
    assert (info["email"], info["isEmailConfirmed"]) == ("new@example.com", True)
    login(api, "new@example.com")
    login(api, "old@example.com", expect=401)


def test_email_change_link_works_only_once(app, api):
    user = make_user(email="old@example.com")
    post_info(api, user, newEmail="new@example.com", oldPassword=DEFAULT_PASSWORD)
    link = confirm_link(last_mail_to(app, "new@example.com"))
    api.get(link)
    assert_problem(api.get(link), 400)


def test_email_change_link_with_another_changed_email_is_rejected(app, api):
    user = make_user(email="old@example.com")
    post_info(api, user, newEmail="new@example.com", oldPassword=DEFAULT_PASSWORD)
    query = link_query(last_mail_to(app, "new@example.com"))
    query["changedEmail"] = "evil@example.com"
    assert_problem(api.get("/api/auth/confirmEmail", query_string=query), 400)
    assert db.session.get(User, user.id).email == "old@example.com"


def test_email_change_is_refused_when_the_address_was_taken_meanwhile(app, api):
    user = make_user(email="old@example.com")
    post_info(api, user, newEmail="new@example.com", oldPassword=DEFAULT_PASSWORD)
    make_user(email="new@example.com")
    response = api.get(confirm_link(last_mail_to(app, "new@example.com")))
    assert set(assert_problem(response, 400)["errors"]) == {"changedEmail"}


def test_same_email_in_another_case_is_no_change_and_sends_no_mail(app, api):
    user = make_user(email="ada@example.com")
    response = post_info(api, user, newEmail="ADA@example.com", oldPassword=DEFAULT_PASSWORD)
    assert response.status_code == 200
    assert delivered_mail(app) == []


def test_each_request_sees_its_own_caller(api):
    ada, ben = make_user(), make_user()
    assert api.as_user(ada).get(INFO).get_json()["email"] == ada.email
    assert api.as_user(ben).get(INFO).get_json()["email"] == ben.email
    assert_problem(api.get(INFO), 401)
