"""The client status through services.system, without HTTP: a saved preference beats the
visitor cookie, which beats the default; a private or local client address forces
`no_3rd_parties` and hosted tiles whatever was asked; a map source that is not allowed
falls back; the beta channel and the limits carry their settings as clients read them."""

from __future__ import annotations

import pytest

from app.auth import build_viewer
from app.services import system
from tests.factories import make_user

PUBLIC_IP, PRIVATE_IP = "8.8.8.8", "192.168.1.20"


def status(app, user=None, *, cookies=None, ip=PUBLIC_IP, **config):
    return system.resolve_status(
        build_viewer(user), cookies=cookies or {}, client_ip=ip, config={**app.config, **config}
    )


@pytest.mark.parametrize(
    ("saved", "cookie", "mode", "uses_saved", "uses_cookie"),
    [
        (None, None, "latest_and_greatest", False, False),
        (None, "no_3rd_parties", "no_3rd_parties", False, True),
        (None, "something_else", "latest_and_greatest", False, False),
        ("no_3rd_parties", "latest_and_greatest", "no_3rd_parties", True, False),
        ("latest_and_greatest", "no_3rd_parties", "latest_and_greatest", True, False),
    ],
)
def test_a_saved_preference_beats_the_cookie_beats_the_default(
    app, saved, cookie, mode, uses_saved, uses_cookie
):
    user = make_user(experience_mode=saved) if saved else None
    cookies = {app.config["EXPERIENCE_MODE_COOKIE"]: cookie} if cookie else {}

    found = status(app, user, cookies=cookies, DEFAULT_EXPERIENCE_MODE="latest_and_greatest")

    assert found["requested_experience_mode"] == found["effective_experience_mode"] == mode
    assert found["uses_saved_experience_mode_preference"] is uses_saved
    assert found["uses_visitor_experience_mode_preference_cookie"] is uses_cookie
    assert found["third_party_browser_calls_allowed"] is (mode == "latest_and_greatest")


@pytest.mark.parametrize("ip", [PRIVATE_IP, "127.0.0.1", "not-an-address"])
def test_a_client_address_that_is_not_public_forces_hosted_maps(app, ip):
    user = make_user(experience_mode="latest_and_greatest", map_source="openstreetmap")

    found = status(app, user, ip=ip, GOOGLE_MAPS_API_KEY="key", OPENSTREETMAP_ENABLED=True)

    assert found["requested_experience_mode"] == "latest_and_greatest"
    assert found["effective_experience_mode"] == "no_3rd_parties"
    assert found["third_party_browser_calls_allowed"] is False
    assert found["hosted_maps_forced_by_privacy"] is True
    assert found["requested_map_source"] == "openstreetmap"
    assert found["preferred_map_source"] == "hosted_maps"
    assert found["google_maps_allowed"] is found["open_street_map_allowed"] is False


@pytest.mark.parametrize(
    ("asked", "google_key", "osm", "preferred"),
    [
        ("google", "key", True, "google"),
        ("google", "", True, "openstreetmap"),  # Google without a key: OSM when it is on
        ("google", "", False, "hosted_maps"),
        ("hosted_maps", "key", True, "hosted_maps"),
        (None, "key", True, "openstreetmap"),
    ],
)
def test_a_map_source_that_is_not_allowed_falls_back(app, asked, google_key, osm, preferred):
    cookies = {app.config["MAP_SOURCE_COOKIE"]: asked} if asked else {}

    found = status(
        app,
        cookies=cookies,
        DEFAULT_EXPERIENCE_MODE="latest_and_greatest",
        GOOGLE_MAPS_API_KEY=google_key,
        OPENSTREETMAP_ENABLED=osm,
    )

    assert found["preferred_map_source"] == preferred
    assert found["fallback_map_source"] == "hosted_maps"
    assert found["uses_visitor_map_preference_cookie"] is (asked is not None)


def test_the_beta_channel_and_limits_carry_their_settings(app):
    config = {
        **app.config,
        "ANDROID_BETA_VERSION_CODE": 412,
        "ANDROID_MIN_VERSION_CODE": 400,
        "PUBLIC_LIST_CAP": 321,
    }

    beta = system.beta_android(config)
    found = system.resolve_status(
        build_viewer(None), cookies={}, client_ip=PUBLIC_IP, config=config
    )

    # version codes travel as strings
    assert (beta["version_code"], beta["minimum_compatible_version_code"]) == ("412", "400")
    assert found["android_minimum_compatible_version_code"] == "400"
    assert found["status"] == "online"
    assert found["limits"]["public_list_cap"] == 321
    assert found["utc_now"].tzinfo is not None
