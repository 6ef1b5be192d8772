"""IP location and reverse geocoding through HTTP, on the shipped offline data."""

from __future__ import annotations

import pytest

LOCALITY_FIELDS = {
    "resolved",
    "sourceKind",
    "coordinateSourceProvider",
    "localitySourceProvider",
    "latitude",
    "longitude",
    "city",
    "stateOrProvince",
    "country",
    "isApproximate",
    "accuracyRadiusKm",
    "failureReason",
}
IP_FIELDS = LOCALITY_FIELDS | {"clientIpAddress", "lookupIpAddress", "usedDevelopmentFallbackIp"}


def ip_location(api, ip):
    response = api.get("/api/system/ip-location", environ_base={"REMOTE_ADDR": ip})
    assert response.status_code == 200
    return response.get_json()


def locality(api, **query):
    response = api.get("/api/system/coordinate-locality", query_string=query)
    assert response.status_code == 200
    return response.get_json()


def test_public_ip_is_located_offline_at_country_level(api):
    body = ip_location(api, "8.8.8.8")
    assert set(body) == IP_FIELDS
    assert body["resolved"] is True
    assert body["sourceKind"] == "IpAddress"
    assert body["country"] == "United States"
    assert body["clientIpAddress"] == body["lookupIpAddress"] == "8.8.8.8"
    assert body["usedDevelopmentFallbackIp"] is False
    assert body["isApproximate"] is True
    assert body["latitude"] is not None
    assert body["failureReason"] == ""


@pytest.mark.parametrize("ip", ["10.0.0.1", "127.0.0.1", "192.168.2.3", "::1"])
def test_private_or_local_ip_is_a_200_with_a_reason(api, ip):
    body = ip_location(api, ip)
    assert body["resolved"] is False
    assert body["clientIpAddress"] == ip
    assert body["failureReason"]
    assert body["latitude"] is None


class TestDevelopmentFallback:
    @pytest.fixture
    def app_overrides(self):
        return {"DEV_FALLBACK_IP": "8.8.8.8"}

    def test_local_ip_uses_the_configured_fallback(self, api):
        body = ip_location(api, "127.0.0.1")
        assert body["usedDevelopmentFallbackIp"] is True
        assert body["clientIpAddress"] == "127.0.0.1"
        assert body["lookupIpAddress"] == "8.8.8.8"
        assert body["resolved"] is True


def test_coordinates_are_named_by_the_nearest_town(api):
    body = locality(api, latitude="52.52", longitude="13.405")
    assert set(body) == LOCALITY_FIELDS
    assert body["resolved"] is True
    assert body["sourceKind"] == "Coordinates"
    assert body["city"] == "Berlin"
    assert body["country"] == "Germany"
    assert body["failureReason"] == ""


def test_point_far_from_any_town_is_not_named(api):
    body = locality(api, latitude="30.0", longitude="-40.0")
    assert body["resolved"] is False
    assert body["city"] == ""
    assert body["failureReason"] == "no-locality-nearby"


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"latitude": "52.5"},
        {"latitude": "abc", "longitude": "13.4"},
        {"latitude": "91", "longitude": "13.4"},
        {"latitude": "52.5", "longitude": "-181"},
        {"latitude": "NaN", "longitude": "13.4"},
        {"latitude": "52.5", "longitude": "Infinity"},
    ],
)
def test_invalid_coordinates_are_a_200_with_invalid_coordinates(api, query):
    body = locality(api, **query)
    assert body["resolved"] is False
    assert body["failureReason"] == "invalid-coordinates"
