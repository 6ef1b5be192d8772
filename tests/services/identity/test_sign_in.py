"""Registration and sign-in through services.identity, without HTTP: a new account signs in
(its email in any case) and its refresh token works once; a wrong password, an unknown
email, a locked-out email and an unconfirmed one (when confirmation is required) fail
with the strings clients handle; registration refuses a taken email, a reserved name and
a weak password."""

from __future__ import annotations

import pytest

from app.errors import ValidationFailed
from app.extensions import db
from app.services import identity

PASSWORD = "tall-maple-lantern-42"


def _register(app, email="walker@example.com", user_name="walker", password=PASSWORD):
    user = identity.register(email=email, user_name=user_name, password=password, config=app.config)
    db.session.commit()
    return user


def test_a_registered_account_signs_in_and_its_refresh_token_works_once(app):
    user = _register(app)

    result = identity.sign_in(email="WALKER@Example.com", password=PASSWORD, config=app.config)
    db.session.commit()

    assert result.failure is None
    assert result.user is not None
    assert result.user.id == user.id
    assert result.refresh_token
    rotated = identity.rotate_refresh_token(result.refresh_token, config=app.config)
    assert rotated is not None
    assert rotated[0].id == user.id
    assert rotated[1] != result.refresh_token
    db.session.commit()
    assert identity.rotate_refresh_token(result.refresh_token, config=app.config) is None


def test_a_wrong_password_and_an_unknown_email_fail_alike(app):
    _register(app)

    wrong = identity.sign_in(
        email="walker@example.com", password="not-it-at-all", config=app.config
    )
    unknown = identity.sign_in(email="nobody@example.com", password=PASSWORD, config=app.config)

    assert (wrong.user, wrong.refresh_token, wrong.failure) == (None, None, identity.FAILED)
    assert (unknown.user, unknown.refresh_token, unknown.failure) == (None, None, identity.FAILED)


def test_failures_in_a_row_lock_the_email_even_for_the_right_password(app):
    _register(app)
    most = app.config["LOCKOUT_MAX_FAILURES"]

    outcomes = [
        identity.sign_in(
            email="walker@example.com", password="wrong-guess-1", config=app.config
        ).failure
        for _ in range(most)
    ]
    db.session.commit()
    after = identity.sign_in(email="walker@example.com", password=PASSWORD, config=app.config)

    assert outcomes == [identity.FAILED] * (most - 1) + [identity.LOCKED_OUT]
    assert after.user is None
    assert after.failure == identity.LOCKED_OUT


def test_an_unconfirmed_email_is_not_allowed_only_when_confirmation_is_required(app):
    _register(app)
    required = {**app.config, "REQUIRE_CONFIRMED_EMAIL": True}

    refused = identity.sign_in(email="walker@example.com", password=PASSWORD, config=required)
    wrong = identity.sign_in(email="walker@example.com", password="not-it-at-all", config=required)
    allowed = identity.sign_in(email="walker@example.com", password=PASSWORD, config=app.config)

    assert refused.user is None
    assert refused.failure == identity.NOT_ALLOWED
    # the password is checked first: a stranger learns nothing about confirmation
    assert wrong.failure == identity.FAILED
    assert allowed.failure is None


@pytest.mark.parametrize(
    ("email", "user_name", "password", "field", "code"),
    [
        ("WALKER@example.com", "someone_else", PASSWORD, "email", "email_taken"),
        ("new@example.com", "admin", PASSWORD, "userName", "validation_failed"),
        ("new@example.com", "walker", PASSWORD, "userName", "validation_failed"),
        ("new@example.com", "newcomer", "short", "password", "validation_failed"),
        ("new@example.com", "newcomer", "newcomer", "password", "validation_failed"),
    ],
    ids=["taken-email", "reserved-name", "taken-name", "short-password", "password-is-name"],
)
def test_registration_refuses(app, email, user_name, password, field, code):
    _register(app)

    with pytest.raises(ValidationFailed) as refused:
        identity.register(email=email, user_name=user_name, password=password, config=app.config)

    assert refused.value.code == code
    assert field in refused.value.extra["errors"]
