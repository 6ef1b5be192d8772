"""System routes (contract: System, Versioning)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from app.extensions import db
from tests.factories import make_user

STATUS_FIELDS = {
    "status",
    "utcNow",
    "androidMinimumCompatibleDisplayVersion",
    "androidMinimumCompatibleVersionCode",
    "androidCompatibilityMessage",
    "androidBetaPageUrl",
    "requestedExperienceMode",
    "effectiveExperienceMode",
    "usesSavedExperienceModePreference",
    "usesVisitorExperienceModePreferenceCookie",
    "thirdPartyBrowserCallsAllowed",
    "requestedMapSource",
    "preferredMapSource",
    "fallbackMapSource",
    "usesSavedMapPreference",
    "usesVisitorMapPreferenceCookie",
    "googleMapsAllowed",
    "googleMapsConfigured",
    "openStreetMapAllowed",
    "openStreetMapConfigured",
    "hostedMapsConfigured",
    "hostedMapsForcedByPrivacy",
    "hostedMapTileUrlTemplate",
    "limits",
    "serviceVersion",
}
PUBLIC_IP = "8.8.8.8"
PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def status(api, ip=PUBLIC_IP, **kwargs):
    response = api.get("/api/system/status", environ_base={"REMOTE_ADDR": ip}, **kwargs)
    assert response.status_code == 200
    return response.get_json()


def test_status_has_every_contract_field(api):
    body = status(api)
    assert set(body) == STATUS_FIELDS
    assert body["status"] == "online"
    assert body["utcNow"].endswith("Z")
    assert body["androidMinimumCompatibleVersionCode"] == "1"
    assert body["hostedMapTileUrlTemplate"] == "/maps/tiles/{z}/{x}/{y}.png"
    assert body["fallbackMapSource"] == "hosted_maps"


def test_status_publishes_limits(api):
    limits = status(api)["limits"]
    assert limits["publicListCap"] == 500
    assert limits["nearbyDefaultRadiusKm"] == 5
    assert limits["trackablesPerGroupMax"] == 100
    assert limits["secretCodeGuesses"] == {
        "attempts": 10,
        "networkAttempts": 30,
        "accountAttempts": 10,
        "accountNetworkAttempts": 100,
        "windowMinutes": 10,
        "alarmMisses": 500,
    }
    assert limits["trackableCreations"] == {"attempts": 200, "windowMinutes": 60}
    assert limits["imageUploads"] == {"attempts": 500, "windowMinutes": 1440}
    assert limits["secretRotations"] == {"attempts": 10, "windowMinutes": 60}
    assert limits["accountExports"] == {"attempts": 3, "windowMinutes": 1440}
    assert limits["maxFormParts"] == 1000
    assert limits["maxFormFieldBytes"] == 500_000


def test_status_names_the_release_of_pyproject(api):
    release = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert status(api)["serviceVersion"] == release


def test_the_document_describes_the_service_version_in_the_status(api):
    schemas = api.get("/api/openapi.json").get_json()["components"]["schemas"]
    field = schemas["Status"]["properties"]["serviceVersion"]
    assert field["type"] == "string"
    assert field["description"]
    assert field["example"] == "0.2.0"


def test_public_ip_keeps_requested_mode_and_third_party_maps(api):
    body = status(api)
    assert body["requestedExperienceMode"] == "latest_and_greatest"
    assert body["effectiveExperienceMode"] == "latest_and_greatest"
    assert body["thirdPartyBrowserCallsAllowed"] is True
    assert body["hostedMapsForcedByPrivacy"] is False
    assert body["openStreetMapAllowed"] is True
    assert body["preferredMapSource"] == "openstreetmap"
    assert body["requestedMapSource"] is None


@pytest.mark.parametrize("ip", ["10.1.2.3", "192.168.0.10", "127.0.0.1", "::1", "fd00::1", ""])
def test_private_local_or_unresolved_ip_forces_no_third_parties(api, ip):
    body = status(api, ip=ip)
    assert body["requestedExperienceMode"] == "latest_and_greatest"
    assert body["effectiveExperienceMode"] == "no_3rd_parties"
    assert body["thirdPartyBrowserCallsAllowed"] is False
    assert body["hostedMapsForcedByPrivacy"] is True
    assert body["preferredMapSource"] == "hosted_maps"
    assert body["openStreetMapAllowed"] is False
    assert body["googleMapsAllowed"] is False


def test_forwarded_header_from_untrusted_peer_is_ignored(api):
    spoofed = {"X-Forwarded-For": "8.8.4.4"}
    body = status(api, ip="10.0.0.7", headers=spoofed)
    assert body["effectiveExperienceMode"] == "no_3rd_parties"


class TestTrustedProxy:
    @pytest.fixture
    def app_overrides(self):
        return {"TRUSTED_PROXIES": ["10.0.0.0/8"]}

    def test_client_address_comes_from_forwarded_header(self, api):
        body = status(api, ip="10.0.0.2", headers={"X-Forwarded-For": PUBLIC_IP})
        assert body["effectiveExperienceMode"] == "latest_and_greatest"

    def test_rightmost_untrusted_hop_wins_over_client_supplied_entries(self, api):
        forwarded = {"X-Forwarded-For": f"{PUBLIC_IP}, 192.168.1.5"}
        body = status(api, ip="10.0.0.2", headers=forwarded)
        assert body["effectiveExperienceMode"] == "no_3rd_parties"

    def test_proxy_hops_are_skipped(self, api):
        forwarded = {"X-Forwarded-For": f"{PUBLIC_IP}, 10.0.0.9"}
        body = status(api, ip="10.0.0.2", headers=forwarded)
        assert body["effectiveExperienceMode"] == "latest_and_greatest"


def test_visitor_cookie_sets_requested_mode(api):
    body = status(api, cookies={"experience_mode": "no_3rd_parties"})
    assert body["requestedExperienceMode"] == "no_3rd_parties"
    assert body["effectiveExperienceMode"] == "no_3rd_parties"
    assert body["usesVisitorExperienceModePreferenceCookie"] is True
    assert body["usesSavedExperienceModePreference"] is False
    assert body["hostedMapsForcedByPrivacy"] is True


def test_unknown_cookie_value_is_ignored(api):
    body = status(api, cookies={"experience_mode": "everything"})
    assert body["requestedExperienceMode"] == "latest_and_greatest"
    assert body["usesVisitorExperienceModePreferenceCookie"] is False


def test_saved_preference_beats_visitor_cookie(api):
    user = make_user(experience_mode="latest_and_greatest", map_source="hosted_maps")
    body = status(api.as_user(user), cookies={"experience_mode": "no_3rd_parties"})
    assert body["requestedExperienceMode"] == "latest_and_greatest"
    assert body["usesSavedExperienceModePreference"] is True
    assert body["usesVisitorExperienceModePreferenceCookie"] is False
    assert body["requestedMapSource"] == "hosted_maps"
    assert body["usesSavedMapPreference"] is True
    assert body["preferredMapSource"] == "hosted_maps"


def test_saved_preference_cannot_lift_privacy_rules(api):
    user = make_user(experience_mode="latest_and_greatest")
    body = status(api.as_user(user), ip="192.168.1.1")
    assert body["effectiveExperienceMode"] == "no_3rd_parties"


def test_map_cookie_for_unconfigured_provider_falls_back(api):
    body = status(api, cookies={"map_source": "google"})
    assert body["requestedMapSource"] == "google"
    assert body["usesVisitorMapPreferenceCookie"] is True
    assert body["googleMapsConfigured"] is False
    assert body["preferredMapSource"] == "openstreetmap"


class TestGoogleConfigured:
    @pytest.fixture
    def app_overrides(self):
        return {"GOOGLE_MAPS_API_KEY": "test-key"}

    def test_configured_provider_is_preferred_when_requested(self, api):
        body = status(api, cookies={"map_source": "google"})
        assert body["googleMapsConfigured"] is True
        assert body["googleMapsAllowed"] is True
        assert body["preferredMapSource"] == "google"

    def test_privacy_rules_still_force_hosted_tiles(self, api):
        body = status(api, ip="10.0.0.1", cookies={"map_source": "google"})
        assert body["googleMapsAllowed"] is False
        assert body["preferredMapSource"] == "hosted_maps"


def test_hosted_maps_are_configured_without_a_tile_folder(api, app):
    # The built-in base map serves tiles on a fresh machine.
    assert not app.config["MAP_TILE_ROOT"].exists()
    assert status(api)["hostedMapsConfigured"] is True
    assert api.get("/maps/tiles/0/0/0.png").status_code == 200


def test_hosted_tile_is_served_from_tile_folder(api, app):
    tile = app.config["MAP_TILE_ROOT"] / "3" / "4"
    tile.mkdir(parents=True)
    (tile / "2.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    response = api.get("/maps/tiles/3/4/2.png")
    assert response.status_code == 200
    assert response.mimetype == "image/png"
    assert response.get_data().startswith(b"\x89PNG")
    response.close()
    assert api.get("/maps/tiles/3/9/2.png").status_code == 404


def test_beta_android_metadata(api):
    body = api.get("/api/system/beta-android").get_json()
    assert set(body) >= {
        "displayVersion",
        "versionCode",
        "minimumCompatibleDisplayVersion",
        "minimumCompatibleVersionCode",
        "releaseNotes",
    }


def test_healthz_and_readyz(api):
    assert api.get("/healthz").get_json() == {"status": "ok"}
    ready = api.get("/readyz").get_json()
    assert ready["status"] == "ready"
    assert ready["jobs"]["waiting"] == 0  # the backlog: tests/platform/test_jobs.py


def test_readyz_is_503_problem_when_database_is_unreachable(database_url, tmp_path):
    from tests.conftest import make_test_app

    broken = make_test_app("postgresql://nobody@127.0.0.1:1/none", tmp_path)
    response = broken.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["dependencies"]["database"]["up"] is False
    with broken.app_context():
        db.engine.dispose()
