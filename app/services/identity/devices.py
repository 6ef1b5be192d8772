"""What signed in, as a short label made from the User-Agent header ("Firefox · Android"):
the account page lists sessions by it. Only names from the lists below and, for a client
they do not know, its first product name (letters, digits, `.-_`) ever make a label, so
nothing a client sends is shown or stored as it came; an unreadable header gives "".
"""

from __future__ import annotations

import re

from app.models.identity import DEVICE_MAX_LENGTH

# The first match names the browser: Edge and Opera say "Chrome" too, Chrome says "Safari".
BROWSERS = (
    ("Edg/", "Edge"),
    ("EdgA/", "Edge"),
    ("EdgiOS/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
)
# The first match names the system: Android says "Linux", an iPhone "like Mac OS X".
SYSTEMS = (
    ("iPhone", "iPhone"),
    ("iPad", "iPad"),
    ("Android", "Android"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Macintosh", "macOS"),
    ("Mac OS X", "macOS"),
    ("Linux", "Linux"),
)
PRODUCT = re.compile(r"([A-Za-z][A-Za-z0-9._-]{0,29})(?:/|\s|$)")
JOINER = " · "


def device_name(user_agent: str | None) -> str:
    """The label for a User-Agent header: browser (or client) and system, either alone
    when the other is unknown, or "" when neither is."""
    agent = (user_agent or "")[:512]
    browser = next((name for mark, name in BROWSERS if mark in agent), None)
    product = PRODUCT.match(agent.strip())
    # "Mozilla" is every browser's first word: it says nothing.
    if browser is None and product is not None and product.group(1) != "Mozilla":
        browser = product.group(1)
    system = next((name for mark, name in SYSTEMS if mark in agent), None)
    label = JOINER.join(part for part in (browser, system) if part)
    return label[:DEVICE_MAX_LENGTH]
