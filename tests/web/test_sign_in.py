"""Sign-in on the website: the API's accounts and rules (lockout,
two-factor, unconfirmed addresses), a session cookie of the pages only (never the API),
CSRF on the forms, back to where the visitor was, activation on the page, and sign-out
ending the session."""

from __future__ import annotations

import re

import pytest

from app.extensions import db
from app.models.identity import RefreshToken
from app.models.trackable import Trackable
from tests.api.identity.helpers import totp
from tests.factories import DEFAULT_PASSWORD, count_rows, make_trackable, make_user
from tests.pages import csrf_token
from tests.web.conftest import Finder, errors_of, text_of

SIGN_IN = "/en/sign-in"


def sign_in(api, user, *, password: str = DEFAULT_PASSWORD, **fields: str):
    token = csrf_token(api, SIGN_IN)
    data = {"csrf_token": token, "email": user.email, "password": password, **fields}
    return api.post(SIGN_IN, data=data)


def test_the_form_signs_in_and_the_pages_know_the_account(api):
    kim = make_user("kim")
    response = sign_in(api, kim)
    assert response.status_code == 303
    assert response.headers["Location"] == "/en/"
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("ln_pages="))
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    page = text_of(api.get("/en/"))
    assert "kim" in page
    assert 'action="/en/sign-out"' in page
    assert count_rows(RefreshToken) == 0  # the website's session is its cookie


def test_the_session_never_counts_on_the_api(api):
    sign_in(api, make_user("kim"))
    response = api.get("/api/auth/manage/info")
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("password", "words"), [("wrong-password-1", "not right"), ("", "Enter your password")]
)
def test_a_wrong_or_missing_password_is_said_in_words(api, password, words):
    kim = make_user("kim")
    response = sign_in(api, kim, password=password)
    assert response.status_code in (400, 401)
    assert any(words in error for error in errors_of(response))
    assert password not in text_of(response).replace('value=""', "") or not password
    assert "kim" not in text_of(api.get("/en/"))


def test_five_failures_lock_the_email_as_the_api_does(api):
    kim = make_user("kim")
    for _ in range(5):
        sign_in(api, kim, password="wrong-password-1")
    response = sign_in(api, kim)  # the right password, while locked out
    assert response.status_code == 401
    assert any("Too many failed sign-ins" in error for error in errors_of(response))


def test_an_unconfirmed_address_is_told_to_confirm(app, api, monkeypatch):
    monkeypatch.setitem(app.config, "REQUIRE_CONFIRMED_EMAIL", True)
    kim = make_user("kim", is_email_confirmed=False)
    response = sign_in(api, kim)
    assert response.status_code == 401
    assert any("Confirm your email address" in error for error in errors_of(response))


def test_two_factor_asks_for_the_code_then_signs_in(api):
    kim = make_user("kim")
    key = api.as_user(kim).post("/api/auth/manage/2fa", json={}).get_json()["sharedKey"]
    enabled = api.as_user(kim).post(
        "/api/auth/manage/2fa", json={"enable": True, "twoFactorCode": totp(key)}
    )
    assert enabled.status_code == 200
    first = sign_in(api, kim)
    assert first.status_code == 401
    assert 'name="code"' in text_of(first)
    assert DEFAULT_PASSWORD not in text_of(first)
    second = sign_in(api, kim, code=totp(key, steps_ahead=1))
    assert second.status_code == 303


def test_without_a_token_nothing_happens(api):
    kim = make_user("kim")
    response = api.post(SIGN_IN, data={"email": kim.email, "password": DEFAULT_PASSWORD})
    assert response.status_code == 400
    assert "kim" not in text_of(api.get("/en/"))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/de/trackables", "/de/trackables"),
        ("https://evil.example/", "/en/"),
        ("//evil.example/", "/en/"),
        ("/\\evil.example", "/en/"),
        # As a browser reads them: tabs and newlines dropped, controls and spaces trimmed.
        ("/\t/evil.example", "/en/"),
        ("/\n/x", "/en/"),
        ("/\r\n/evil.example", "/en/"),
        (" //evil.example/", "/en/"),
        ("\\\\evil.example", "/en/"),
        ("\t/de/trackables ", "/de/trackables"),
        ("/de/\ttrack\nables", "/de/trackables"),
        ("/de/track\x00ables", "/en/"),
        ("/de/track\x7fables", "/en/"),
        ("java\tscript:alert(1)", "/en/"),
        ("/de/trackables?page=2#top", "/de/trackables?page=2#top"),
    ],
)
def test_next_goes_back_on_this_site_only(api, target, expected):
    kim = make_user("kim")
    token = csrf_token(api, SIGN_IN)
    response = api.post(
        SIGN_IN,
        data={
            "csrf_token": token,
            "email": kim.email,
            "password": DEFAULT_PASSWORD,
            "next": target,
        },
    )
    assert response.headers["Location"] == expected


@pytest.mark.parametrize("encoded", ["/%09/evil.example", "/%0a/x", "/%0d%0a/evil.example"])
def test_next_in_the_address_is_judged_as_a_browser_reads_it(api, encoded):
    """The sign-in page's own address carries `next`, percent-encoded: decoded, a tab or
    newline in it makes `//host` for a browser; it goes home, never elsewhere, never a 500."""
    kim = make_user("kim")
    page = f"{SIGN_IN}?next={encoded}"
    token = csrf_token(api, page)
    response = api.post(
        page, data={"csrf_token": token, "email": kim.email, "password": DEFAULT_PASSWORD}
    )
    assert response.status_code == 303
    assert response.headers["Location"] == "/en/"


def test_sign_out_ends_the_session(api):
    kim = make_user("kim")
    sign_in(api, kim)
    token = csrf_token(api, "/en/")
    response = api.post("/en/sign-out", data={"csrf_token": token})
    assert response.status_code == 303
    assert "kim" not in text_of(api.get("/en/"))


def test_a_new_password_stamp_ends_the_session(api):
    kim = make_user("kim")
    sign_in(api, kim)
    kim.security_stamp = "changed"
    db.session.commit()
    assert 'action="/en/sign-out"' not in text_of(api.get("/en/"))


def test_a_signed_in_finder_activates_on_the_page(api):
    item = make_trackable(None, created_by_user_id=make_user("olga").id)
    finder = Finder(api, item)
    finder.scan()
    landing = text_of(api.get(finder.landing))
    link = re.search(r'href="(/en/sign-in\?next=[^"]+)"', landing)
    assert link is not None
    kim = make_user("kim")
    token = csrf_token(api, link.group(1))
    response = api.post(
        link.group(1),
        data={"csrf_token": token, "email": kim.email, "password": DEFAULT_PASSWORD},
    )
    assert response.headers["Location"] == finder.landing
    page = text_of(api.get(finder.landing))
    assert 'name="context"' in page  # the activation form, now that the page knows kim
    activated = finder.post("activate", {"name": "Kim's compass", "context": "personal"})
    assert activated.status_code == 303
    db.session.expire_all()
    assert db.session.get(Trackable, item.id).owner_user_id == kim.id


def test_a_signed_in_finders_comment_carries_their_name(api, owner, trackable):
    finder = Finder(api, trackable)
    finder.scan()
    sign_in(api, make_user("kim", display_name="Kim K."))
    assert 'name="displayName"' not in text_of(api.get(finder.landing))  # no name to type
    assert finder.post("find", {"body": "Signed and found"}).status_code == 303
    public = text_of(api.get(finder.public))
    entry = re.search(r"Signed and found</p>\s*<small>([^<·]*)·", public)
    assert entry is not None, public
    assert entry.group(1).strip() == "Kim K."  # the account's name, not "Anonymous finder"


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", "Register in the Location Notes app"), ("de", "Registriere dich in der App")],
)
def test_the_sign_in_page_says_where_to_register_and_reset_a_password(api, lang, words):
    page = text_of(api.get(f"/{lang}/sign-in"))
    assert words in page
    assert ("resets it" if lang == "en" else "setzt es zurück") in page
