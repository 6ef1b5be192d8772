"""A real headless Chromium for the website tests (Debian's old headless shell, else its
full browser, driven by Playwright; no browser is ever downloaded): where it is, how it
is started, and whether the tests may skip without it (locally) or must fail
(REQUIRE_BROWSER_TESTS=1, as CI sets). One browser per test process (`browser`); each
test gets fresh contexts of it, which share no cookies, storage or cache. Its fixtures
(`chromium_path`, `browser`, `live_server`, `phone`) are registered once for the whole
suite (tests/conftest.py, `pytest_plugins`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

# The headless shell is the Blink of the full browser without its windowing layers, and
# what Playwright itself runs headless: the browser tests take a third less CPU with it.
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = Path(
    os.environ.get("CHROMIUM_PATH")
    or (HEADLESS_SHELL if HEADLESS_SHELL.is_file() else "/usr/bin/chromium")
)
ROOT = Path(__file__).resolve().parents[2]
# The documentation's screenshots are refreshed only by `make screenshots`
# (UPDATE_SCREENSHOTS=1); other runs write theirs under build/, so the tree stays clean.
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("UPDATE_SCREENSHOTS") == "1"
    else ROOT / "build" / "screenshots"
)
PHONE = {"width": 390, "height": 844}  # a common phone's CSS viewport
DESKTOP = {"width": 1280, "height": 900}
ZURICH = {"latitude": 47.3769, "longitude": 8.5417}
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_missing() -> str | None:
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium-headless-shell)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (the test extras)"
    return None


def require_browser(missing: str | None, required: bool) -> None:
    """Skip (locally) or fail (CI: REQUIRE_BROWSER_TESTS=1) when the browser is missing."""
    if missing is None:
        return
    if required:
        pytest.fail(f"browser tests are required here, but: {missing}")
    pytest.skip(f"browser tests skipped: {missing}")


def open_browser(browser: Any, **options: Any) -> Any:
    """A fresh context of the test process's browser (no cookies, storage or cache of
    another); `options` are Playwright's (viewport, locale, java_script_enabled,
    geolocation, ...). Close it when done."""
    return browser.new_context(**options)


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    """Debian's Chromium, or a skip (a failure where REQUIRE_BROWSER_TESTS=1) without it."""
    require_browser(browser_missing(), os.environ.get("REQUIRE_BROWSER_TESTS") == "1")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium_path: Path) -> Iterator[Any]:
    """One headless Chromium for the whole test process, started at its first use."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium_path), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            launched.close()


def closing_body(app: Any) -> Any:
    """The app with each response body closed however its request ends. Werkzeug's
    development server skips the body's close() when the client resets the connection
    while the server drains it after writing (a browser cancelling map tiles does), and
    the file behind a send_file() response is then left open until garbage collection
    (a ResourceWarning, an error under this suite's warning filter). A generator's
    `finally` runs when it is collected, before the file it holds."""

    def wsgi(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        body = app(environ, start_response)

        def chunks() -> Iterator[bytes]:
            try:
                yield from body
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()

        return chunks()

    return wsgi


@pytest.fixture
def live_server(app: Any) -> Iterator[str]:
    """The app served by a real HTTP server in a thread, on a free port."""
    server = make_server("127.0.0.1", 0, closing_body(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A phone-sized browser context, fresh, that shares a faked location."""
    context = open_browser(
        browser,
        viewport=PHONE,
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        locale="en-GB",
        geolocation=ZURICH,
        permissions=["geolocation"],
    )
    try:
        yield context
    finally:
        context.close()
