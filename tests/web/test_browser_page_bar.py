"""The pages' bar and forms in a real headless Chromium: the bar one line high at a phone's
width (signed in, with the account's links, in both languages), its language switch on
every kind of page leading to that page in the other language, the inputs styled as the
site's fields are, and axe-core finding nothing at all (any impact) on these pages at
390x844 and 1280x900."""

from __future__ import annotations

from typing import Any

import pytest

from app.models.trackable import TrackableVisibility
from tests.factories import DEFAULT_PASSWORD, codes_of, make_trackable, make_user
from tests.web.accessibility import axe_violations, describe
from tests.web.browser import DESKTOP, PHONE, open_browser

OTHER = {"en": "de", "de": "en"}
LONG_NAME = "maximiliane-theodora-hohenberg"

# The bar's content height against one line of its text, and where its parts are.
MEASURE_BAR = """() => {
  const bar = document.querySelector('header.bar');
  const style = getComputedStyle(bar);
  const inner = bar.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  const line = parseFloat(getComputedStyle(bar.querySelector('.brand')).lineHeight);
  const parts = [...bar.querySelectorAll('a, button, strong, .who')]
    .filter(element => element.getClientRects().length > 0)
    .map(element => {
      const box = element.getBoundingClientRect();
      return {text: element.textContent.trim(), top: box.top, bottom: box.bottom,
              left: box.left, right: box.right};
    });
  return {inner, line, parts, barTop: bar.getBoundingClientRect().top,
          barBottom: bar.getBoundingClientRect().bottom,
          overflow: bar.scrollWidth - bar.clientWidth,
          pageOverflow: document.documentElement.scrollWidth - window.innerWidth};
}"""
# The computed look of a field, as the site's style sheet sets it.
FIELD_LOOK = """element => {
  const style = getComputedStyle(element);
  return ['borderTopWidth', 'borderTopStyle', 'borderTopColor', 'borderRadius', 'paddingTop',
          'paddingLeft', 'fontSize', 'fontFamily', 'backgroundColor', 'color', 'display']
    .reduce((look, name) => ({...look, [name]: style[name]}), {});
}"""

# Seconds of Chromium each: CI runs them on both databases; `make test` skips them.
pytestmark = pytest.mark.browser_ci


@pytest.fixture
def item(app) -> Any:
    return make_trackable(
        make_user("olga", display_name="Olga O."),
        name="Blue bug",
        description="A blue toy bug travelling from lake to lake.",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
    )


def sign_in(page: Any, base: str, lang: str, email: str) -> None:
    page.goto(f"{base}/{lang}/sign-in")
    page.fill("#email", email)
    page.fill("#password", DEFAULT_PASSWORD)
    page.click("form.card button[type=submit]")
    page.locator("header.bar form.inline button").wait_for()


def assert_one_line(page: Any, where: str) -> None:
    bar = page.evaluate(MEASURE_BAR)
    assert bar["inner"] < 1.5 * bar["line"], (where, bar)  # a second line would double it
    assert bar["overflow"] <= 0, (where, bar)
    assert bar["pageOverflow"] <= 0, (where, bar)
    for part in bar["parts"]:
        assert bar["barTop"] <= part["top"], (where, part)
        assert part["bottom"] <= bar["barBottom"], (where, part)
        assert part["right"] <= page.viewport_size["width"], (where, part)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_bar_is_one_line_high_signed_out_and_signed_in(app, live_server, browser, item, lang):
    make_user(LONG_NAME, display_name="Maximiliane Theodora von Hohenberg")
    context = open_browser(browser, viewport=PHONE)  # 390 px: wider bars have more room
    try:
        page = context.new_page()
        for path in ("/", f"/trackables/{item.public_code}", "/sign-in"):
            page.goto(f"{live_server}/{lang}{path}")
            assert_one_line(page, f"signed out: {path}")
        sign_in(page, live_server, lang, f"{LONG_NAME}@example.com")
        account_links = page.locator("header.bar nav.account a")
        assert account_links.count() >= 1  # the account's own link, beside "sign out"
        for path in ("/", f"/trackables/{item.public_code}", "/trackables"):
            page.goto(f"{live_server}/{lang}{path}")
            assert_one_line(page, f"signed in: {path}")
            assert page.locator("header.bar form.inline button").is_visible()
            assert account_links.first.is_visible()
    finally:
        context.close()


def switch_language(page: Any, lang: str) -> None:
    """Follow the bar's link to the other language: the page is then in that language."""
    other = OTHER[lang]
    assert page.locator("html").get_attribute("lang") == lang
    link = page.locator(f"header.bar nav.languages a[hreflang={other}]")
    assert link.count() == 1
    link.click()
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == other


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_language_switch_leads_to_the_same_page_in_the_other_language(
    app, live_server, browser, item, lang
):
    other = OTHER[lang]
    context = open_browser(browser, viewport=PHONE, locale="de-DE" if lang == "de" else "en-GB")
    try:
        page = context.new_page()
        page.goto(f"{live_server}/trackable/{codes_of(item)[1]}")  # holds it: the landing
        for path, expected in [
            ("/", "/"),
            ("/trackables", "/trackables"),
            (f"/trackables/{item.public_code}", f"/trackables/{item.public_code}"),
            (f"/trackables/active/{item.id}", f"/trackables/active/{item.id}"),
            ("/sign-in", "/sign-in"),
            ("/help/foreign-codes", "/help/foreign-codes"),
            ("/beta/android", "/beta/android"),
            ("/trackables/LN-NONE00", "/not-found"),  # the 404 page, not its address
            ("/trackables/LN-NONE00/zqxv", "/not-found"),
        ]:
            page.goto(f"{live_server}/{lang}{path}")
            switch_language(page, lang)
            assert page.url == f"{live_server}/{other}{expected}", path
        page.goto(f"{live_server}/trackable/NOPE2345")  # a miss, in the browser's language
        switch_language(page, lang)
        assert page.url == f"{live_server}/{other}/"
        page.goto(f"{live_server}/{lang}/trackables/active/{item.id}")
        page.click("#end button")
        assert page.locator("h1").count() == 1
        switch_language(page, lang)  # "session ended": the item's public page
        assert page.url == f"{live_server}/{other}/trackables/{item.public_code}"
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_sign_in_fields_look_like_the_sites_other_fields(
    app, live_server, browser, item, viewport
):
    context = open_browser(browser, viewport=viewport)
    try:
        page = context.new_page()
        page.goto(f"{live_server}/trackable/{codes_of(item)[1]}")
        typed = page.locator("#find-latitude").evaluate(FIELD_LOOK)
        assert typed["borderTopStyle"] == "solid"
        assert typed["borderTopColor"] == "rgb(154, 165, 177)"
        assert page.locator("#find-photo").evaluate(FIELD_LOOK) == typed
        page.goto(f"{live_server}/de/sign-in")
        form = page.locator("form.card")
        content_width = form.evaluate(
            "form => form.clientWidth - parseFloat(getComputedStyle(form).paddingLeft)"
            " - parseFloat(getComputedStyle(form).paddingRight)"
        )
        for field in ("#email", "#password"):
            assert page.locator(field).evaluate(FIELD_LOOK) == typed, field
            width = page.locator(field).evaluate("element => element.offsetWidth")
            assert width == pytest.approx(content_width, abs=1), field
    finally:
        context.close()


# Pairwise, as the accessibility matrix: each viewport once, each language once.
@pytest.mark.parametrize(
    ("viewport", "lang"), [(PHONE, "de"), (DESKTOP, "en")], ids=["phone-de", "desktop-en"]
)
def test_the_changed_pages_have_no_axe_violations(app, live_server, browser, item, viewport, lang):
    make_user("kim", display_name="Kim K.")
    context = open_browser(browser, viewport=viewport)
    context.set_default_timeout(15_000)
    found: list[str] = []
    try:
        page = context.new_page()

        def check(where: str) -> None:
            violations = axe_violations(page)
            if violations:
                found.append(f"{where} ({page.url}):\n{describe(violations)}")

        base = f"{live_server}/{lang}"
        page.goto(f"{live_server}/trackable/{codes_of(item)[1]}")
        for path, where in [
            ("/", "home"),
            ("/trackables", "the public list"),
            (f"/trackables/{item.public_code}", "the public page"),
            ("/sign-in", "sign-in"),
            ("/not-found", "the 404 page"),
            ("/trackables/LN-NONE00/zqxv", "the error page's 404"),
        ]:
            page.goto(f"{base}{path}")
            check(where)
        page.goto(f"{live_server}/trackable/NOPE2345")
        check("a code matching nothing")
        page.goto(f"{base}/trackables/active/{item.id}")
        page.fill("#find-name", "Kim")
        page.fill("#find-latitude", "Norden")
        page.click("#find button[type=submit]")
        assert page.locator("#find-latitude-error").count() == 1
        check("the find form with a coordinate refused")
        page.fill("#find-latitude", "47,3769")
        page.fill("#find-longitude", "8,5417")
        page.click("#find button[type=submit]")
        page.locator("#find p.notice").wait_for()
        assert page.input_value("#find-name") == "Kim"
        check("the find form after a find, the name kept")
        sign_in(page, live_server, lang, "kim@example.com")
        page.goto(f"{base}/trackables")
        check("the public list, signed in")
        page.goto(f"{base}/trackables/active/{item.id}")
        page.click("#end button")
        check("session ended")
    finally:
        context.close()
    assert not found, "\n".join(found)
