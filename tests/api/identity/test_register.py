"""POST /api/auth/register (contract: Identity and account; decisions: Identity)."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.job import Job
from app.models.user import User
from tests.api.identity.helpers import STRONG_PASSWORD, last_mail_to, register
from tests.conftest import assert_problem
from tests.factories import login, make_user
from tests.jobs import delivered_mail


def test_register_answers_200_with_an_empty_body_and_no_token(api):
    response = register(api, "ada@example.com", "ada_walks")
    assert response.status_code == 200
    assert response.get_data() == b""
    assert "accessToken" not in response.get_data(as_text=True)
    # The document lists no content for this answer: nor does the answer name a type.
    assert "Content-Type" not in response.headers
    document = api.get("/api/openapi.json").get_json()
    assert "content" not in document["paths"]["/api/auth/register"]["post"]["responses"]["200"]


def test_register_stores_the_account_with_an_argon2id_hash(api):
    register(api, "Ada@Example.com", "ada_walks")
    user = db.session.query(User).filter_by(user_name="ada_walks").one()
    assert user.normalized_email == "ada@example.com"
    assert user.password_hash.startswith("$argon2id$")
    assert STRONG_PASSWORD not in user.password_hash
    assert user.is_email_confirmed is False


def test_register_mails_a_confirmation_link(app, api):
    register(api, "ada@example.com", "ada_walks")
    mail = last_mail_to(app, "ada@example.com")
    assert "/api/auth/confirmEmail?userId=" in mail.text


def test_registered_account_can_sign_in(api):
    register(api, "ada@example.com", "ada_walks")
    tokens = login(api, "ada@example.com", STRONG_PASSWORD)
    assert tokens["tokenType"] == "Bearer"


def test_invalid_email_is_rejected_under_email(api):
    body = assert_problem(register(api, "not-an-email", "ada_walks"), 400)
    assert set(body["errors"]) == {"email"}


def test_email_taken_in_another_case_is_rejected(api):
    make_user("first_one", email="ada@example.com")
    body = assert_problem(register(api, "ADA@example.COM", "ada_walks"), 400, code="email_taken")
    assert set(body["errors"]) == {"email"}
    assert "already taken" in body["errors"]["email"][0]


@pytest.mark.parametrize(
    "user_name",
    ["Ada_walks", "ad", "a" * 33, "ada-walks", "ada walks", "adá", ""],
    ids=["uppercase", "too-short", "too-long", "dash", "space", "accent", "empty"],
)
def test_user_name_outside_the_allowed_characters_is_rejected(api, user_name):
    body = assert_problem(register(api, "ada@example.com", user_name), 400)
    assert set(body["errors"]) == {"userName"}


@pytest.mark.parametrize("user_name", ["abc", "a" * 32, "ada_2_walks", "123"])
def test_user_name_of_allowed_characters_and_length_is_accepted(api, user_name):
    assert register(api, "ada@example.com", user_name).status_code == 200


@pytest.mark.parametrize("user_name", ["admin", "api", "system", "support"])
def test_reserved_user_names_are_refused(api, user_name):
    body = assert_problem(register(api, "ada@example.com", user_name), 400)
    assert body["errors"]["userName"] == [f"User name '{user_name}' is reserved."]


def test_user_name_taken_is_rejected(api):
    make_user("ada_walks")
    body = assert_problem(
        register(api, "ada@example.com", "ada_walks"), 400, code="validation_failed"
    )
    assert body["errors"]["userName"] == ["User name 'ada_walks' is already taken."]


@pytest.mark.parametrize(
    ("password", "status"),
    [("a" * 7, 400), ("rivers-8", 200), ("r" * 127 + "9", 200), ("r" * 128 + "9", 400)],
    ids=["7-chars", "8-chars", "128-chars", "129-chars"],
)
def test_password_length_is_8_to_128(api, password, status):
    response = register(api, "ada@example.com", "ada_walks", password)
    assert response.status_code == status
    if status == 400:
        assert set(assert_problem(response, 400)["errors"]) == {"password"}


@pytest.mark.parametrize("password", ["password123", "iloveyou", "Qwertyuiop", "1q2w3e4r5t"])
def test_common_passwords_are_refused(api, password):
    body = assert_problem(register(api, "ada@example.com", "ada_walks", password), 400)
    assert "too common" in body["errors"]["password"][0]


def test_password_equal_to_the_email_is_refused(api):
    body = assert_problem(register(api, "ada@example.com", "ada_walks", "ADA@example.com"), 400)
    assert "email address or the user name" in body["errors"]["password"][0]


def test_password_equal_to_the_user_name_is_refused(api):
    body = assert_problem(register(api, "ada@example.com", "ada_walks_far", "Ada_Walks_Far"), 400)
    assert "email address or the user name" in body["errors"]["password"][0]


def test_missing_fields_are_each_named(api):
    body = assert_problem(api.post("/api/auth/register", json={}), 400)
    assert set(body["errors"]) == {"email", "userName", "password"}


def test_every_service_rule_failure_is_reported_at_once(api):
    make_user("someone", email="ada@example.com")
    body = assert_problem(register(api, "ada@example.com", "admin", "password1"), 400)
    assert set(body["errors"]) == {"email", "userName", "password"}


def test_a_rejected_registration_creates_nothing_and_mails_nothing(app, api):
    register(api, "ada@example.com", "admin")
    assert db.session.query(User).count() == 0
    assert db.session.query(Job).count() == 0
    assert delivered_mail(app) == []
