"""The pages' headers and secrets (app/platform/headers.py; contract: website routes): every page
carries the security headers and a CSP that lets only our own files run; no secret code
or QR token is ever in a page, whatever the flow."""

from __future__ import annotations

import re

import pytest

from tests.factories import codes_of, make_trackable, make_user
from tests.web.conftest import Finder, form_fields, text_of


def every_page(api, finder: Finder) -> list:
    """One response of each kind of page, in both languages, with a stop and a comment."""
    responses = [finder.scan()]
    finder.post("find", {"body": "Hi", "latitude": "47.37", "longitude": "8.54"})
    for lang in ("en", "de"):
        localized = Finder(api, finder.trackable, lang=lang)
        responses += [
            api.get(localized.public),
            api.get(localized.landing),
            localized.post("find", {"body": ""}),
            localized.post("find", {"latitude": "x", "longitude": "y"}),
            api.post(f"{localized.landing}/find", data={"body": "no token"}),
            api.get(f"/{lang}/trackables/LN-ZZZZZZ"),
        ]
    responses.append(finder.post("end", {}))
    return responses


def test_no_page_ever_shows_a_secret_code_or_qr_token(api, finder):
    secret, token = codes_of(finder.trackable)
    for response in every_page(api, finder):
        page = text_of(response)
        assert secret not in page
        assert secret.lower() not in page.lower()
        assert token not in page


def test_every_page_carries_the_security_headers(api, finder):
    for response in every_page(api, finder):
        if response.mimetype != "text/html":
            continue
        headers = response.headers
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "no-referrer"
        policy = headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy
        assert "script-src 'self'" in policy
        assert "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy


def test_pages_use_no_inline_script_or_style(api, finder):
    for response in every_page(api, finder):
        page = text_of(response)
        assert not re.search(r"<script(?![^>]*\bsrc=)", page)
        assert "<style" not in page
        assert " style=" not in page
        assert not re.search(r"\son[a-z]+=", page)  # no inline event handlers


def test_pages_with_forms_or_a_session_are_never_cached(api, finder):
    assert api.get(finder.landing).headers["Cache-Control"] == "no-store"
    assert api.get("/en/trackables/LN-ZZZZZZ").headers["Cache-Control"] == "no-store"
    assert "no-cache" in api.get(finder.public).headers["Cache-Control"]


@pytest.mark.parametrize(
    ("name", "mimetype"), [("pages.css", "text/css"), ("pages.js", "text/javascript")]
)
def test_the_style_sheet_and_script_are_served_from_our_origin(api, name, mimetype):
    response = api.get(f"/static/pages/{name}")
    assert response.status_code == 200
    assert response.mimetype == mimetype


def test_a_signed_in_stranger_sees_no_form_and_no_secret(api, owner):
    trackable = make_trackable(owner)
    stranger = api.as_user(make_user("sam"))
    page = text_of(stranger.get(f"/en/trackables/{trackable.public_code}"))
    assert re.findall(r'<form[^>]*action="([^"]*)"', page) == ["/trackable"]  # the code box only
    for code in codes_of(trackable):
        assert code not in page
    assert stranger.get(f"/en/trackables/active/{trackable.id}").status_code == 404


def test_the_csrf_token_is_bound_to_this_browser(api, app, finder):
    token = form_fields(api.get(finder.landing))["csrf_token"]
    other = app.test_client()
    response = other.post(f"{finder.landing}/end", data={"csrf_token": token})
    assert response.status_code == 400
