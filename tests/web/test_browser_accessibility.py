"""Every website page checked with axe-core in a real headless Chromium.

At a phone's and a desktop's viewport, with and without JavaScript, in each language: every
pair of the three settings is checked (each language at each viewport and in each scripting
mode), in four runs rather than eight, since a language changes only the words. A serious
or critical violation fails, naming the page, rule and elements (tests.web.accessibility).
The finder's flows of test_browser.py run the same check on the pages they pass through.
The matrix runs once per CI run, on SQLite: with TEST_DATABASE_URL (the PostgreSQL pass) it
skips, saying so, to keep `.ci/run` within its time (the pages' database work is the same on
both; the flows of test_browser.py run on both).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from app.models.trackable import TrackableVisibility
from tests.factories import DEFAULT_PASSWORD, codes_of, make_trackable, make_user
from tests.web.accessibility import check_accessibility
from tests.web.browser import DESKTOP, PHONE, open_browser

VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("TEST_DATABASE_URL")),
    reason="the accessibility matrix runs once per CI run, on SQLite",
)
# (viewport, scripting, language): all pairs of the three settings in four runs.
PAIRWISE = [
    ("phone", True, "de"),
    ("phone", False, "en"),
    ("desktop", True, "en"),
    ("desktop", False, "de"),
]


Check = Callable[[str], None]  # checks the page as it stands, naming it


# The pages: home, the public list, a trackable's public page (stops, comments, map), the
# active landing with the find form (empty, refused with field errors, and after a find),
# an unactivated item's landing (signed out: the sign-in prompt; signed in: the activation
# form), sign-in (empty and refused), the code box (alone and expired), a code that matches
# nothing, too many codes tried, the 404 page, the ended session, the help and beta pages.
@pytest.mark.parametrize(
    ("viewport", "javascript", "lang"),
    PAIRWISE,
    ids=[f"{v}-{'script' if j else 'no-script'}-{lang}" for v, j, lang in PAIRWISE],
)
def test_every_page_passes_axe_core(
    app, live_server, browser, tmp_path, viewport, javascript, lang
):

    olga = make_user("olga", display_name="Olga O.")
    held = make_trackable(
        olga,
        name="Blue bug",
        description="A blue toy bug travelling from lake to lake.",
        status_message="Heading north",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
    )
    fresh = make_trackable(None, name="New one")
    context = open_browser(
        browser,
        viewport=VIEWPORTS[viewport],
        java_script_enabled=javascript,
    )
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()

        def check(where: str) -> None:
            check_accessibility(page, f"{where} ({page.url})", javascript=javascript)

        page.goto(f"{live_server}/trackable/{codes_of(held)[1]}")
        page.goto(f"{live_server}/trackable/{codes_of(fresh)[1]}")
        _signed_out_pages(page, f"{live_server}/{lang}", held, fresh, check)
        _find_form_pages(page, f"{live_server}/{lang}", held, lang, check)
        page.goto(f"{live_server}/trackable/NOPE2345")
        check("a code matching nothing")
        page.goto(f"{live_server}/trackable")
        check("the code box alone")
        app.config["SECRET_GUESS_LIMIT"] = 1  # that miss spent the budget
        page.goto(f"{live_server}/trackable/NOPE2346")
        assert page.locator("h1").inner_text() in (
            "Too many codes tried",
            "Zu viele Codes versucht",
        )
        check("too many codes tried")
        _signed_in_pages(page, f"{live_server}/{lang}", fresh, check)
        page.goto(f"{live_server}/{lang}/trackables/active/{held.id}")
        page.click("#end button")
        check("the ended session")
        page.goto(f"{live_server}/{lang}/")
        context.clear_cookies()  # the form's token no longer matches the session
        page.fill("#code", "LN-NONE00")
        page.click("form.code-box button")
        assert page.locator("p.error").count() == 1
        check("the code box after an expired form")
    finally:
        context.close()


def _signed_out_pages(page: Any, base: str, held: Any, fresh: Any, check: Check) -> None:
    for path, where in [
        ("/", "home"),
        ("/trackables", "the public list"),
        (f"/trackables/{held.public_code}", "a public page without entries"),
        (f"/trackables/active/{fresh.id}", "an unactivated item, signed out"),
        ("/sign-in", "sign-in"),
        ("/trackables/LN-NONE00/zqxv", "the 404 page"),
        ("/help/foreign-codes", "help: foreign codes"),
        ("/help/external-links", "help: external links"),
        ("/beta/android", "the beta page"),
    ]:
        page.goto(f"{base}{path}")
        check(where)


def _find_form_pages(page: Any, base: str, held: Any, lang: str, check: Check) -> None:
    send = {"en": "Send", "de": "Absenden"}[lang]
    page.goto(f"{base}/trackables/active/{held.id}")
    check("the find form")
    page.fill("#find-latitude", "north")
    page.click(f"button:has-text('{send}')")
    check("the find form with field errors")
    page.fill("#find-body", "Found it on a bench by the lake.")
    page.fill("#find-latitude", "47.3769")
    page.fill("#find-longitude", "8.5417")
    page.click(f"button:has-text('{send}')")
    page.locator("#find p.notice").wait_for()
    check("the find form after a find")
    page.goto(f"{base}/trackables/{held.public_code}")
    check("a public page with entries")


def _signed_in_pages(page: Any, base: str, fresh: Any, check: Check) -> None:
    page.goto(f"{base}/sign-in")
    page.fill("#email", "olga@example.com")
    page.fill("#password", "not the password")
    page.click("form.card button[type=submit]")
    check("sign-in refused")
    page.fill("#email", "olga@example.com")
    page.fill("#password", DEFAULT_PASSWORD)
    page.click("form.card button[type=submit]")
    page.goto(f"{base}/trackables/active/{fresh.id}")
    check("the activation form")
    page.click("form.inline button")  # signed out again for the next language
