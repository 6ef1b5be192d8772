"""The language switch in every page's bar (app.web.i18n, other_language_url): each page
links itself in the other language, the link opens that page in that language, and no
404 or miss page repeats its address (it may hold a typed code)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.models.trackable import TrackableVisibility
from tests.factories import make_trackable, make_user
from tests.pages import csrf_token, post_code
from tests.web.conftest import Finder, text_of

LINK = re.compile(r'<a href="([^"]+)" lang="(\w+)" hreflang="\w+">')
OTHER = {"en": "de", "de": "en"}


def languages_nav(response: Any) -> str:
    page = text_of(response)
    start = page.index('<nav class="languages"')
    return page[start : page.index("</nav>", start)]


def other_language_link(response: Any) -> tuple[str, str]:
    """The bar's one link to another language: (its address, its language)."""
    (link,) = LINK.findall(languages_nav(response))
    return link[0].replace("&amp;", "&"), link[1]


def page_language(response: Any) -> str:
    found = re.search(r'<html lang="(\w+)">', text_of(response))
    assert found is not None
    return found.group(1)


def assert_switches(api: Any, response: Any, lang: str, expected: str, status: int = 200) -> Any:
    """The page is in `lang`, links `expected` in the other language, and that link opens
    a page in the other language (with `status`)."""
    assert page_language(response) == lang
    href, other = other_language_link(response)
    assert (href, other) == (expected, OTHER[lang])
    assert f'<strong lang="{lang}">{lang.upper()}</strong>' in languages_nav(response)
    opened = api.get(href)
    assert opened.status_code == status, text_of(opened)
    assert page_language(opened) == other
    return opened


@pytest.fixture
def public_item(app):
    return make_trackable(
        make_user("olga"), name="Blue bug", visibility=TrackableVisibility.ALWAYS_VISIBLE
    )


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/trackables",
        "/sign-in",
        "/help/foreign-codes",
        "/help/external-links",
        "/beta/android",
    ],
)
def test_a_page_links_the_same_address_in_the_other_language(api, lang, path):
    response = api.get(f"/{lang}{path}")
    assert response.status_code == 200
    assert_switches(api, response, lang, f"/{OTHER[lang]}{path}")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_public_page_links_itself_in_the_other_language(api, public_item, lang):
    path = f"/trackables/{public_item.public_code}"
    response = api.get(f"/{lang}{path}")
    opened = assert_switches(api, response, lang, f"/{OTHER[lang]}{path}")
    assert "Blue bug" in text_of(opened)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_active_landing_links_itself_and_a_refused_find_links_the_landing(
    api, public_item, lang
):
    finder = Finder(api, public_item, lang=lang)
    finder.scan()
    other_landing = f"/{OTHER[lang]}/trackables/active/{public_item.id}"
    assert_switches(api, api.get(finder.landing), lang, other_landing)
    refused = finder.post("find", {"latitude": "north"})
    assert refused.status_code == 400
    assert_switches(api, refused, lang, other_landing)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_session_ended_links_the_items_public_page_in_the_other_language(api, public_item, lang):
    finder = Finder(api, public_item, lang=lang)
    finder.scan()
    ended = finder.post("end", {})
    assert ended.status_code == 200
    assert_switches(api, ended, lang, f"/{OTHER[lang]}/trackables/{public_item.public_code}")


def test_session_ended_on_a_hidden_item_links_the_home_page(api):
    hidden = make_trackable(make_user("olga"), visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = Finder(api, hidden)
    finder.scan()
    ended = finder.post("end", {})
    assert_switches(api, ended, "en", "/de/")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_sign_in_keeps_next_in_the_other_language_also_when_refused(api, lang):
    response = api.get(f"/{lang}/sign-in?next=/{lang}/trackables")
    assert_switches(api, response, lang, f"/{OTHER[lang]}/sign-in?next=/{lang}/trackables")
    data = {
        "csrf_token": csrf_token(api, f"/{lang}/sign-in"),
        "email": "nobody@example.com",
        "password": "not the password",
        "next": f"/{lang}/trackables",
    }
    refused = api.post(f"/{lang}/sign-in", data=data)
    assert refused.status_code == 401
    assert_switches(api, refused, lang, f"/{OTHER[lang]}/sign-in?next=/{lang}/trackables")


def test_a_query_never_sets_the_links_own_options(api):
    response = api.get("/en/trackables?_external=1&_scheme=javascript&lang=fr&page=2")
    assert response.status_code == 200
    assert other_language_link(response) == ("/de/trackables?page=2", "de")


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize(
    "path",
    [
        "/trackables/LN-SECRET99",  # no such trackable: the "trackable not found" page
        "/trackables/LN-SECRET99/zqxv",  # no such address: the error page's 404
        "/trackables/active/00000000-0000-0000-0000-000000000000",
    ],
)
def test_a_404_page_links_the_404_page_in_the_other_language_not_its_address(api, lang, path):
    response = api.get(f"/{lang}{path}")
    assert response.status_code == 404
    assert "SECRET99" not in text_of(response)
    opened = assert_switches(api, response, lang, f"/{OTHER[lang]}/not-found", status=404)
    assert_switches(api, opened, OTHER[lang], f"/{lang}/not-found", status=404)


def test_a_language_the_site_lacks_is_the_404_page_with_its_links(api):
    response = api.get("/fr/trackables", headers={"Accept-Language": "de"})
    assert response.status_code == 404
    assert_switches(api, response, "de", "/en/not-found", status=404)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_entry_routes_link_the_home_page_and_never_the_typed_code(api, lang):
    headers = {"Accept-Language": lang}
    box = api.get("/trackable", headers=headers)
    assert_switches(api, box, lang, f"/{OTHER[lang]}/")
    miss = api.get("/trackable/NOPE2345", headers=headers)
    assert miss.status_code == 404
    assert "NOPE2345" not in text_of(miss)
    assert_switches(api, miss, lang, f"/{OTHER[lang]}/")
    typed = post_code(api, "NOPE2346", headers=headers)
    assert typed.status_code == 404
    assert_switches(api, typed, lang, f"/{OTHER[lang]}/")


def test_an_address_without_a_language_links_its_page_in_the_other_language(api):
    response = api.get("/help/foreign-codes", headers={"Accept-Language": "de"})
    assert_switches(api, response, "de", "/en/help/foreign-codes")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_error_page_other_than_404_links_the_home_page(api, public_item, lang):
    response = api.get(f"/{lang}/trackables/active/{public_item.id}/find")  # POST only
    assert response.status_code == 405
    assert_switches(api, response, lang, f"/{OTHER[lang]}/")
