"""Every address the system status and the Android beta metadata hand a client resolves:
a client that follows one gets a real answer, not a 404 (contract: System, Versioning)."""

from __future__ import annotations

from typing import Any

import pytest

TEMPLATE_VALUES = {"{z}": "0", "{x}": "0", "{y}": "0"}


def addresses(body: Any, where: str = "") -> list[tuple[str, str]]:
    """(field, address) of every string in `body` that is a path or a URL."""
    found: list[tuple[str, str]] = []
    if isinstance(body, dict):
        for key, value in body.items():
            found += addresses(value, f"{where}.{key}" if where else key)
    elif isinstance(body, list):
        for index, value in enumerate(body):
            found += addresses(value, f"{where}[{index}]")
    elif isinstance(body, str) and body.startswith(("/", "http://", "https://")):
        found.append((where, body))
    return found


def fetch(api, address: str):
    for placeholder, value in TEMPLATE_VALUES.items():
        address = address.replace(placeholder, value)
    assert address.startswith("/"), f"{address}: not served by this app"
    return api.get(address)


@pytest.mark.parametrize("route", ["/api/system/status", "/api/system/beta-android"])
def test_every_address_in_the_body_answers_200(api, route):
    body = api.get(route).get_json()
    found = addresses(body)
    assert found, "no address in the body"
    for field, address in found:
        response = fetch(api, address)
        assert response.status_code == 200, f"{field}: {address} answers {response.status_code}"


def test_the_beta_page_address_is_the_page_in_the_browser_language(api):
    address = api.get("/api/system/status").get_json()["androidBetaPageUrl"]
    response = api.get(address, headers={"Accept-Language": "de-CH, en;q=0.5"})
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert '<html lang="de">' in response.get_data(as_text=True)
    assert "Accept-Language" in response.headers.get("Vary", "")


class TestConfiguredAddresses:
    @pytest.fixture
    def app_overrides(self):
        return {
            "ANDROID_BETA_PAGE_URL": "/de/beta/android",
            "ANDROID_BETA_DOWNLOAD_URL": "/beta/android",
        }

    def test_configured_addresses_are_checked_too(self, api):
        found = dict(addresses(api.get("/api/system/beta-android").get_json()))
        assert found == {"downloadUrl": "/beta/android", "betaPageUrl": "/de/beta/android"}
        for address in found.values():
            assert fetch(api, address).status_code == 200
