"""The finder's name for the visit (app.web.find): after a find, the next find's form
starts with the name it was written with, on any item, for as long as the browser
session lasts; an emptied name, "end session on this device", sign-in and sign-out
forget it, and another browser never sees it."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import TrackableComment, TrackableVisibility
from tests.conftest import ApiClient
from tests.factories import make_trackable
from tests.web.conftest import Finder, text_of
from tests.web.test_sign_in import sign_in

NAME_FIELD = re.compile(r'<input[^>]*name="displayName"[^>]*>')


def name_in_form(response: Any) -> str | None:
    """The value the name field starts with, as a browser would send it (None: empty)."""
    field = NAME_FIELD.search(text_of(response))
    assert field is not None, text_of(response)
    value = re.search(r'value="([^"]*)"', field.group(0))
    if value is None:
        return None
    return html.unescape(value.group(1)) or None


def post_as_the_page_fills_it(finder: Finder, body: str) -> Any:
    """A find sent with the name field as the page filled it in, untouched."""
    name = name_in_form(finder.api.get(finder.landing))
    return finder.post("find", {"body": body, "displayName": name or ""})


def authors() -> list[str | None]:
    comments = db.session.scalars(select(TrackableComment).order_by(TrackableComment.created_utc))
    return [comment.author_display_name for comment in comments]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_second_find_of_a_visit_carries_the_first_finds_name(api, trackable, lang):
    finder = Finder(api, trackable, lang=lang)
    finder.scan()
    assert name_in_form(api.get(finder.landing)) is None
    assert finder.post("find", {"body": "First", "displayName": "Kim"}).status_code == 303
    assert name_in_form(api.get(finder.landing)) == "Kim"
    assert post_as_the_page_fills_it(finder, "Second").status_code == 303
    assert authors() == ["Kim", "Kim"]


def test_the_name_goes_with_the_visit_to_another_item(api, trackable, owner):
    other = make_trackable(owner, visibility=TrackableVisibility.ALWAYS_VISIBLE)
    first, second = Finder(api, trackable), Finder(api, other)
    first.scan()
    second.scan()
    first.post("find", {"body": "Here", "displayName": "Kim & Co <3"})
    assert name_in_form(api.get(second.landing)) == "Kim & Co <3"  # escaped in the page
    assert "Kim & Co <3" not in text_of(api.get(second.landing))


def test_a_changed_name_is_the_one_kept(api, finder):
    finder.post("find", {"body": "One", "displayName": "Kim"})
    finder.post("find", {"body": "Two", "displayName": "Kim K."})
    assert name_in_form(finder.api.get(finder.landing)) == "Kim K."


def test_an_emptied_name_field_forgets_the_name(api, finder):
    finder.post("find", {"body": "One", "displayName": "Kim"})
    finder.post("find", {"body": "Two", "displayName": ""})
    assert name_in_form(api.get(finder.landing)) is None
    assert authors() == ["Kim", "Anonymous finder"]


def test_a_refused_find_keeps_no_name(api, finder):
    response = finder.post("find", {"body": "", "displayName": "Kim"})  # nothing to post
    assert response.status_code == 400
    assert name_in_form(response) == "Kim"  # what was typed, shown again
    assert name_in_form(api.get(finder.landing)) is None


def test_ending_the_session_on_this_device_forgets_the_name(api, trackable, owner):
    other = make_trackable(owner, visibility=TrackableVisibility.ALWAYS_VISIBLE)
    first, second = Finder(api, trackable), Finder(api, other)
    first.scan()
    second.scan()
    first.post("find", {"body": "Here", "displayName": "Kim"})
    assert first.post("end", {}).status_code == 200
    assert name_in_form(api.get(second.landing)) is None


def test_signing_in_and_out_forgets_the_name(api, finder, owner):
    finder.post("find", {"body": "Here", "displayName": "Kim"})
    assert sign_in(api, owner).status_code == 303
    token = re.search(r'name="csrf_token" value="([^"]+)"', text_of(api.get("/en/")))
    assert token is not None
    assert api.post("/en/sign-out", data={"csrf_token": token.group(1)}).status_code == 303
    assert name_in_form(api.get(finder.landing)) is None


def test_another_browser_never_gets_the_name(app, api, finder):
    finder.post("find", {"body": "Here", "displayName": "Kim"})
    other_browser = Finder(ApiClient(app.test_client()), finder.trackable)
    other_browser.scan()
    assert name_in_form(other_browser.api.get(other_browser.landing)) is None


def test_the_name_lasts_no_longer_than_the_browser_session(api, finder):
    response = finder.post("find", {"body": "Here", "displayName": "Kim"})
    (cookie,) = [
        value for value in response.headers.getlist("Set-Cookie") if value.startswith("ln_pages=")
    ]
    assert "Expires=" not in cookie
    assert "Max-Age=" not in cookie
