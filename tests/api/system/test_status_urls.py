"""Every address the system status and the Android beta metadata hand a client resolves:
a client that follows one gets a real answer, not a 404 (contract: System, Versioning).
So do the help addresses of other answers: the lookup's `helpUrl` for another system's
code and a refused link's `supportUrl` (contract: Trackables: lookup; External links)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import assert_problem
from tests.factories import make_user

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


# --- the help addresses of a lookup miss and a refused link ------------------------------

LOOKUP = "/api/trackables/lookup"
FOREIGN_CODES = "<h1>Codes of other tracking systems</h1>"
REFUSED_LINKS = "<h1>Why a link was refused</h1>"


def assert_help_page(api, address: str, heading: str) -> None:
    response = fetch(api, address)
    assert response.status_code == 200, f"{address} answers {response.status_code}"
    assert response.mimetype == "text/html"
    assert heading in response.get_data(as_text=True)


@pytest.mark.parametrize("code", ["TB1A2B3C", "gt5v10ab01"])  # another system's, a sister's
def test_a_foreign_code_miss_links_to_a_page_that_answers(api, code):
    answers = [api.post(LOOKUP, json={"code": code}), api.get(LOOKUP, query_string={"code": code})]
    for answer in answers:
        result = answer.get_json()
        assert result["found"] is False
        assert result["helpUrl"], result
        assert_help_page(api, result["helpUrl"], FOREIGN_CODES)


def test_the_entry_pages_miss_links_to_the_same_page(api):
    miss = api.get("/trackable/TB1A2B3C")
    assert miss.status_code == 404
    link = re.search(
        r'<a href="([^"]+)">Read more about codes of other services</a>',
        miss.get_data(as_text=True),
    )
    assert link is not None
    assert_help_page(api, link.group(1), FOREIGN_CODES)


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "http://127.0.0.1/", "https://a@example.org/"]
)
def test_a_refused_link_links_to_a_page_that_answers(api, url):
    member = api.as_user(make_user())
    refused = assert_problem(member.post("/api/external-links/verify", json={"url": url}), 400)
    assert_help_page(api, refused["supportUrl"], REFUSED_LINKS)


def test_a_link_refused_on_create_links_to_the_same_page(api):
    member = api.as_user(make_user())
    answer = member.post(
        "/api/notes/mine", json={"title": "Old oak", "externalLinkUrl": "http://127.0.0.1/"}
    )
    refused = assert_problem(answer, 400, code="link_verification_failed")
    assert_help_page(api, refused["supportUrl"], REFUSED_LINKS)


def test_the_help_addresses_are_pages_in_the_browser_language(api):
    result = api.post(LOOKUP, json={"code": "TB1A2B3C"}).get_json()
    member = api.as_user(make_user())
    refused = member.post("/api/external-links/verify", json={"url": "mailto:a@example.org"})
    for address in (result["helpUrl"], refused.get_json()["supportUrl"]):
        response = api.get(address, headers={"Accept-Language": "de-CH, en;q=0.5"})
        assert response.status_code == 200
        assert '<html lang="de">' in response.get_data(as_text=True)
        assert "Accept-Language" in response.headers.get("Vary", "")
