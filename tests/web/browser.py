"""A real headless Chromium for the website tests (Debian's /usr/bin/chromium, driven by
Playwright; no browser is ever downloaded): where it is, how it is started, and whether
the tests may skip without it (locally) or must fail (REQUIRE_BROWSER_TESTS=1, as CI sets).
The fixtures `chromium_path` and `live_server` are in tests/web/conftest.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PHONE = {"width": 390, "height": 844}  # a common phone's CSS viewport
DESKTOP = {"width": 1280, "height": 900}
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
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
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


def open_browser(playwright: Any, chromium_path: Path, profile: Path, **options: Any) -> Any:
    """A headless browser context with a fresh profile; `options` are Playwright's
    (viewport, locale, java_script_enabled, geolocation, ...)."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(chromium_path),
        headless=True,
        args=CHROMIUM_FLAGS,
        **options,
    )
