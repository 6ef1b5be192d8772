"""The notification settings page and the unsubscribe page in headless Chromium, in English
and German, at a phone's (390x844) and a desktop's (1280x900) viewport: axe-core finds no
violation of any impact, before and after each form is used (a setting saved, a watch
ended, mail stopped by the unsubscribe page's button)."""

from __future__ import annotations

from typing import Any

import pytest

from app.services.events import unsubscribe_token
from tests.factories import DEFAULT_PASSWORD
from tests.inboxes import World, around
from tests.web.accessibility import axe_violations, describe
from tests.web.browser import DESKTOP, PHONE, open_browser

VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
# Each language and each viewport once, in two runs (a language changes only the words).
RUNS = [("phone", "de"), ("desktop", "en")]

# Seconds of Chromium each: CI runs them on both databases; `make test` skips them.
pytestmark = pytest.mark.browser_ci


def no_violations(page: Any, where: str) -> None:
    found = axe_violations(page)
    assert found == [], f"axe-core on {where} ({page.url}):\n{describe(found)}"


@pytest.mark.parametrize(("viewport", "lang"), RUNS, ids=[f"{v}-{lang}" for v, lang in RUNS])
def test_the_settings_and_unsubscribe_pages_pass_axe_core(
    app, api, live_server, browser, world: World, viewport, lang
):
    watcher = world.item_watcher
    around(api, watcher)
    token = unsubscribe_token(watcher.id, app.config)
    context = open_browser(browser, viewport=VIEWPORTS[viewport])
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(f"{live_server}/{lang}/sign-in")
        page.fill("#email", watcher.email)
        page.fill("#password", DEFAULT_PASSWORD)
        page.click("form.card button[type=submit]")
        page.goto(f"{live_server}/{lang}/account/notifications")
        no_violations(page, "the settings page")
        page.check("input[name=mail][value=each]")
        page.select_option("#mail-language", "de")
        page.click("#mail button[type=submit]")
        page.locator("p.notice").wait_for()
        assert page.locator("input[name=mail][value=each]").is_checked()
        no_violations(page, "the settings page, saved")
        page.click("#watches button")
        page.locator("p.notice").wait_for()
        assert page.locator("#watches li").count() == 0
        no_violations(page, "the settings page, a watch ended")
        page.goto(f"{live_server}/{lang}/account/notifications/unsubscribe/{token}")
        no_violations(page, "the unsubscribe page")
        page.click("main form button")
        page.locator("p.notice").wait_for()
        no_violations(page, "the unsubscribe page, mail stopped")
    finally:
        context.close()
    assert api.as_user(watcher).get("/api/notifications/settings").get_json()["mail"] == "none"
