"""JWT_SECRET_KEY rotates: a new key signs, and access tokens signed under a key listed in
JWT_SECRET_KEYS_PREVIOUS (named by their header's `kid`) still open the API until it is
removed; a token naming a key it was not signed with opens nothing."""

from __future__ import annotations

import jwt as pyjwt
import pytest

from app.auth import key_id
from tests.api.identity.helpers import LOGIN_URL, bearer
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user

OLD = "old-signing-key-" + "o" * 40
NEW = "new-signing-key-" + "n" * 40
INFO = "/api/auth/manage/info"


@pytest.fixture
def keys(app, monkeypatch):
    """Set the app's signing keys: `keys(current, *previous)`."""

    def use(current: str, *previous: str) -> None:
        monkeypatch.setitem(app.config, "JWT_SECRET_KEY", current)
        monkeypatch.setitem(app.config, "JWT_SECRET_KEYS_PREVIOUS", list(previous))

    return use


def test_a_token_signed_before_a_rotation_opens_the_api_during_the_overlap(api, keys):
    user = make_user()
    keys(OLD)
    before = login(api, user)
    assert pyjwt.get_unverified_header(before["accessToken"])["kid"] == key_id(OLD)
    keys(NEW, OLD)
    assert bearer(api, before).get(INFO).status_code == 200
    after = api.post(LOGIN_URL, json={"email": user.email, "password": DEFAULT_PASSWORD})
    token = after.get_json()["accessToken"]
    assert pyjwt.get_unverified_header(token)["kid"] == key_id(NEW)
    pyjwt.decode(token, NEW, algorithms=["HS256"], options={"verify_aud": False})  # signs new
    keys(NEW)  # the overlap is over
    assert_problem(bearer(api, before).get(INFO), 401, code="invalid_token")
    assert bearer(api, {"accessToken": token}).get(INFO).status_code == 200


def test_a_token_naming_a_listed_key_it_was_not_signed_with_opens_nothing(api, keys):
    user = make_user()
    keys("someone-elses-key-" + "x" * 40)
    forged = login(api, user)["accessToken"]
    payload = pyjwt.decode(forged, options={"verify_signature": False})
    header = {"kid": key_id(OLD)}  # names a trusted key, signed with another
    token = pyjwt.encode(payload, "someone-elses-key-" + "x" * 40, headers=header)
    keys(NEW, OLD)
    assert_problem(bearer(api, {"accessToken": token}).get(INFO), 401, code="invalid_token")


def test_a_token_without_a_key_name_is_verified_with_the_current_key(api, keys):
    """Tokens made before tokens named their key: the current key decides."""
    user = make_user()
    keys(NEW)
    payload = pyjwt.decode(login(api, user)["accessToken"], options={"verify_signature": False})
    unnamed = pyjwt.encode(payload, NEW, algorithm="HS256")
    assert bearer(api, {"accessToken": unnamed}).get(INFO).status_code == 200
    keys("another-new-key-" + "a" * 40, NEW)
    assert_problem(bearer(api, {"accessToken": unnamed}).get(INFO), 401, code="invalid_token")
