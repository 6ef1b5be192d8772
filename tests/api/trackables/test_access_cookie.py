"""The access-session cookie (decisions: Access sessions for secret codes; Trackable codes;
contract: Authentication items 4 and 6): signed, HttpOnly, SameSite=Lax, carrying no
secret; any cookie that is not one this deployment signed within its lifetime (tampered,
signed with another key, unsigned, expired, garbage) is no session at all, never a 500."""

from __future__ import annotations

import base64
import time

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from app.models.trackable import TrackableAccessSession, TrackableVisibility
from tests.conftest import ApiClient, assert_problem
from tests.factories import codes_of, count_rows, make_trackable, make_user

COOKIE = "ln_trackable_access"
SALT = "trackable-access-session"
LOOKUP = "/api/trackables/lookup"
ACTIVE = "/api/trackables/active"
SECRET = "LN5V10AB01"
DAY = 86400


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner, secret_code=SECRET)


def unlock(api: ApiClient, code: str = SECRET):
    response = api.post(LOOKUP, json={"code": code})
    assert response.get_json()["usesSecretAccess"] is True, response.get_data(as_text=True)
    return response


def cookie_header(response) -> str:
    (header,) = [v for v in response.headers.getlist("Set-Cookie") if v.startswith(f"{COOKIE}=")]
    return header


def cookie_value(api: ApiClient) -> str:
    cookie = api.client.get_cookie(COOKIE)
    assert cookie is not None
    return cookie.value


def replace_cookie(api: ApiClient, value: str) -> None:
    api.client.set_cookie(COOKIE, value)


def client_id_in(app, value: str) -> str:
    """The client id a valid cookie of this deployment carries."""
    return URLSafeTimedSerializer(app.config["SECRET_KEY"], salt=SALT).loads(value)


def assert_no_session(api: ApiClient, trackable) -> None:
    """The client is treated as holding no session, on every route that reads the cookie."""
    listed = api.get(ACTIVE)
    assert listed.status_code == 200, listed.get_data(as_text=True)
    assert listed.get_json() == []
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")
    message = api.post(f"{ACTIVE}/{trackable.id}/message", json={"statusMessage": "hi"})
    assert_problem(message, 404, code="trackable_not_found")
    assert api.delete(f"{ACTIVE}/{trackable.id}").status_code == 204


def assert_session(api: ApiClient, trackable) -> None:
    assert [item["trackableId"] for item in api.get(ACTIVE).get_json()] == [str(trackable.id)]
    assert api.get(f"{ACTIVE}/{trackable.id}").status_code == 200


def change_one_character(text: str, at: int) -> str:
    replacement = "A" if text[at] != "A" else "B"
    return text[:at] + replacement + text[at + 1 :]


# --- attributes --------------------------------------------------------------------------


def test_the_cookie_is_http_only_same_site_lax_for_the_whole_site(api, trackable):
    attributes = [part.strip().lower() for part in cookie_header(unlock(api)).split(";")]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "path=/" in attributes


def test_the_cookie_lasts_its_configured_lifetime(app, api, trackable):
    header = cookie_header(unlock(api)).lower()
    days = app.config["TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS"]
    assert f"max-age={days * DAY}" in header
    assert "expires=" in header


def test_the_cookie_is_secure_in_production(app, api, trackable):
    app.config["TRACKABLE_ACCESS_COOKIE_SECURE"] = True
    attributes = [part.strip().lower() for part in cookie_header(unlock(api)).split(";")]
    assert "secure" in attributes


def test_the_cookie_is_signed_with_the_deployments_secret_key(app, api, trackable):
    unlock(api)
    client_id = client_id_in(app, cookie_value(api))
    assert isinstance(client_id, str)
    assert len(client_id) >= 32  # a random id, not a counter


def test_the_cookie_carries_no_secret_code_and_no_qr_token(app, api, trackable):
    _, token = codes_of(trackable)
    unlock(api, SECRET)
    unlock(api, token)
    value = cookie_value(api)
    payload = value.split(".")[0]
    decoded = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode(errors="ignore")
    for text in (value, decoded, client_id_in(app, value)):
        assert SECRET not in text.upper()
        assert token not in text
        assert str(trackable.id) not in text  # which trackables it opened stays on the server


def test_two_clients_get_different_ids(app, api, trackable):
    other = ApiClient(app.test_client())
    unlock(api)
    unlock(other)
    assert client_id_in(app, cookie_value(api)) != client_id_in(app, cookie_value(other))


# --- cookies that are no session ---------------------------------------------------------


@pytest.mark.parametrize("where", ["payload", "timestamp", "signature"])
def test_a_tampered_cookie_is_no_session(api, trackable, where):
    unlock(api)
    value = cookie_value(api)
    payload, stamp, _signature = value.split(".")
    at = {
        "payload": len(payload) // 2,
        "timestamp": len(payload) + 1 + len(stamp) // 2,
        "signature": len(value) - 5,
    }[where]
    tampered = change_one_character(value, at)
    assert tampered != value
    replace_cookie(api, tampered)
    assert_no_session(api, trackable)
    assert count_rows(TrackableAccessSession) == 1  # the real session is still there


def test_a_tampered_cookie_does_not_reveal_a_hidden_trackable(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    unlock(api, codes_of(hidden)[0])
    assert api.get(f"/api/trackables/{hidden.id}").status_code == 200
    replace_cookie(api, change_one_character(cookie_value(api), len(cookie_value(api)) - 3))
    assert_problem(api.get(f"/api/trackables/{hidden.id}"), 404, code="trackable_not_found")


def test_a_cookie_signed_with_another_secret_key_is_no_session(app, api, trackable):
    unlock(api)
    client_id = client_id_in(app, cookie_value(api))
    forged = URLSafeTimedSerializer("another-deployments-key", salt=SALT).dumps(client_id)
    replace_cookie(api, forged)
    assert_no_session(api, trackable)


def test_a_cookie_signed_with_another_salt_is_no_session(app, api, trackable):
    unlock(api)
    client_id = client_id_in(app, cookie_value(api))
    forged = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt="other").dumps(client_id)
    replace_cookie(api, forged)
    assert_no_session(api, trackable)


def test_a_forged_unsigned_client_id_is_no_session(app, api, trackable):
    unlock(api)
    client_id = client_id_in(app, cookie_value(api))
    replace_cookie(api, client_id)
    assert_no_session(api, trackable)


def test_a_changing_secret_key_ends_every_cookie(app, api, trackable):
    unlock(api)
    app.config["SECRET_KEY"] = "a-rotated-session-secret"
    assert_no_session(api, trackable)


def test_rotating_the_code_key_leaves_cookies_working(app, api, trackable):
    # Decisions: codes use their own key, so rotating one does not break the other.
    unlock(api)
    app.config["TRACKABLE_CODE_KEY"] = "a-rotated-code-key"
    assert_session(api, trackable)


@pytest.mark.parametrize(
    "value",
    [
        "",
        ".",
        "..",
        "x.y.z",
        "not-base64!!.AAAA.BBBB",
        "e30.ZZZZZZ.c2lnbmF0dXJl",
        "\u00e9t\u00e9.\u00e9.\u00e9",
        "A" * 4000,
        "null",
        '"quoted"',
    ],
)
def test_a_garbage_cookie_is_no_session_and_no_500(api, trackable, value):
    unlock(api)
    replace_cookie(api, value)
    assert_no_session(api, trackable)


def test_a_signed_cookie_that_is_not_a_client_id_is_no_session(app, api, trackable):
    unlock(api)
    for payload in ([], {"client": "x"}, 7, ""):
        value = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt=SALT).dumps(payload)
        replace_cookie(api, value)
        assert_no_session(api, trackable)


def test_a_fresh_id_signed_by_the_deployment_opens_nothing_it_did_not_unlock(app, api, trackable):
    unlock(ApiClient(app.test_client()))  # someone else's session
    value = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt=SALT).dumps("made-up-id")
    replace_cookie(api, value)
    assert_no_session(api, trackable)


# --- expiry ------------------------------------------------------------------------------


def later(monkeypatch: pytest.MonkeyPatch, seconds: int) -> None:
    """The signer's clock runs `seconds` ahead (the cookie's age, as the server sees it)."""
    start = int(time.time())
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: start + seconds)


def test_a_cookie_just_inside_its_lifetime_still_works(app, api, trackable, monkeypatch):
    unlock(api)
    later(monkeypatch, app.config["TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS"] * DAY - 60)
    assert_session(api, trackable)


def test_an_expired_cookie_is_no_session(app, api, trackable, monkeypatch):
    unlock(api)
    later(monkeypatch, app.config["TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS"] * DAY + 60)
    assert_no_session(api, trackable)


def test_a_cookie_from_the_future_is_no_session(app, api, trackable, monkeypatch):
    later(monkeypatch, 10 * DAY)
    unlock(api)  # signed ten days ahead
    monkeypatch.undo()
    assert_no_session(api, trackable)


# --- replacing and refreshing ------------------------------------------------------------


def test_a_later_unlock_keeps_this_clients_id_and_adds_the_trackable(app, api, owner, trackable):
    second = make_trackable(owner)
    unlock(api)
    first_id = client_id_in(app, cookie_value(api))
    response = unlock(api, codes_of(second)[0])
    cookie_header(response)  # refreshed, so its lifetime starts again
    assert client_id_in(app, cookie_value(api)) == first_id
    listed = {item["trackableId"] for item in api.get(ACTIVE).get_json()}
    assert listed == {str(trackable.id), str(second.id)}


def test_an_invalid_cookie_is_replaced_by_a_new_client_on_the_next_unlock(
    app, api, owner, trackable
):
    second = make_trackable(owner)
    unlock(api)
    old_id = client_id_in(app, cookie_value(api))
    replace_cookie(api, change_one_character(cookie_value(api), len(cookie_value(api)) - 3))
    unlock(api, codes_of(second)[0])
    new_id = client_id_in(app, cookie_value(api))
    assert new_id != old_id
    # The new client holds only what it unlocked itself.
    assert [item["trackableId"] for item in api.get(ACTIVE).get_json()] == [str(second.id)]


def test_an_expired_cookie_is_replaced_on_the_next_unlock(app, api, trackable, monkeypatch):
    unlock(api)
    old_id = client_id_in(app, cookie_value(api))
    later(monkeypatch, app.config["TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS"] * DAY + 60)
    unlock(api)
    monkeypatch.undo()
    assert client_id_in(app, cookie_value(api)) != old_id


def test_a_miss_or_a_public_match_leaves_the_cookie_alone(api, trackable):
    unlock(api)
    value = cookie_value(api)
    for code in ("LN7777777Z", trackable.public_code):
        response = api.post(LOOKUP, json={"code": code})
        assert not [v for v in response.headers.getlist("Set-Cookie") if v.startswith(COOKIE)]
    assert cookie_value(api) == value


def test_reads_and_ending_a_session_do_not_set_the_cookie(api, trackable):
    unlock(api)
    for response in (
        api.get(ACTIVE),
        api.get(f"{ACTIVE}/{trackable.id}"),
        api.post(f"{ACTIVE}/{trackable.id}/message", json={"statusMessage": "x"}),
        api.delete(f"{ACTIVE}/{trackable.id}"),
    ):
        assert not [v for v in response.headers.getlist("Set-Cookie") if v.startswith(COOKIE)]


def test_a_signed_in_caller_without_the_cookie_still_reaches_an_unlocked_landing(api, trackable):
    finder = make_user("finn")
    unlock(api.as_user(finder))
    api.client.delete_cookie(COOKIE)
    assert api.get(ACTIVE).get_json() == []
    assert api.as_user(finder).get(f"{ACTIVE}/{trackable.id}").status_code == 200
