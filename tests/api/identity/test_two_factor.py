"""POST /api/auth/manage/2fa and two-factor sign-in: TOTP codes usable once, ten
single-use recovery codes, shared key reset, forget machine."""

from __future__ import annotations

import base64

import pytest

from app.extensions import db
from app.models.identity import RecoveryCode
from tests.api.identity.helpers import LOGIN_URL, SIGN_IN_CODES, bearer, totp
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user

TWO_FA = "/api/auth/manage/2fa"


def manage(api, user, **body):
    return api.as_user(user).post(TWO_FA, json=body)


def sign_in(api, user, **body):
    return api.post(LOGIN_URL, json={"email": user.email, "password": DEFAULT_PASSWORD, **body})


def detail(response) -> str:
    body = assert_problem(response, 401)
    assert body["code"] == SIGN_IN_CODES[body["detail"]]
    return body["detail"]


@pytest.fixture
def enabled(api):
    """A user with 2FA on: (user, shared key, recovery codes). The enabling code used the
    current time step, so sign-ins in a test use the next step (still within the drift)."""
    user = make_user()
    key = manage(api, user).get_json()["sharedKey"]
    body = manage(api, user, enable=True, twoFactorCode=totp(key)).get_json()
    assert body["isTwoFactorEnabled"] is True
    return user, key, body["recoveryCodes"]


def test_first_call_creates_a_base32_shared_key_and_reports_the_state(api):
    response = manage(api, make_user())
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {
        "sharedKey",
        "recoveryCodesLeft",
        "recoveryCodes",
        "isTwoFactorEnabled",
        "isMachineRemembered",
    }
    assert base64.b32decode(body["sharedKey"])
    assert body["recoveryCodes"] is None
    assert body["recoveryCodesLeft"] == 0
    assert body["isTwoFactorEnabled"] is False
    assert body["isMachineRemembered"] is False


def test_shared_key_stays_the_same_between_calls(api):
    user = make_user()
    assert manage(api, user).get_json()["sharedKey"] == manage(api, user).get_json()["sharedKey"]


def test_2fa_needs_a_bearer_token(api):
    assert_problem(api.post(TWO_FA, json={}), 401)


def test_enable_without_a_code_is_400(api):
    user = make_user()
    manage(api, user)
    body = assert_problem(manage(api, user, enable=True), 400)
    assert set(body["errors"]) == {"twoFactorCode"}
    assert "No 2fa token was provided" in body["errors"]["twoFactorCode"][0]


def test_enable_with_a_wrong_code_is_400_and_leaves_2fa_off(api):
    user = make_user()
    manage(api, user)
    body = assert_problem(manage(api, user, enable=True, twoFactorCode="000000"), 400)
    assert "was invalid" in body["errors"]["twoFactorCode"][0]
    assert manage(api, user).get_json()["isTwoFactorEnabled"] is False


def test_enable_together_with_reset_shared_key_is_400(api):
    user = make_user()
    key = manage(api, user).get_json()["sharedKey"]
    response = manage(api, user, enable=True, twoFactorCode=totp(key), resetSharedKey=True)
    assert set(assert_problem(response, 400)["errors"]) == {"resetSharedKey"}


def test_enable_with_a_valid_code_returns_ten_recovery_codes(api, enabled):
    user, _, codes = enabled
    assert len(codes) == len(set(codes)) == 10
    body = manage(api, user).get_json()
    assert body["recoveryCodes"] is None
    assert body["recoveryCodesLeft"] == 10


def test_recovery_codes_are_stored_hashed(api, enabled):
    _, _, codes = enabled
    stored = {row.code_hash for row in db.session.query(RecoveryCode)}
    assert len(stored) == 10
    assert not stored & set(codes)


def test_sign_in_with_2fa_on_and_no_code_is_requires_two_factor(api, enabled):
    user, _, _ = enabled
    assert detail(sign_in(api, user)) == "RequiresTwoFactor"


def test_wrong_password_with_a_valid_code_is_still_failed(api, enabled):
    user, key, _ = enabled
    body = {"email": user.email, "password": "nope-nope-1", "twoFactorCode": totp(key, 1)}
    assert detail(api.post(LOGIN_URL, json=body)) == "Failed"


def test_sign_in_with_a_valid_code_gets_tokens(api, enabled):
    user, key, _ = enabled
    response = sign_in(api, user, twoFactorCode=totp(key, steps_ahead=1))
    assert response.status_code == 200
    assert response.get_json()["tokenType"] == "Bearer"


def test_a_totp_code_is_refused_the_second_time(api, enabled):
    user, key, _ = enabled
    code = totp(key, steps_ahead=1)
    assert sign_in(api, user, twoFactorCode=code).status_code == 200
    assert detail(sign_in(api, user, twoFactorCode=code)) == "Failed"


def test_the_code_that_enabled_2fa_cannot_sign_in(api):
    user = make_user()
    key = manage(api, user).get_json()["sharedKey"]
    code = totp(key)
    manage(api, user, enable=True, twoFactorCode=code)
    assert detail(sign_in(api, user, twoFactorCode=code)) == "Failed"


def test_an_older_code_is_refused_after_a_newer_one_was_used(api, enabled):
    user, key, _ = enabled
    newer, older = totp(key, steps_ahead=1), totp(key)
    assert sign_in(api, user, twoFactorCode=newer).status_code == 200
    assert detail(sign_in(api, user, twoFactorCode=older)) == "Failed"


def test_wrong_codes_count_towards_lockout(api, enabled):
    user, key, _ = enabled
    details = [detail(sign_in(api, user, twoFactorCode="000000")) for _ in range(5)]
    assert details == ["Failed"] * 4 + ["LockedOut"]
    assert detail(sign_in(api, user, twoFactorCode=totp(key, steps_ahead=1))) == "LockedOut"


def test_recovery_code_signs_in_once(api, enabled):
    user, _, codes = enabled
    assert sign_in(api, user, twoFactorRecoveryCode=codes[0]).status_code == 200
    assert detail(sign_in(api, user, twoFactorRecoveryCode=codes[0])) == "Failed"
    assert manage(api, user).get_json()["recoveryCodesLeft"] == 9


def test_recovery_code_is_accepted_in_lower_case_and_without_the_dash(api, enabled):
    user, _, codes = enabled
    relaxed = codes[1].replace("-", "").lower()
    assert sign_in(api, user, twoFactorRecoveryCode=relaxed).status_code == 200


def test_reset_recovery_codes_replaces_them(api, enabled):
    user, _, old_codes = enabled
    body = manage(api, user, resetRecoveryCodes=True).get_json()
    assert len(body["recoveryCodes"]) == 10
    assert body["recoveryCodesLeft"] == 10
    assert not set(body["recoveryCodes"]) & set(old_codes)
    assert detail(sign_in(api, user, twoFactorRecoveryCode=old_codes[0])) == "Failed"
    assert sign_in(api, user, twoFactorRecoveryCode=body["recoveryCodes"][0]).status_code == 200


def test_reset_shared_key_disables_2fa_until_a_new_code_is_verified(api, enabled):
    user, old_key, _ = enabled
    body = manage(api, user, resetSharedKey=True).get_json()
    assert body["isTwoFactorEnabled"] is False
    assert body["sharedKey"] != old_key
    assert sign_in(api, user).status_code == 200
    refused = manage(api, user, enable=True, twoFactorCode=totp(old_key, steps_ahead=1))
    assert_problem(refused, 400)
    accepted = manage(api, user, enable=True, twoFactorCode=totp(body["sharedKey"]))
    assert accepted.get_json()["isTwoFactorEnabled"] is True


def test_enable_false_disables_2fa(api, enabled):
    user, _, _ = enabled
    assert manage(api, user, enable=False).get_json()["isTwoFactorEnabled"] is False
    assert sign_in(api, user).status_code == 200


def test_forget_machine_ends_every_session(api):
    user = make_user()
    tokens = login(api, user)
    client = bearer(api, tokens)
    body = client.post(TWO_FA, json={"forgetMachine": True}).get_json()
    assert body["isMachineRemembered"] is False
    assert_problem(client.get("/api/auth/manage/info"), 401)
    refreshed = api.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert_problem(refreshed, 401)


@pytest.mark.parametrize("value", [0, 1, "true", "yes"])
def test_a_boolean_field_takes_only_json_booleans(api, value):
    # The document says boolean; marshmallow alone read 0, 1, "true" and "yes" as booleans.
    body = assert_problem(manage(api, make_user(), resetRecoveryCodes=value), 400)
    assert set(body["errors"]) == {"resetRecoveryCodes"}


def test_null_stays_allowed_where_the_document_allows_it(api):
    assert manage(api, make_user(), enable=None).status_code == 200
