"""The ways in without a QR code: `/` and the home page per
language with the code box, the public list, `GET /trackable`, the code box on public
pages, the code box's CSRF token, and every error on a website path as an HTML page in
the page's language (never JSON), while the API keeps problem details."""

from __future__ import annotations

import re

import pytest

from app.models.trackable import TrackableVisibility
from tests.factories import codes_of, count_guess_misses, make_group, make_trackable
from tests.pages import csrf_token, post_code
from tests.web.conftest import text_of

FORM_ACTIONS = re.compile(r'<form[^>]*action="([^"]*)"')


def actions(response) -> list[str]:
    return FORM_ACTIONS.findall(text_of(response))


def assert_page(response, status: int, lang: str = "en") -> str:
    assert response.status_code == status, text_of(response)
    assert response.mimetype == "text/html"
    text = text_of(response)
    assert f'<html lang="{lang}">' in text
    assert "/static/pages/pages.css" in text  # styled like every page
    return text


@pytest.mark.parametrize(
    ("accept", "lang"), [("de-CH,de;q=0.9", "de"), ("fr, en", "en"), ("", "en")]
)
def test_the_root_sends_the_browser_to_its_languages_home_page(api, accept, lang):
    response = api.get("/", headers={"Accept-Language": accept} if accept else {})
    assert response.status_code == 302
    assert response.headers["Location"] == f"/{lang}/"
    assert "Accept-Language" in response.headers["Vary"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_home_page_says_what_this_is_and_has_the_code_box(api, lang):
    text = assert_page(api.get(f"/{lang}/"), 200, lang)
    assert actions(api.get(f"/{lang}/")) == ["/trackable"]
    assert 'name="csrf_token"' in text
    assert f'href="/{lang}/trackables"' in text  # the public list
    assert ("Follow an item" if lang == "en" else "Folge einem Trackable") in text


def test_a_language_the_site_does_not_have_is_an_html_404(api):
    assert_page(api.get("/fr/"), 404)


def test_the_public_list_links_public_items_only(api, owner, trackable):
    hidden = make_trackable(owner, name="Secret bug", visibility=TrackableVisibility.ONCE_ACCESSED)
    text = assert_page(api.get("/de/trackables"), 200, "de")
    assert f'href="/de/trackables/{trackable.public_code}"' in text
    assert hidden.public_code not in text
    assert "Secret bug" not in text
    for code in codes_of(trackable):
        assert code not in text


def test_the_public_list_says_so_when_nothing_travels(api):
    assert "No item travels in public yet." in assert_page(api.get("/en/trackables"), 200)


def test_get_trackable_is_the_code_box_not_a_405(api):
    response = api.get("/trackable", headers={"Accept-Language": "de"})
    assert_page(response, 200, "de")
    assert actions(response) == ["/trackable"]
    assert response.headers["Cache-Control"] == "no-store"


def test_the_public_page_has_the_code_box(api, trackable):
    response = api.get(f"/en/trackables/{trackable.public_code}")
    assert "/trackable" in actions(response)


def test_the_code_box_without_its_token_looks_nothing_up(api, trackable):
    secret = codes_of(trackable)[0]
    response = api.post("/trackable", data={"code": secret})
    text = assert_page(response, 400)
    assert "expired" in text
    assert secret not in text
    assert not response.headers.getlist("Set-Cookie") or all(
        not value.startswith("ln_trackable_access")
        for value in response.headers.getlist("Set-Cookie")
    )
    assert count_guess_misses() == 0


def test_a_token_from_another_browser_is_refused(app, api, trackable):
    token = csrf_token(api)
    other = app.test_client()
    response = other.post("/trackable", data={"code": codes_of(trackable)[0], "csrf_token": token})
    assert response.status_code == 400


def test_a_code_longer_than_any_is_refused_without_counting_a_miss(api, trackable):
    token = csrf_token(api)
    response = api.post("/trackable", data={"code": "A" * 201, "csrf_token": token})
    text = assert_page(response, 400)
    assert "A" * 201 not in text
    assert count_guess_misses() == 0


def test_the_miss_page_is_translated_and_says_it_once(api, trackable):
    response = api.get("/trackable/LN77777777", headers={"Accept-Language": "de"})
    text = assert_page(response, 404, "de")
    assert "Zu diesem Code gibt es keinen Trackable" in text
    assert text.count("Prüfe ihn") == 1


NOT_ACTIVATED = {
    "en": (
        "Not activated yet",
        "This trackable has not been activated yet. Whoever holds its secret code can "
        "activate it: sign in and enter the secret code.",
    ),
    "de": (
        "Noch nicht aktiviert",
        "Dieser Trackable ist noch nicht aktiviert. Wer seinen geheimen Code hat, kann ihn "
        "aktivieren: Melde dich an und gib den geheimen Code ein.",
    ),
}


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("how", ["visit", "code box"])
def test_the_public_code_of_an_unactivated_item_says_it_is_not_activated_yet(api, owner, lang, how):
    group = make_group(owner, name="Summer hunt", default_trackable_title="Hunt bug")
    fresh = make_trackable(None, created_by_user_id=owner.id, group_id=group.id, name="Boxed")
    language = {"Accept-Language": lang}
    if how == "visit":
        response = api.get(f"/trackable/{fresh.public_code}", headers=language)
    else:
        response = post_code(api, fresh.public_code, headers=language)
    text = assert_page(response, 404, lang)
    heading, message = NOT_ACTIVATED[lang]
    assert f"<h1>{heading}</h1>" in text
    assert text.count(message) == 1
    for told in ("Boxed", "Summer hunt", "Hunt bug", "Olga", "olga", fresh.public_code):
        assert told not in text.split("<main", 1)[1]
    assert count_guess_misses() == 1


def test_an_unknown_code_is_still_not_found(api, owner):
    make_trackable(None, created_by_user_id=owner.id, public_code="LN-N0TACT")
    text = assert_page(api.get("/trackable/LN-N0THER"), 404)
    assert "<h1>Trackable not found</h1>" in text
    assert NOT_ACTIVATED["en"][1] not in text


def test_the_public_page_of_an_unactivated_item_stays_the_plain_404(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    text = assert_page(api.get(f"/en/trackables/{fresh.public_code}"), 404)
    assert NOT_ACTIVATED["en"][0] not in text
    assert count_guess_misses() == 0


# --- errors on website paths ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("/en/zqxv/here", "en"),
        ("/de/trackables/LN-ZZZZZZ/zqxv", "de"),
        ("/help/zqxv", "en"),
        ("/static/pages/zqxv.css", "en"),
        ("/trackable/LN-ABC/zqxv", "en"),
    ],
)
def test_a_website_404_is_an_html_page_that_does_not_echo_the_address(api, path, lang):
    text = assert_page(api.get(path), 404, lang)
    assert "zqxv" not in text.split("<main", 1)[1]


def test_a_wrong_method_on_a_website_path_is_an_html_405_with_allow(api):
    response = api.delete("/trackable", headers={"Accept-Language": "de"})
    assert_page(response, 405, "de")
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


def test_a_failure_on_a_website_path_is_an_html_500_with_its_ticket(api, monkeypatch):
    from app.services import trackables

    def broken(*_args, **_kwargs):
        raise RuntimeError("the list broke")

    monkeypatch.setattr(trackables, "public_trackables", broken)
    text = assert_page(api.get("/en/trackables"), 500)
    assert re.search(r'<span class="code">[A-Z0-9-]{6,}</span>', text)
    assert "the list broke" not in text


def test_the_api_keeps_problem_details(api):
    response = api.get("/api/nothing-here")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    assert api.get("/nothing-here").mimetype == "application/problem+json"


def test_the_guess_budget_page_says_whose_budget_and_the_way_out_in_german(api, app):
    limit = app.config["SECRET_GUESS_LIMIT"]
    german = {"Accept-Language": "de"}
    for number in range(limit):
        assert api.get(f"/trackable/LN7777{number:04d}", headers=german).status_code == 404
    response = api.get("/trackable/LN77779999", headers=german)
    text = assert_page(response, 429, "de")
    assert "Von deiner Adresse wurden in den letzten" in text
    assert "hättest du ein eigenes Kontingent" in text
    assert int(response.headers["Retry-After"]) > 0
