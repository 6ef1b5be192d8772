"""The mailed confirmation link opened in a browser: the API's confirmEmail sends it to the
website's page with the same query, which confirms and says what happened with a way on to
sign in, on a second click too; API clients keep the contract's text/plain answer."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.user import User
from tests.api.identity.helpers import confirm_link, last_mail_to, register
from tests.web.conftest import text_of

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def mailed_link(app, api) -> str:
    assert register(api, "lee@example.com", "lee").status_code == 200
    return confirm_link(last_mail_to(app, "lee@example.com"))


def open_in_browser(api, link: str, language: str = "en-GB"):
    headers = {**BROWSER, "Accept-Language": language}
    moved = api.get(link, headers=headers)
    assert moved.status_code == 303
    return moved.headers["Location"], api.get(moved.headers["Location"], headers=headers)


def confirmed() -> bool:
    db.session.expire_all()
    return db.session.scalar(db.select(User.is_email_confirmed).where(User.user_name == "lee"))


def test_a_browser_is_sent_to_the_page_which_confirms_and_leads_to_sign_in(app, api):
    link = mailed_link(app, api)
    where, page = open_in_browser(api, link)
    assert where.startswith("/en/confirm-email?userId=")
    assert where.split("?", 1)[1] == link.split("?", 1)[1]  # the same query, untouched
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    assert "Your e-mail address is confirmed" in text_of(page)
    assert 'href="/en/sign-in"' in page.get_data(as_text=True)
    assert confirmed()


def test_a_second_click_says_it_is_confirmed_already(app, api):
    link = mailed_link(app, api)
    open_in_browser(api, link)
    _where, again = open_in_browser(api, link)
    assert again.status_code == 200
    assert "confirmed already" in text_of(again)
    assert 'href="/en/sign-in"' in again.get_data(as_text=True)


@pytest.mark.parametrize(
    "query",
    ["userId=not-a-guid&code=x", "code=x", "", "userId=3f2c8a5e-4b7d-4c1e-9a2f-5d6e7f8a9b0c"],
)
def test_a_bad_link_is_a_page_with_a_way_on_never_a_500(api, query):
    response = api.get(f"/en/confirm-email?{query}", headers=BROWSER)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert "This link cannot confirm an address" in text_of(response)
    assert 'href="/en/sign-in"' in response.get_data(as_text=True)


def test_a_tampered_code_confirms_nothing(app, api):
    link = mailed_link(app, api)
    _where, page = open_in_browser(api, link.replace("code=", "code=x"))
    assert page.status_code == 400
    assert not confirmed()


def test_a_german_browser_gets_the_german_page(app, api):
    where, page = open_in_browser(api, mailed_link(app, api), "de-CH, en;q=0.5")
    assert where.startswith("/de/confirm-email?")
    assert "Deine E-Mail-Adresse ist bestätigt" in text_of(page)
    # The other language's link never repeats the one-time code: it leads to sign-in.
    body = page.get_data(as_text=True)
    assert '<a href="/en/sign-in" lang="en" hreflang="en">' in body
    assert "/en/confirm-email" not in body


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "text/plain"])
def test_api_clients_keep_the_plain_answer(app, api, accept):
    link = mailed_link(app, api)
    response = api.get(link, headers={"Accept": accept} if accept else {})
    assert response.status_code == 200
    assert response.get_data(as_text=True) == "Thank you for confirming your email."
