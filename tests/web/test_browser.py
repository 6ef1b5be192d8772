"""The finder's journey in a real headless Chromium, against the app on a free port.

Debian's /usr/bin/chromium, driven by Playwright (no browser is ever downloaded), over the
test database: scan the QR URL, land on the active page, log a find (a comment and a
journey stop from a faked geolocation, or typed in DMS, with a photo) in one submit, see
both on the public page. Every page a test passes through is checked with axe-core
(tests.web.accessibility; every page in both languages and viewports:
test_browser_accessibility.py). Without /usr/bin/chromium these tests skip, saying why;
with REQUIRE_BROWSER_TESTS=1 (CI sets it) they fail instead, so CI never passes them silently.
"""

from __future__ import annotations

import re
import shutil
import time
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import JourneyStop, TrackableComment, TrackableVisibility
from tests.api.images.samples import sample
from tests.factories import codes_of, count_rows, make_trackable, make_user
from tests.web.accessibility import check_accessibility
from tests.web.browser import PHONE, SCREENSHOTS, open_browser, require_browser


def test_a_missing_browser_skips_locally_and_fails_where_it_is_required():
    require_browser(None, required=True)  # present: runs
    with pytest.raises(pytest.skip.Exception, match="no Chromium at"):
        require_browser("no Chromium at /usr/bin/chromium", required=False)
    with pytest.raises(pytest.fail.Exception, match="required here"):
        require_browser("no Chromium at /usr/bin/chromium", required=True)


# Phone-sized screenshots of each page are saved into docs/screenshots/ (linked from the
# README).
def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / name
    temporary = target.with_suffix(".part.png")
    page.screenshot(path=str(temporary), full_page=True)
    shutil.move(temporary, target)


def record_error(problems: list[str], message: Any) -> None:
    if message.type == "error":
        problems.append(message.text)


def wait_for_tiles(page: Any) -> None:
    """Until the pannable map's tiles have loaded (each is drawn by the server on first
    request)."""
    page.wait_for_function(
        "() => document.querySelectorAll('.journey-map img.leaflet-tile-loaded').length > 0",
        timeout=30_000,
    )
    page.wait_for_load_state("networkidle", timeout=60_000)


def test_a_finder_scans_comments_adds_a_stop_and_sees_them_on_the_public_page(
    app, live_server, phone
):
    trackable = make_trackable(
        make_user("olga", display_name="Olga O."),
        name="Blue bug",
        description="A blue toy bug travelling from lake to lake. Take it along!",
        status_message="Heading north",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
    )
    secret, token = codes_of(trackable)
    page = phone.new_page()
    seen: list[str] = []  # every page's HTML, checked for secrets at the end
    problems: list[str] = []
    page.on("console", lambda message: record_error(problems, message))

    # The QR code's URL opens the access session and lands on the active page.
    page.goto(f"{live_server}/trackable/{token}")
    assert re.search(rf"/en/trackables/active/{trackable.id}$", page.url)
    assert page.locator("h1").inner_text() == "Blue bug"
    check_accessibility(page, "the active page")
    seen.append(page.content())

    # One find: a comment and the browser's (faked) location, filled in by the script.
    page.fill("#find-name", "Kim")
    page.fill("#find-body", "Found it on a bench by the lake.")
    page.click("text=Use my location")
    page.wait_for_function("() => document.querySelector('#find-latitude').value !== ''")
    assert float(page.input_value("#find-latitude")) == pytest.approx(47.3769, abs=1e-4)
    assert float(page.input_value("#find-longitude")) == pytest.approx(8.5417, abs=1e-4)
    page.set_input_files(
        "#find-photo",
        files=[{"name": "bench.jpg", "mimeType": "image/jpeg", "buffer": sample("JPEG")}],
    )
    page.click("button:has-text('Send')")
    assert (
        page.locator("#find p.notice").inner_text()
        == "Your comment and the journey stop were posted."
    )
    notice_photo = page.locator("#find .entry-photos img")
    notice_photo.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#find .entry-photos img').complete")
    assert notice_photo.evaluate("image => image.naturalWidth") > 0  # loaded, not broken
    assert notice_photo.evaluate("image => image.currentSrc").endswith("-306.jpg")
    check_accessibility(page, "the active page after a find")
    seen.append(page.content())
    screenshot(page, "active-page.png")

    # Both show on the public page, the stop on the map and in the list.
    page.click("text=See its public page")
    assert page.url.endswith(f"/en/trackables/{trackable.public_code}")
    assert "Found it on a bench by the lake." in page.locator("#comments").inner_text()
    assert page.locator("#comments .entry-photos img").count() == 1  # the finder's photo
    journey = page.locator("#journey").inner_text()
    assert "Zürich" in journey
    assert "47.3769, 8.5417" in journey
    stops = page.locator(".journey-map .journey-stop")  # the pannable map, once it stands
    stops.first.wait_for()
    assert stops.count() == 1
    wait_for_tiles(page)
    screenshot(page, "public-page.png")
    check_accessibility(page, "the public page")
    seen.append(page.content())

    # The same page in German.
    page.click("text=DE")
    assert page.url.endswith(f"/de/trackables/{trackable.public_code}")
    assert page.locator("#journey h2").inner_text() == "Reise"
    wait_for_tiles(page)
    screenshot(page, "public-page-de.png")
    check_accessibility(page, "the German public page")
    seen.append(page.content())

    assert problems == []  # no CSP violation or script error in the console
    for html in seen:
        assert secret not in html
        assert token not in html


SLOW_POST = 0.5  # seconds a form post waits before it is handled


def slow_posts(app: Any, monkeypatch: Any) -> list[str]:
    """Form posts answered after SLOW_POST seconds (a slow network): a second press
    leaves while the first is still on its way. The paths received, in order."""
    received: list[str] = []
    handle = app.wsgi_app

    def slow(environ: dict[str, Any], start_response: Any) -> Any:
        if environ["REQUEST_METHOD"] == "POST":
            received.append(environ["PATH_INFO"])
            time.sleep(SLOW_POST)
        return handle(environ, start_response)

    monkeypatch.setattr(app, "wsgi_app", slow)
    return received


@pytest.mark.parametrize("javascript", [True, False])
@pytest.mark.parametrize(
    ("locale", "texts"),
    [
        ("en-GB", ("Send", "Your comment and the journey stop were posted.", "See your comment")),
        (
            "de-DE",
            (
                "Absenden",
                "Dein Kommentar und die Reisestation wurden veröffentlicht.",
                "Deinen Kommentar",
            ),
        ),
    ],
)
def test_a_find_in_dms_pressed_twice_writes_once_and_links_to_the_highlighted_entry(
    app, live_server, browser, tmp_path, monkeypatch, javascript, locale, texts
):
    """One submit with a comment and a position in DMS, pressed
    twice; the notice where the finder is looking; its link opens the public page on the
    new entry, highlighted; one comment and one stop written."""

    send, posted, link = texts
    received = slow_posts(app, monkeypatch)
    trackable = make_trackable(make_user("olga"), name="Red kayak paddle")
    context = open_browser(
        browser,
        viewport=PHONE,
        locale=locale,
        timezone_id="America/New_York",
        java_script_enabled=javascript,
    )
    try:
        page = context.new_page()
        page.goto(f"{live_server}/trackable/{codes_of(trackable)[1]}")
        assert (page.locator("button.locate").count() == 1) is javascript
        check_accessibility(page, "the active page", javascript=javascript)
        page.fill("#find-body", "Under the bridge.")
        page.fill("#find-latitude", "48°8'14.6\"N")
        page.fill("#find-longitude", "E 11 34 31.8")
        # Pressed twice, the second time while the first is still on its way.
        page.focus(f"button:has-text('{send}')")
        page.keyboard.press("Enter")
        page.wait_for_timeout(150)
        page.keyboard.press("Enter")
        notice = page.locator("#find p.notice")
        notice.wait_for()
        assert notice.inner_text() == posted
        assert page.url.endswith("#find")
        box = notice.bounding_box()
        assert box is not None
        assert box["y"] >= 0
        assert box["y"] + box["height"] <= PHONE["height"]
        check_accessibility(page, "the active page after a find", javascript=javascript)
        page.wait_for_timeout(SLOW_POST * 1000)
        assert len(received) == 2  # both reached the server
        db.session.rollback()  # read what the server committed
        assert count_rows(TrackableComment) == count_rows(JourneyStop) == 1

        page.click(f"a:has-text('{link}')")
        comment = db.session.scalars(select(TrackableComment)).one()
        assert page.url.endswith(f"#comment-{comment.id}")
        target = page.locator(":target")
        assert target.get_attribute("id") == f"comment-{comment.id}"
        assert "Under the bridge." in target.inner_text()
        outline = target.evaluate("element => getComputedStyle(element).outlineStyle")
        assert outline == "solid"  # highlighted
        check_accessibility(page, "the public page on the new entry", javascript=javascript)
        stop = page.locator(f"#stop-{db.session.scalars(select(JourneyStop)).one().id}")
        assert "48.1374, 11.5755" in stop.inner_text()
        written = page.locator(f"#comment-{comment.id} time")
        if javascript:  # the reader's zone (New York), the UTC text kept as its title
            assert "UTC" not in written.inner_text()
            assert written.get_attribute("title").endswith("UTC")
        else:
            assert written.inner_text().endswith("UTC")
    finally:
        context.close()


def test_the_beta_page_from_the_status_opens_in_the_browser_language_and_switches(
    api, live_server, phone
):
    address = api.get("/api/system/status").get_json()["androidBetaPageUrl"]
    page = phone.new_page()
    problems: list[str] = []
    page.on("console", lambda message: record_error(problems, message))
    response = page.goto(f"{live_server}{address}")
    assert response is not None
    assert response.status == 200
    assert page.locator("h1").inner_text() == "The Android app beta"  # locale en-GB
    check_accessibility(page, "the beta page")
    page.click("text=DE")
    assert page.url.endswith("/de/beta/android")
    assert page.locator("h1").inner_text() == "Die Beta der Android-App"
    assert page.locator("h2").first.inner_text() == "So machst du mit"
    check_accessibility(page, "the German beta page")
    assert problems == []


def test_the_help_pages_the_api_links_to_open_in_the_browser_language_and_switch(
    api, live_server, phone
):
    help_url = api.post("/api/trackables/lookup", json={"code": "TB1A2B3C"}).get_json()["helpUrl"]
    member = api.as_user(make_user("kim"))
    refused = member.post("/api/external-links/verify", json={"url": "javascript:alert(1)"})
    support_url = refused.get_json()["supportUrl"]
    page = phone.new_page()
    problems: list[str] = []
    page.on("console", lambda message: record_error(problems, message))
    for address, english, german in [
        (help_url, "Codes of other tracking systems", "Codes anderer Tracking-Systeme"),
        (support_url, "Why a link was refused", "Warum ein Link abgelehnt wurde"),
    ]:
        response = page.goto(f"{live_server}{address}")
        assert response is not None
        assert response.status == 200
        assert page.locator("h1").inner_text() == english  # locale en-GB
        check_accessibility(page, english)
        page.click("text=DE")
        assert page.url.endswith(f"/de{address}")
        assert page.locator("h1").inner_text() == german
        assert page.locator("h2").first.is_visible()
        check_accessibility(page, german)
    assert problems == []


@pytest.mark.parametrize("javascript", [True, False])
def test_a_finder_without_a_qr_code_types_the_code_on_the_home_page(
    app, live_server, browser, tmp_path, javascript
):
    """From the bare address, in the browser's language, to the item's
    active page by typing its secret code as printed; nothing requested elsewhere."""

    trackable = make_trackable(make_user("olga"), name="Green compass")
    secret = codes_of(trackable)[0]
    context = open_browser(
        browser,
        viewport=PHONE,
        locale="de-DE",
        java_script_enabled=javascript,
    )
    try:
        page = context.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{live_server}/")
        assert page.url == f"{live_server}/de/"
        assert page.locator("h1").inner_text() == "Folge einem Trackable auf seiner Reise"
        if javascript:
            screenshot(page, "home-de.png")
        check_accessibility(page, "the home page", javascript=javascript)
        page.fill("#code", f"  {secret.lower()} ")
        page.click("button:has-text('Suchen')")
        assert page.url == f"{live_server}/de/trackables/active/{trackable.id}"
        assert "Green compass" in page.locator("h1").inner_text()
        check_accessibility(page, "the active page", javascript=javascript)
        page.goto(f"{live_server}/de/trackables/LN-NONE00/zqxv")
        assert page.locator("h1").inner_text() == "Seite nicht gefunden"
        check_accessibility(page, "the 404 page", javascript=javascript)
        assert all(url.startswith(live_server) for url in requested), requested
    finally:
        context.close()
