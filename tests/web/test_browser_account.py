"""The account page in a real headless Chromium, at a phone's and a desktop's size, in
English and German: signed in through the page, it lists this browser (marked) and the
app, fits the width, passes axe-core with no violation at all, signs the app out and then
everywhere (tests.web.browser, tests.web.accessibility)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import DEFAULT_PASSWORD, login, make_user
from tests.web.accessibility import axe_violations, describe
from tests.web.browser import DESKTOP, PHONE, open_browser

VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}

# Seconds of Chromium each: CI runs them on both databases; `make test` skips them.
pytestmark = pytest.mark.browser_ci


def no_violations(page: Any, where: str) -> None:
    found = axe_violations(page)
    assert found == [], f"axe-core on {where}:\n{describe(found)}"


def fits_the_width(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_account_page_in_both_languages_passes_axe_core(api, live_server, browser, viewport):
    ada = make_user("ada_walks", display_name="Ada W.")
    login(api, ada)  # the app, signed in on a phone
    context = open_browser(browser, viewport=VIEWPORTS[viewport], locale="en-GB")
    context.set_default_timeout(15_000)
    problems: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(f"{live_server}/en/account")
        assert "/en/sign-in" in page.url  # to sign-in first, and back
        page.fill("#email", ada.email)
        page.fill("#password", DEFAULT_PASSWORD)
        page.click("form.card button[type=submit]")
        page.wait_for_url(f"{live_server}/en/account")
        assert page.locator("h1").inner_text() == "Your account"
        assert page.locator(".session .badge").inner_text() == "This browser"
        assert page.locator("ul.sessions").nth(1).locator("li").count() == 1  # the app
        assert fits_the_width(page)
        no_violations(page, f"the account page ({viewport}, en)")

        page.click("nav.languages >> text=DE")
        page.wait_for_url(f"{live_server}/de/account")
        assert page.locator("h1").inner_text() == "Dein Konto"
        assert page.locator(".session .badge").inner_text() == "Dieser Browser"
        assert fits_the_width(page)
        no_violations(page, f"the account page ({viewport}, de)")

        page.locator("ul.sessions").nth(1).locator("button").click()  # the app signs out
        page.wait_for_url(f"{live_server}/de/account")
        assert page.locator("p.notice").inner_text() == "Die App auf dem Gerät ist abgemeldet."
        assert page.locator("ul.sessions").count() == 1
        no_violations(page, f"the account page after a sign-out ({viewport}, de)")

        page.locator("button", has_text="Überall abmelden").click()
        page.wait_for_url(f"{live_server}/de/sign-in?next=/de/account")
        assert page.locator("p.notice").inner_text().startswith("Du bist überall abgemeldet")
        no_violations(page, f"sign-in after signing out everywhere ({viewport}, de)")
    finally:
        context.close()
    assert problems == []
