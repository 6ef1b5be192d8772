"""The public page's journey map in a real headless Chromium (Debian's /usr/bin/chromium,
driven by Playwright; no browser is downloaded), on a phone and a desktop screen: with
JavaScript, Leaflet (served by us) replaces the server-drawn SVG with a map that shows
the route and numbered stops, zooms and pans, asks nothing of any other origin and trips
no CSP rule; without JavaScript the SVG map stays. A phone-sized screenshot goes to
docs/screenshots/journey-map.png (linked from the README).

Without /usr/bin/chromium these tests skip, saying why; with REQUIRE_BROWSER_TESTS=1
(CI sets it) they fail instead."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from app.extensions import db
from app.models.trackable import Trackable, TrackableVisibility
from app.services.trackables.journey import recording as journey
from tests.factories import make_trackable, make_user
from tests.web.browser import DESKTOP, PHONE, SCREENSHOTS, open_browser

STOPS = [(47.3769, 8.5417), (48.1374, 11.5755), (45.4642, 9.19)]  # Zurich, Munich, Milan
# Collects what the page's CSP refused (the event fires before any console message).
WATCH_CSP = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


@pytest.fixture
def travelled(app) -> Trackable:
    trackable = make_trackable(
        make_user("olga", display_name="Olga O."),
        name="Blue bug",
        visibility=TrackableVisibility.ALWAYS_VISIBLE,
    )
    for latitude, longitude in STOPS:
        journey.record_stop(
            trackable,
            latitude=latitude,
            longitude=longitude,
            created_by=None,
            display_name="Ann",
            is_anonymous=True,
        )
    db.session.commit()
    return trackable


def browse(browser: Any, **options: Any) -> Any:
    return open_browser(browser, locale="en-GB", **options)


def watch(page: Any) -> tuple[list[str], list[str]]:
    """Every URL the page asks for, and every console error (a CSP refusal is one)."""
    requested: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.add_init_script(WATCH_CSP)
    return requested, errors


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / name
    temporary = target.with_suffix(".part.png")
    page.locator("#journey").screenshot(path=str(temporary))
    shutil.move(temporary, target)


def assert_inside(inner: dict[str, float], outer: dict[str, float]) -> None:
    assert outer["x"] <= inner["x"]
    assert inner["x"] + inner["width"] <= outer["x"] + outer["width"]
    assert outer["y"] <= inner["y"]
    assert inner["y"] + inner["height"] <= outer["y"] + outer["height"]


def map_zoom(page: Any) -> int:
    return int(page.locator(".journey-map").get_attribute("data-zoom"))


def wait_for_tiles(page: Any, zoom: int) -> None:
    page.wait_for_function(
        """zoom => [...document.querySelectorAll('.journey-map img.leaflet-tile')]
            .some(tile => tile.src.includes(`/maps/tiles/${zoom}/`) && tile.complete
                  && tile.naturalWidth === 256)""",
        arg=zoom,
        timeout=60_000,
    )


@pytest.mark.parametrize(
    ("viewport", "touch"), [(PHONE, True), (DESKTOP, False)], ids=["phone", "desktop"]
)
def test_the_journey_map_zooms_and_pans_with_nothing_from_elsewhere(
    live_server, browser, tmp_path, travelled, viewport, touch
):

    context = browse(
        browser,
        viewport=viewport,
        is_mobile=touch,
        has_touch=touch,
        device_scale_factor=2 if touch else 1,
    )
    try:
        page = context.new_page()
        requested, errors = watch(page)
        page.goto(f"{live_server}/en/trackables/{travelled.public_code}")

        live = page.locator("figure.map .journey-map.leaflet-container")
        live.wait_for(state="visible")
        assert page.locator("svg.map-fallback").is_hidden()  # replaced, not doubled
        box = live.bounding_box()
        assert box is not None
        assert box["width"] <= viewport["width"]
        assert box["height"] >= 250
        zoom = map_zoom(page)
        wait_for_tiles(page, zoom)

        # The route and the numbered stops, the latest one set apart.
        route = page.locator(".journey-map path.journey-route")
        assert route.count() == 1
        drawn = route.bounding_box()  # drawn across the map, not merely present
        assert drawn is not None
        assert drawn["width"] > 40
        assert drawn["height"] > 40
        assert_inside(drawn, box)
        markers = page.locator(".journey-map .leaflet-marker-icon.journey-stop")
        assert markers.all_inner_texts() == ["1", "2", "3"]
        assert "journey-stop-last" in (markers.nth(2).get_attribute("class") or "")
        assert markers.nth(0).get_attribute("title").startswith("1. ")
        for index in range(3):  # fitted: every stop is on the map
            marker = markers.nth(index).bounding_box()
            assert marker is not None
            assert_inside(marker, box)
        attribution = page.locator(".journey-map .leaflet-control-attribution")
        assert "Natural Earth, GeoNames" in attribution.inner_text()
        if touch:
            screenshot(page, "journey-map.png")

        # Zoom in with the button: the map and its tiles go one level closer.
        page.locator(".journey-map .leaflet-control-zoom-in").click()
        page.wait_for_function(
            "zoom => document.querySelector('.journey-map').dataset.zoom === String(zoom)",
            arg=zoom + 1,
        )
        wait_for_tiles(page, zoom + 1)

        # Pan: drag the map by a good distance.
        pane = page.locator(".journey-map .leaflet-map-pane")
        before = pane.evaluate("element => getComputedStyle(element).transform")
        middle_x = box["x"] + box["width"] / 2
        middle_y = box["y"] + box["height"] / 2
        page.mouse.move(middle_x, middle_y)
        page.mouse.down()
        page.mouse.move(middle_x - 120, middle_y - 60, steps=8)
        page.mouse.up()
        page.wait_for_function(
            "before => getComputedStyle(document.querySelector("
            "'.journey-map .leaflet-map-pane')).transform !== before",
            arg=before,
        )
        page.wait_for_load_state("networkidle", timeout=60_000)

        assert requested
        foreign = [url for url in requested if not url.startswith(f"{live_server}/")]
        assert foreign == []
        assert any("/static/leaflet/" in url for url in requested)
        assert page.evaluate("() => window.cspViolations") == []
        assert errors == []
    finally:
        context.close()


def test_without_javascript_the_server_drawn_map_shows(live_server, browser, tmp_path, travelled):

    context = browse(
        browser,
        viewport=PHONE,
        java_script_enabled=False,
    )
    try:
        page = context.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{live_server}/en/trackables/{travelled.public_code}")
        fallback = page.locator("figure.map svg.map-fallback")
        assert fallback.is_visible()
        assert page.locator("figure.map svg g.stop").count() == 3
        assert page.locator(".leaflet-container").count() == 0
        page.wait_for_load_state("networkidle", timeout=60_000)
        images = page.locator("svg.map-fallback image")
        assert images.count() > 0
        assert all(url.startswith(f"{live_server}/") for url in requested), requested
    finally:
        context.close()
