"""POST /api/auth/login: bearer tokens, the four failure strings, lockout per email."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import LoginFailure
from tests.api.identity.helpers import LOGIN_URL, SIGN_IN_CODES, bearer
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user

WRONG = "not-the-password-at-all"


def attempt(api, email, password=DEFAULT_PASSWORD, url=LOGIN_URL, **body):
    return api.post(url, json={"email": email, "password": password, **body})


def failure(response) -> str:
    """The failure string of a 401, checked against its machine code."""
    body = assert_problem(response, 401)
    assert body["code"] == SIGN_IN_CODES[body["detail"]]
    assert body["title"] == "Unauthorized"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    return body["detail"]


def test_login_returns_bearer_tokens_in_the_identity_api_shape(api):
    user = make_user()
    response = attempt(api, user.email)
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"tokenType", "accessToken", "expiresIn", "refreshToken"}
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 3600
    assert isinstance(body["refreshToken"], str)
    assert len(body["refreshToken"]) >= 64


def test_access_token_from_login_opens_protected_routes(api):
    user = make_user()
    tokens = login(api, user)
    response = bearer(api, tokens).get("/api/auth/manage/info")
    assert response.status_code == 200
    assert response.get_json()["email"] == user.email


def test_login_email_is_case_insensitive(api):
    make_user(email="ada@example.com")
    assert attempt(api, "  ADA@Example.com ").status_code == 200


def test_login_without_the_cookie_query_parameters_is_bearer_login(api):
    user = make_user()
    assert attempt(api, user.email, url="/api/auth/login").status_code == 200


@pytest.mark.parametrize(
    "query", ["useCookies=true", "useSessionCookies=true", "useCookies=true&useSessionCookies=true"]
)
def test_cookie_sign_in_is_refused_with_400(api, query):
    user = make_user()
    body = assert_problem(attempt(api, user.email, url=f"/api/auth/login?{query}"), 400)
    assert "useCookies" in body["errors"]
    assert "not offered" in body["detail"]


def test_wrong_password_is_401_failed(api):
    user = make_user()
    assert failure(attempt(api, user.email, WRONG)) == "Failed"


def test_unknown_email_is_401_failed_like_a_wrong_password(api):
    user = make_user()
    known = attempt(api, user.email, WRONG)
    unknown = attempt(api, "nobody@example.com", WRONG)
    assert unknown.status_code == known.status_code == 401
    assert unknown.get_json(force=True) == known.get_json(force=True)


def test_missing_credentials_are_400(api):
    body = assert_problem(api.post(LOGIN_URL, json={}), 400)
    assert set(body["errors"]) == {"email", "password"}


def test_four_failures_answer_failed_and_the_fifth_locks_out(api):
    user = make_user()
    details = [failure(attempt(api, user.email, WRONG)) for _ in range(5)]
    assert details == ["Failed"] * 4 + ["LockedOut"]


def test_locked_out_email_refuses_even_the_right_password(api):
    user = make_user()
    for _ in range(5):
        attempt(api, user.email, WRONG)
    assert failure(attempt(api, user.email)) == "LockedOut"


def test_lockout_of_an_unknown_email_answers_exactly_like_a_known_one(api):
    user = make_user()
    known = [attempt(api, user.email, WRONG).get_json(force=True) for _ in range(6)]
    unknown = [attempt(api, "ghost@example.com", WRONG).get_json(force=True) for _ in range(6)]
    assert known == unknown
    assert [body["detail"] for body in unknown] == ["Failed"] * 4 + ["LockedOut"] * 2


def test_lockout_counts_per_email_not_per_account_or_client(api):
    ada, ben = make_user(), make_user()
    for _ in range(5):
        attempt(api, ada.email, WRONG)
    assert attempt(api, ben.email).status_code == 200


def test_success_resets_the_failure_count(api):
    user = make_user()
    for _ in range(4):
        attempt(api, user.email, WRONG)
    assert attempt(api, user.email).status_code == 200
    details = [failure(attempt(api, user.email, WRONG)) for _ in range(4)]
    assert details == ["Failed"] * 4
    assert attempt(api, user.email).status_code == 200


def test_lockout_ends_after_the_lockout_minutes(api):
    user = make_user()
    for _ in range(5):
        attempt(api, user.email, WRONG)
    lock = db.session.query(LoginFailure).one()
    assert lock.locked_until_utc - utcnow() > timedelta(minutes=4, seconds=50)
    db.session.execute(
        update(LoginFailure).values(locked_until_utc=utcnow() - timedelta(seconds=1))
    )
    db.session.commit()
    assert attempt(api, user.email).status_code == 200


def test_failure_counters_do_not_store_the_email_in_clear(api):
    attempt(api, "ghost@example.com", WRONG)
    row = db.session.query(LoginFailure).one()
    assert "ghost" not in row.email_hash
    assert row.failure_count == 1


class TestConfirmedEmailRequired:
    @pytest.fixture
    def app_overrides(self):
        return {"REQUIRE_CONFIRMED_EMAIL": True}

    def test_unconfirmed_email_is_401_not_allowed(self, api):
        user = make_user(is_email_confirmed=False)
        assert failure(attempt(api, user.email)) == "NotAllowed"

    def test_unconfirmed_email_with_a_wrong_password_is_just_failed(self, api):
        user = make_user(is_email_confirmed=False)
        assert failure(attempt(api, user.email, WRONG)) == "Failed"

    def test_confirmed_email_signs_in(self, api):
        user = make_user(is_email_confirmed=True)
        assert attempt(api, user.email).status_code == 200


def test_unconfirmed_email_signs_in_when_confirmation_is_not_required(api):
    user = make_user(is_email_confirmed=False)
    assert attempt(api, user.email).status_code == 200


@pytest.mark.parametrize(
    ("field", "length"),
    [("email", 255), ("password", 1025), ("twoFactorCode", 65), ("twoFactorRecoveryCode", 65)],
)
def test_fields_beyond_their_documented_length_are_400(api, field, length):
    # A huge string used to reach the password hashing and the look-ups (401 or 200).
    body = {"email": "someone@example.com", "password": "correct-horse-battery-9"}
    body[field] = "a" * length
    problem = assert_problem(api.post("/api/auth/login", json=body), 400)
    assert field in problem["errors"]
