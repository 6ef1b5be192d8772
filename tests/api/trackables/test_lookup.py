"""Lookup: POST and GET /api/trackables/lookup (contract: Trackables: lookup and active
sessions; decisions: Trackable codes, Access sessions for secret codes): every code kind
and its normalisation, every kind of miss, the session cookie, the account unlock, and
secrets kept out of bodies and logs."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import (
    TrackableAccessSession,
    TrackableUnlock,
    TrackableVisibility,
)
from tests.conftest import assert_problem
from tests.factories import codes_of, make_group, make_trackable, make_user
from tests.factories import count_rows as count

LOOKUP = "/api/trackables/lookup"
COOKIE = "ln_trackable_access"
# A system secret whose body holds 0, 1, 5 and V: each look-alike has a place to go.
SECRET = "LN5V10AB01"
BYO = "Falcon-Nest_7"


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner, public_code="LN-5V10A0", secret_code=SECRET)


def lookup(api, code, method="POST", **kwargs):
    if method == "POST":
        return api.post(LOOKUP, json={"code": code}, **kwargs)
    return api.get(LOOKUP, query_string={"code": code}, **kwargs)


def found(response, trackable):
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert body["found"] is True
    assert body["trackableId"] == str(trackable.id)
    assert body["error"] is None
    assert body["helpUrl"] is None
    return body


def missed(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert body["found"] is False
    assert body["trackableId"] is None
    assert body["isPublicCodeMatch"] is False
    assert body["usesSecretAccess"] is False
    assert body["redirectUrl"] is None
    assert body["error"]
    return body


def set_cookie_headers(response):
    return [value for value in response.headers.getlist("Set-Cookie") if value.startswith(COOKIE)]


# --- public codes ------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_public_code_finds_the_trackable_and_points_at_its_public_page(api, trackable, method):
    body = found(lookup(api, "LN-5V10A0", method), trackable)
    assert body["isPublicCodeMatch"] is True
    assert body["usesSecretAccess"] is False
    assert body["redirectUrl"] == "/en/trackables/LN-5V10A0"


@pytest.mark.parametrize("typed", ["ln-5v10a0", "LN-SV1OAO", "LN-5U1OA0", " LN-5V10A0 "])
def test_public_code_is_normalised_like_a_typed_code(api, trackable, typed):
    body = found(lookup(api, typed), trackable)
    assert body["isPublicCodeMatch"] is True


def test_public_code_match_opens_no_session(api, trackable):
    response = lookup(api, "LN-5V10A0")
    assert set_cookie_headers(response) == []
    assert count(TrackableAccessSession) == 0


# --- secret codes and QR tokens ----------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        pytest.param(SECRET, id="exact"),
        pytest.param("ln5v10ab01", id="lower-case"),
        pytest.param("LN5V1OABO1", id="O-for-0"),
        pytest.param("LN5VI0AB0I", id="I-for-1"),
        pytest.param("LN5VL0AB0l", id="L-for-1"),
        pytest.param("LNSV10AB01", id="S-for-5"),
        pytest.param("LN5U10AB01", id="U-for-V"),
        pytest.param("  LN5V10AB01\t", id="surrounding-space"),
        pytest.param("ln5u1oab0i", id="all-at-once"),
    ],
)
def test_system_secret_is_found_after_normalisation(api, trackable, typed):
    body = found(lookup(api, typed), trackable)
    assert body["isPublicCodeMatch"] is False
    assert body["usesSecretAccess"] is True
    assert body["redirectUrl"] == f"/en/trackables/active/{trackable.id}"


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_secret_lookup_never_returns_the_secret(api, trackable, method):
    response = lookup(api, SECRET.lower(), method)
    text = response.get_data(as_text=True)
    assert SECRET not in text.upper()
    assert SECRET.lower() not in text


@pytest.mark.parametrize("typed", [BYO, "falcon-nest_7", "FALCON-NEST_7", " Falcon-NEST_7 "])
def test_bring_your_own_secret_is_found_in_any_case(api, owner, typed):
    own = make_trackable(owner, secret_code=BYO)
    body = found(lookup(api, typed), own)
    assert body["usesSecretAccess"] is True


def test_bring_your_own_secret_has_no_look_alike_mapping(api, owner):
    make_trackable(owner, secret_code=BYO)
    missed(lookup(api, "Fa1con-Nest_7"))


def test_qr_token_is_found_exactly(api, trackable):
    _, token = codes_of(trackable)
    body = found(lookup(api, token), trackable)
    assert body["usesSecretAccess"] is True
    assert body["redirectUrl"] == f"/en/trackables/active/{trackable.id}"
    assert token not in lookup(api, token).get_data(as_text=True)


def test_qr_token_with_one_character_changed_is_a_miss(api, trackable):
    _, token = codes_of(trackable)
    changed = token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    missed(lookup(api, changed))


def test_qr_token_in_another_case_is_a_miss(api, owner):
    token = "aB" * 50
    make_trackable(owner, qr_token=token)
    missed(lookup(api, token.swapcase()))


def test_secret_of_an_unactivated_trackable_is_found(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    secret, _ = codes_of(fresh)
    assert found(lookup(api, secret), fresh)["usesSecretAccess"] is True


# --- misses ------------------------------------------------------------------------------


def test_unknown_code_is_a_miss_without_help(api, trackable):
    body = missed(lookup(api, "LN7777777Z"))
    assert body["helpUrl"] is None


def test_other_systems_code_is_a_miss_with_a_help_link(app, api, trackable):
    body = missed(lookup(api, "TB1A2B3C"))
    assert body["helpUrl"] == app.config["TRACKABLE_FOREIGN_HELP_URL"]


def test_sister_deployments_secret_is_a_miss_with_a_help_link(app, api, trackable):
    body = missed(lookup(api, "gt5v10ab01"))
    assert body["helpUrl"] == app.config["TRACKABLE_FOREIGN_HELP_URL"]


def test_public_code_of_a_trackable_visible_once_accessed_is_a_miss(api, owner):
    hidden = make_trackable(
        owner, public_code="LN-H1DDEN", visibility=TrackableVisibility.ONCE_ACCESSED
    )
    body = missed(lookup(api, hidden.public_code))
    assert body == missed(lookup(api, "LN-N0THER"))  # indistinguishable from unknown


NOT_ACTIVATED = (
    "This trackable has not been activated yet. Whoever holds its secret code can activate "
    "it: sign in and enter the secret code."
)


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_public_code_of_an_unactivated_trackable_says_so_and_nothing_else(api, owner, method):
    group = make_group(owner, name="Summer hunt", default_trackable_title="Hunt bug")
    fresh = make_trackable(
        None, created_by_user_id=owner.id, group_id=group.id, name="Still in the box"
    )
    response = lookup(api, fresh.public_code.lower(), method)  # a typed form of it
    assert missed(response) == {
        "found": False,
        "trackableId": None,
        "isPublicCodeMatch": False,
        "usesSecretAccess": False,
        "redirectUrl": None,
        "error": NOT_ACTIVATED,
        "helpUrl": None,
    }
    text = response.get_data(as_text=True)
    for told in ("Still in the box", "Summer hunt", "Hunt bug", "olga", str(fresh.id)):
        assert told not in text
    assert set_cookie_headers(response) == []


def test_an_unknown_code_still_says_nothing_matches(api, owner):
    make_trackable(None, created_by_user_id=owner.id, public_code="LN-N0TACT")
    assert missed(lookup(api, "LN-N0THER"))["error"] != NOT_ACTIVATED


def test_an_unactivated_trackables_creator_finds_it_by_its_public_code(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    found(lookup(api.as_user(owner), fresh.public_code), fresh)


def test_public_code_of_a_hidden_trackable_is_found_once_unlocked_on_this_client(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    secret, _ = codes_of(hidden)
    lookup(api, secret)
    assert found(lookup(api, hidden.public_code), hidden)["isPublicCodeMatch"] is True


def test_public_code_of_a_hidden_trackable_is_found_by_its_manager(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    found(lookup(api.as_user(owner), hidden.public_code), hidden)


def test_miss_sets_no_cookie(api, trackable):
    assert set_cookie_headers(lookup(api, "LN7777777Z")) == []


@pytest.mark.parametrize(
    ("method", "code"),
    [("POST", ""), ("POST", "   "), ("GET", ""), ("GET", " \t ")],
)
def test_empty_code_is_a_validation_problem(api, method, code):
    body = assert_problem(lookup(api, code, method), 400)
    assert "code" in body["errors"]


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_missing_code_is_a_validation_problem(api, method):
    response = api.post(LOOKUP, json={}) if method == "POST" else api.get(LOOKUP)
    assert "code" in assert_problem(response, 400)["errors"]


def test_invalid_bearer_token_is_401(api, trackable):
    assert_problem(lookup(api.with_token("not-a-token"), SECRET), 401)


# --- language of the redirect ------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "lang"),
    [
        (None, "en"),
        ("de-DE,de;q=0.9,en;q=0.5", "de"),
        ("fr-CH, fr;q=0.9, de-AT;q=0.8", "de"),
        ("fr", "en"),
        ("en-GB,de;q=0.5", "en"),
    ],
)
def test_redirect_url_is_in_the_best_accepted_site_language(api, trackable, accept, lang):
    headers = {"Accept-Language": accept} if accept else {}
    body = found(lookup(api, "LN-5V10A0", headers=headers), trackable)
    assert body["redirectUrl"] == f"/{lang}/trackables/LN-5V10A0"


# --- session cookie and account unlock ---------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_secret_lookup_sets_an_http_only_same_site_lax_cookie(api, trackable, method):
    (header,) = set_cookie_headers(lookup(api, SECRET, method))
    attributes = [part.strip().lower() for part in header.split(";")]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "path=/" in attributes
    assert "secure" not in attributes  # not production
    assert SECRET not in header.upper()


def test_qr_lookup_sets_the_cookie(api, trackable):
    _, token = codes_of(trackable)
    assert len(set_cookie_headers(lookup(api, token))) == 1


def test_secret_lookup_opens_one_session_for_the_client(api, trackable):
    lookup(api, SECRET)
    lookup(api, SECRET.lower())
    assert count(TrackableAccessSession, TrackableAccessSession.trackable_id == trackable.id) == 1


def test_lookup_answers_are_not_cached(api, trackable):
    assert lookup(api, SECRET, "GET").headers["Cache-Control"] == "no-store"
    assert lookup(api, "LN7777777Z", "GET").headers["Cache-Control"] == "no-store"


def test_signed_in_secret_lookup_stores_the_unlock_on_the_account(api, trackable):
    finder = make_user("finn")
    lookup(api.as_user(finder), SECRET)
    unlocks = db.session.scalars(select(TrackableUnlock)).all()
    assert [(u.user_id, u.trackable_id) for u in unlocks] == [(finder.id, trackable.id)]


def test_account_unlock_is_stored_once(api, trackable):
    finder = make_user("finn")
    lookup(api.as_user(finder), SECRET)
    lookup(api.as_user(finder), codes_of(trackable)[1])
    assert count(TrackableUnlock) == 1


def test_anonymous_secret_lookup_stores_no_account_unlock(api, trackable):
    lookup(api, SECRET)
    assert count(TrackableUnlock) == 0


def test_signed_in_public_lookup_stores_no_unlock(api, trackable):
    lookup(api.as_user(make_user("finn")), trackable.public_code)
    assert count(TrackableUnlock) == 0


# --- secrets stay out of the logs --------------------------------------------------------


def test_secret_lookups_leave_no_secret_in_the_logs(api, trackable, caplog):
    _, token = codes_of(trackable)
    with caplog.at_level(logging.DEBUG):
        lookup(api, SECRET)
        lookup(api, SECRET, "GET")
        lookup(api, token, "GET")
        lookup(api, "LN7777777Z", "GET")
    logged = caplog.text + "".join(str(record.args) for record in caplog.records)
    for secret in (SECRET, token, "LN7777777Z"):
        assert secret not in logged
