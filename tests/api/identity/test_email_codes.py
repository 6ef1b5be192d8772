"""confirmEmail, resendConfirmationEmail, forgotPassword and resetPassword: signed,
expiring, single-use codes; identical answers for known and unknown emails."""

from __future__ import annotations

from datetime import timedelta

import pytest
from itsdangerous import TimestampSigner
from sqlalchemy import update

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import EmailCode
from app.models.user import User
from tests.api.identity.helpers import (
    LOGIN_URL,
    OTHER_STRONG_PASSWORD,
    STRONG_PASSWORD,
    bearer,
    confirm_link,
    last_mail_to,
    link_query,
    register,
    reset_code,
)
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user
from tests.jobs import delivered_mail


@pytest.fixture
def ada(app, api):
    register(api, "ada@example.com", "ada_walks")
    return db.session.query(User).filter_by(user_name="ada_walks").one()


def forgot(api, email):
    return api.post("/api/auth/forgotPassword", json={"email": email})


def reset(api, email, code, new_password=OTHER_STRONG_PASSWORD):
    return api.post(
        "/api/auth/resetPassword",
        json={"email": email, "resetCode": code, "newPassword": new_password},
    )


def same_answer(first, second) -> None:
    assert first.status_code == second.status_code == 200
    assert first.get_data() == second.get_data() == b""
    assert first.mimetype == second.mimetype


# --- confirmEmail ------------------------------------------------------------------------


def test_confirmation_link_confirms_the_email(app, api, ada):
    response = api.get(confirm_link(last_mail_to(app, ada.email)))
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    assert response.get_data(as_text=True) == "Thank you for confirming your email."
    tokens = login(api, ada.email, STRONG_PASSWORD)
    assert bearer(api, tokens).get("/api/auth/manage/info").get_json()["isEmailConfirmed"]


def test_confirmation_link_works_only_once(app, api, ada):
    link = confirm_link(last_mail_to(app, ada.email))
    api.get(link)
    body = assert_problem(api.get(link), 400, code="invalid_email_code")
    assert body["errors"] == {"code": ["Invalid token."]}


def test_confirmation_code_for_another_user_id_is_rejected(app, api, ada):
    query = link_query(last_mail_to(app, ada.email))
    other = make_user()
    response = api.get("/api/auth/confirmEmail", query_string={**query, "userId": str(other.id)})
    assert_problem(response, 400)
    assert db.session.get(User, other.id).is_email_confirmed is False


def test_tampered_confirmation_code_is_rejected(app, api, ada):
    query = link_query(last_mail_to(app, ada.email))
    tampered = query["code"][:-3] + ("AAA" if not query["code"].endswith("AAA") else "BBB")
    response = api.get("/api/auth/confirmEmail", query_string={**query, "code": tampered})
    body = assert_problem(response, 400, code="invalid_email_code")
    assert body["errors"] == {"code": ["Invalid token."]}


def test_confirmation_code_older_than_a_day_is_rejected(app, api, monkeypatch):
    day_ago = int(utcnow().timestamp()) - 24 * 3600 - 5
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: day_ago)
    register(api, "ada@example.com", "ada_walks")
    mail = last_mail_to(app, "ada@example.com")  # the worker signs the code a day ago
    monkeypatch.undo()
    assert_problem(api.get(confirm_link(mail)), 400)


def test_confirmation_code_past_its_stored_expiry_is_rejected(app, api, ada):
    mail = last_mail_to(app, ada.email)  # the worker stores the code as it mails it
    db.session.execute(update(EmailCode).values(expires_utc=utcnow() - timedelta(seconds=1)))
    db.session.commit()
    assert_problem(api.get(confirm_link(mail)), 400)


def test_confirm_email_needs_a_guid_user_id_and_a_code(api):
    body = assert_problem(api.get("/api/auth/confirmEmail?userId=nope"), 400)
    assert set(body["errors"]) == {"userId", "code"}


def test_a_reset_code_does_not_confirm_an_email(app, api, ada):
    forgot(api, ada.email)
    code = reset_code(last_mail_to(app, ada.email))
    response = api.get("/api/auth/confirmEmail", query_string={"userId": ada.id, "code": code})
    assert_problem(response, 400)


# --- resendConfirmationEmail -------------------------------------------------------------


def test_resend_mails_a_new_working_link(app, api, ada):
    delivered_mail(app).clear()
    response = api.post("/api/auth/resendConfirmationEmail", json={"email": "ADA@example.com"})
    assert response.status_code == 200
    assert api.get(confirm_link(last_mail_to(app, ada.email))).status_code == 200


def test_resend_answers_the_same_for_an_unknown_email_and_mails_nothing(app, api, ada):
    delivered_mail(app).clear()
    known = api.post("/api/auth/resendConfirmationEmail", json={"email": ada.email})
    unknown = api.post("/api/auth/resendConfirmationEmail", json={"email": "ghost@example.com"})
    same_answer(known, unknown)
    assert [mail.to for mail in delivered_mail(app)] == [ada.email]


def test_resend_for_a_confirmed_email_answers_200_and_mails_nothing(app, api):
    user = make_user(is_email_confirmed=True)
    response = api.post("/api/auth/resendConfirmationEmail", json={"email": user.email})
    assert response.status_code == 200
    assert delivered_mail(app) == []


# --- forgotPassword / resetPassword ------------------------------------------------------


def test_forgot_password_mails_a_reset_code(app, api):
    user = make_user()
    assert forgot(api, user.email).status_code == 200
    assert reset_code(last_mail_to(app, user.email))


def test_forgot_password_answers_the_same_for_an_unknown_email_and_mails_nothing(app, api):
    user = make_user()
    same_answer(forgot(api, user.email), forgot(api, "ghost@example.com"))
    assert [mail.to for mail in delivered_mail(app)] == [user.email]


def test_forgot_password_answers_200_even_for_text_that_is_not_an_email(api):
    assert forgot(api, "not an email").status_code == 200


def test_reset_password_sets_the_new_password(app, api):
    user = make_user()
    forgot(api, user.email)
    response = reset(api, user.email, reset_code(last_mail_to(app, user.email)))
    assert response.status_code == 200
    assert response.get_data() == b""
    login(api, user.email, OTHER_STRONG_PASSWORD)
    login(api, user.email, DEFAULT_PASSWORD, expect=401)


def test_reset_code_works_only_once(app, api):
    user = make_user()
    forgot(api, user.email)
    code = reset_code(last_mail_to(app, user.email))
    reset(api, user.email, code)
    response = reset(api, user.email, code, "a-third-long-passphrase-3")
    body = assert_problem(response, 400, code="invalid_email_code")
    assert body["errors"] == {"resetCode": ["Invalid token."]}


def test_reset_code_for_another_email_is_rejected(app, api):
    ada, ben = make_user(), make_user()
    forgot(api, ada.email)
    body = assert_problem(reset(api, ben.email, reset_code(last_mail_to(app, ada.email))), 400)
    assert set(body["errors"]) == {"resetCode"}


def test_reset_with_an_unknown_email_answers_like_a_wrong_code(app, api):
    user = make_user()
    wrong_code = assert_problem(reset(api, user.email, "forged"), 400)
    unknown = assert_problem(reset(api, "ghost@example.com", "forged"), 400)
    assert unknown == wrong_code


def test_reset_refuses_a_weak_password_and_keeps_the_code_usable(app, api):
    user = make_user()
    forgot(api, user.email)
    code = reset_code(last_mail_to(app, user.email))
    body = assert_problem(reset(api, user.email, code, "password1"), 400)
    assert set(body["errors"]) == {"newPassword"}
    assert reset(api, user.email, code).status_code == 200


def test_reset_ends_every_session(app, api):
    user = make_user()
    tokens = login(api, user)
    forgot(api, user.email)
    reset(api, user.email, reset_code(last_mail_to(app, user.email)))
    assert_problem(bearer(api, tokens).get("/api/auth/manage/info"), 401)
    refreshed = api.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert_problem(refreshed, 401)


def test_reset_ends_a_lockout(app, api):
    user = make_user()
    for _ in range(5):
        api.post(LOGIN_URL, json={"email": user.email, "password": "wrong-password-x"})
    forgot(api, user.email)
    reset(api, user.email, reset_code(last_mail_to(app, user.email)))
    login(api, user.email, OTHER_STRONG_PASSWORD)


def test_reset_code_dies_when_the_password_changes_meanwhile(app, api):
    user = make_user()
    forgot(api, user.email)
    code = reset_code(last_mail_to(app, user.email))
    change = api.as_user(user).post(
        "/api/auth/manage/info",
        json={"oldPassword": DEFAULT_PASSWORD, "newPassword": STRONG_PASSWORD},
    )
    assert change.status_code == 200
    assert_problem(reset(api, user.email, code), 400)


def test_reset_code_older_than_a_day_is_rejected(app, api, monkeypatch):
    user = make_user()
    day_ago = int(utcnow().timestamp()) - 24 * 3600 - 5
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: day_ago)
    forgot(api, user.email)
    mail = last_mail_to(app, user.email)  # the worker signs the code a day ago
    monkeypatch.undo()
    assert_problem(reset(api, user.email, reset_code(mail)), 400)


def test_email_codes_are_stored_without_the_code(app, api):
    user = make_user()
    forgot(api, user.email)
    code = reset_code(last_mail_to(app, user.email))
    row = db.session.query(EmailCode).one()
    assert code not in row.nonce_hash
    assert row.expires_utc - row.created_utc == timedelta(hours=24)


def test_every_email_address_the_document_takes_states_its_bound(api):
    """A schema-valid address always fits the request line (a generated 300 kB
    `changedEmail` met gunicorn's 414 before the app's 400)."""
    document = api.get("/api/openapi.json").get_json()
    bounds, bodies = [], set()
    for path, operations in document["paths"].items():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue  # the path's own parameters
            for parameter in operation.get("parameters", []):
                if parameter["name"].lower().endswith("email"):
                    bounds.append((path, parameter["name"], parameter["schema"].get("maxLength")))
            for content in operation.get("requestBody", {}).get("content", {}).values():
                reference = content.get("schema", {}).get("$ref", "")
                bodies.add(reference.rsplit("/", 1)[-1])
    for name in bodies - {""}:
        for field, shape in document["components"]["schemas"][name].get("properties", {}).items():
            if field.lower().endswith("email") and shape.get("type") == "string":
                bounds.append((name, field, shape.get("maxLength")))
    assert ("/api/auth/confirmEmail", "changedEmail", 254) in bounds
    assert [bound for bound in bounds if bound[2] is None] == []
