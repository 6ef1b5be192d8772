"""SECRET_KEY rotates: what the old key signed (a website session, an e-mail link) is still
accepted while it is listed in SECRET_KEY_FALLBACKS (SECRET_KEYS_PREVIOUS in the
environment), and what is stored as an HMAC (recovery codes, unlock sessions, lockout
counts) is keyed by RECORDS_KEY, so it outlives the overlap; codes made under 0.1.0's
arrangement (SECRET_KEY itself) included, once RECORDS_KEY is set to that key."""

from __future__ import annotations

import pytest

from app import InsecureConfiguration, create_app
from app.extensions import db
from app.models.identity import RecoveryCode
from tests.api.identity.helpers import (
    LOGIN_URL,
    SIGN_IN_CODES,
    confirm_link,
    last_mail_to,
    register,
    totp,
)
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, make_user
from tests.pages import csrf_token
from tests.test_config import PRODUCTION

OLD = "old-secret-key-" + "o" * 40
NEW = "new-secret-key-" + "n" * 40
NEWER = "newer-secret-key-" + "w" * 40
TWO_FA = "/api/auth/manage/2fa"


@pytest.fixture
def keys(app, monkeypatch):
    """Set the app's keys: `keys(current, *previous, records=...)`."""

    def use(current: str, *previous: str, records: str = "") -> None:
        monkeypatch.setitem(app.config, "SECRET_KEY", current)
        monkeypatch.setitem(app.config, "SECRET_KEY_FALLBACKS", list(previous))
        monkeypatch.setitem(app.config, "RECORDS_KEY", records)

    return use


def recovery_codes(api, user) -> list[str]:
    key = api.as_user(user).post(TWO_FA, json={}).get_json()["sharedKey"]
    body = api.as_user(user).post(TWO_FA, json={"enable": True, "twoFactorCode": totp(key)})
    return body.get_json()["recoveryCodes"]


def sign_in_with(api, user, code: str):
    body = {"email": user.email, "password": DEFAULT_PASSWORD, "twoFactorRecoveryCode": code}
    return api.post(LOGIN_URL, json=body)


def failed(response) -> None:
    body = assert_problem(response, 401)
    assert body["code"] == SIGN_IN_CODES["Failed"]


def test_recovery_codes_made_before_the_first_rotation_sign_in_after_the_overlap(api, keys):
    user = make_user()
    keys(OLD)  # 0.1.0's arrangement: no RECORDS_KEY
    codes = recovery_codes(api, user)
    keys(NEW, OLD, records=OLD)  # the upgrade steps: RECORDS_KEY is the key of then
    assert sign_in_with(api, user, codes[0]).status_code == 200
    keys(NEW, records=OLD)  # the overlap is over
    assert sign_in_with(api, user, codes[1]).status_code == 200
    failed(sign_in_with(api, user, codes[1]))  # still single-use
    failed(sign_in_with(api, user, "AAAAA-BBBBB"))


def test_recovery_codes_made_under_records_key_outlive_every_rotation(api, keys):
    user = make_user()
    keys(NEW, records=OLD)
    codes = recovery_codes(api, user)
    stored = set(db.session.scalars(db.select(RecoveryCode.code_hash)))
    keys(NEWER, NEW, records=OLD)
    keys(NEWER, records=OLD)
    assert sign_in_with(api, user, codes[0]).status_code == 200
    # Each purpose has its own key: a code is not stored under RECORDS_KEY itself.
    keys(NEWER)
    failed(sign_in_with(api, user, codes[1]))
    assert len(stored) == 10


def sign_in_page(api, user):
    token = csrf_token(api, "/en/sign-in")
    data = {"csrf_token": token, "email": user.email, "password": DEFAULT_PASSWORD}
    return api.post("/en/sign-in", data=data)


def test_a_website_session_signed_before_a_rotation_holds_during_the_overlap(api, keys):
    kim = make_user("kim")
    keys(OLD, records=OLD + "r")
    assert sign_in_page(api, kim).status_code == 303
    assert "kim" in api.get("/en/").get_data(as_text=True)
    keys(NEW, OLD, records=OLD + "r")
    assert "kim" in api.get("/en/").get_data(as_text=True)


def test_a_website_session_signed_with_a_key_no_longer_listed_is_signed_out(api, keys):
    kim = make_user("kim")
    keys(OLD, records=OLD + "r")
    assert sign_in_page(api, kim).status_code == 303
    keys(NEW, records=OLD + "r")
    assert "kim" not in api.get("/en/").get_data(as_text=True)


def test_an_email_link_mailed_before_a_rotation_confirms_during_the_overlap(app, api, keys):
    keys(OLD, records=OLD + "r")
    assert register(api, "lee@example.com", "lee").status_code == 200
    link = confirm_link(last_mail_to(app, "lee@example.com"))
    keys(NEW, OLD, records=OLD + "r")
    assert api.get(link).status_code == 200


def test_an_email_link_signed_with_a_key_no_longer_listed_is_refused(app, api, keys):
    keys(OLD, records=OLD + "r")
    register(api, "lee@example.com", "lee")
    link = confirm_link(last_mail_to(app, "lee@example.com"))
    keys(NEW, records=OLD + "r")
    assert api.get(link).status_code == 400


def test_lockout_counts_outlive_a_rotation(api, keys):
    user = make_user()
    keys(OLD, records=OLD + "r")
    wrong = {"email": user.email, "password": "wrong-password-1"}
    for _ in range(4):
        api.post(LOGIN_URL, json=wrong)
    keys(NEW, OLD, records=OLD + "r")
    body = assert_problem(api.post(LOGIN_URL, json=wrong), 401)
    assert body["code"] == SIGN_IN_CODES["LockedOut"]


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"SECRET_KEY_FALLBACKS": [OLD]}, "RECORDS_KEY is not"),
        ({"RECORDS_KEY": PRODUCTION["SECRET_KEY"]}, "SECRET_KEY and RECORDS_KEY have the same"),
        ({"RECORDS_KEY": "short"}, "RECORDS_KEY must be at least"),
    ],
)
def test_production_refuses_a_rotation_that_would_void_stored_codes(settings, words):
    with pytest.raises(InsecureConfiguration, match=words):
        create_app(PRODUCTION | settings)


def start(database_url, tmp_path, **keys):
    """A start as a server makes it (the key checks run; tests' own apps skip them)."""
    settings = {
        "ENV_NAME": "development",
        "SQLALCHEMY_DATABASE_URI": database_url,
        "DEV_KEYS_FILE": tmp_path / "keys.json",
        "RATELIMIT_STORAGE_URI": "memory://",
    }
    return create_app(settings | keys)


def test_a_start_under_another_records_key_is_refused_before_it_voids_the_codes(
    app, database_url, tmp_path
):
    start(database_url, tmp_path, SECRET_KEY=OLD)  # the first start records its key
    with pytest.raises(InsecureConfiguration, match=r"SECRET_KEY \(RECORDS_KEY is unset\) is"):
        start(database_url, tmp_path, SECRET_KEY=NEW)  # a rotation without RECORDS_KEY
    start(database_url, tmp_path, SECRET_KEY=NEW, SECRET_KEY_FALLBACKS=[OLD], RECORDS_KEY=OLD)
    start(database_url, tmp_path, SECRET_KEY=NEWER, RECORDS_KEY=OLD)
    with pytest.raises(InsecureConfiguration, match="RECORDS_KEY is not the key"):
        start(database_url, tmp_path, SECRET_KEY=NEWER, RECORDS_KEY=NEW)


def test_production_starts_with_a_rotation_and_its_records_key():
    create_app(PRODUCTION | {"SECRET_KEY_FALLBACKS": [OLD], "RECORDS_KEY": OLD})
