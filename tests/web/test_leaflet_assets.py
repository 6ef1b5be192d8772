"""Leaflet's files served from our own origin (GET /static/leaflet/<version>/...,
app/web/routes.py): the right content types, a year's cache under the version, and
nothing under another version or outside the package's folder."""

from __future__ import annotations

import pytest

from app.web.leaflet import LEAFLET_VERSION

BASE = f"/static/leaflet/{LEAFLET_VERSION}"


@pytest.mark.parametrize(
    ("name", "mimetype", "starts"),
    [
        ("leaflet.js", "text/javascript", b"/* @preserve"),
        ("leaflet.css", "text/css", b"/* required styles */"),
        ("images/layers.png", "image/png", b"\x89PNG"),
    ],
)
def test_leaflet_files_are_served_with_a_long_cache(api, name, mimetype, starts):
    response = api.get(f"{BASE}/{name}")
    assert response.status_code == 200
    assert response.mimetype == mimetype
    assert response.get_data().startswith(starts)
    cache = response.cache_control
    assert cache.public
    assert cache.max_age == 365 * 86400
    assert cache.immutable
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/static/leaflet/0.7.7/leaflet.js",  # another version
        f"{BASE}/missing.js",
        f"{BASE}/../leaflet/__init__.py",
        f"{BASE}/%2e%2e/__init__.py",
    ],
)
def test_nothing_else_is_served_there(api, path):
    assert api.get(path).status_code == 404


def test_the_version_in_the_path_is_leaflets_own(api):
    assert LEAFLET_VERSION.count(".") == 2
    assert f"Leaflet {LEAFLET_VERSION}".encode() in api.get(f"{BASE}/leaflet.js").get_data()
