"""The device label made from a User-Agent: browser and system from fixed lists, else a
client's first product name, never the header as sent; "" when nothing is known."""

from __future__ import annotations

import pytest

from app.services.identity import device_name

CASES = [
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0.0.0 Safari/537.36",
        "Chrome · Windows",
    ),
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.68",
        "Edge · Windows",
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "Safari · iPhone",
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like "
        "Gecko) Version/17.5 Safari/605.1.15",
        "Safari · macOS",
    ),
    (
        "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like "
        "Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
        "Samsung Internet · Android",
    ),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox · Linux"),
    (
        "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) Chrome/126.0.0.0 Safari/537.36",
        "Chrome · ChromeOS",
    ),
    ("LocationNotes/2.1 (Android 14; Pixel 8)", "LocationNotes · Android"),
    ("okhttp/4.12.0", "okhttp"),
    ("curl/8.5.0", "curl"),
    ("Mozilla/5.0", ""),
    ("", ""),
    (None, ""),
    ('<script>alert("x")</script>', ""),
    ("{evil}/1.0", ""),
    ("A" * 300 + "/1.0", ""),  # longer than any product name: not shortened into one
]


@pytest.mark.parametrize(("agent", "label"), CASES)
def test_a_user_agent_gives_its_short_label(agent, label):
    assert device_name(agent) == label


def test_a_label_is_never_longer_than_its_column():
    assert len(device_name("B" * 30 + " (Windows; iPhone; Android)" * 50)) <= 64
