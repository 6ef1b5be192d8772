"""POST /api/external-links/verify (contract: External links), against a local web server
that the tests-only OUTBOUND_ALLOW_LOOPBACK setting lets stand in for the web."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import assert_problem
from tests.factories import make_user
from tests.integrations.local_site import Site

VERIFY = "/api/external-links/verify"
SUPPORT_URL = "/help/external-links"
TITLE = "Café & Friends — “Notes”"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


@pytest.fixture
def app_overrides(site: Site) -> dict[str, Any]:
    return {
        "OUTBOUND_ALLOW_LOOPBACK": True,
        "OUTBOUND_ALLOWED_PORTS": [80, 443, site.port],
        "OUTBOUND_TIMEOUT_SECONDS": 1.0,
    }


@pytest.fixture
def member(api):
    return api.as_user(make_user())


def verify(client, url: Any) -> Any:
    return client.post(VERIFY, json={"url": url})


def rejected(response: Any) -> dict[str, Any]:
    body = assert_problem(response, 400)
    assert body["supportUrl"] == SUPPORT_URL
    return body


def test_verify_returns_the_normalized_url_and_the_page_title(member, site):
    response = verify(member, f"  HTTP://127.0.0.1:{site.port}/title#section  ")
    assert response.status_code == 200
    assert response.get_json() == {
        "normalizedUrl": f"http://127.0.0.1:{site.port}/title",
        "suggestedDescription": TITLE,
        "supportUrl": SUPPORT_URL,
    }


def test_verify_follows_redirects_but_keeps_the_submitted_url(member, site):
    response = verify(member, site.url("/redirect/2"))
    assert response.status_code == 200
    body = response.get_json()
    assert (body["normalizedUrl"], body["suggestedDescription"]) == (site.url("/redirect/2"), TITLE)


def test_verify_of_a_page_without_title_suggests_an_empty_description(member, site):
    response = verify(member, site.url("/pdf"))
    assert response.status_code == 200
    assert response.get_json()["suggestedDescription"] == ""


def test_verify_without_a_token_is_401(api, site):
    response = verify(api, site.url("/title"))
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("path", "status"), [("/missing", 404), ("/broken", 500)])
def test_an_http_error_is_rejected_with_the_upstream_status(member, site, path, status):
    body = rejected(verify(member, site.url(path)))
    assert body["upstreamStatusCode"] == status
    assert str(status) in body["detail"]


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("http://10.0.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://user@example.com/", "user name or password"),
        ("javascript:alert(1)", "Only http and https"),
        ("ftp://example.com/", "Only http and https"),
        ("https://example.com:8443/", "port 8443"),
        ("", "Enter a web address"),
        ("https://example.com/" + "a" * 2048, "longer than 2048"),
    ],
)
def test_a_link_that_is_not_allowed_is_rejected_without_upstream_status(member, url, detail):
    body = rejected(verify(member, url))
    assert detail in body["detail"]
    assert "upstreamStatusCode" not in body


def test_a_redirect_to_a_private_address_is_rejected(member, site):
    body = rejected(verify(member, site.url("/to-private")))
    assert "private" in body["detail"]


def test_an_endless_redirect_loop_is_rejected(member, site):
    body = rejected(verify(member, site.url("/loop")))
    assert "more than 5 times" in body["detail"]


def test_a_slow_page_is_rejected_as_timed_out(member, site):
    body = rejected(verify(member, site.url("/slow")))
    assert "too long" in body["detail"]


def test_a_missing_url_field_is_a_validation_error(member):
    body = assert_problem(member.post(VERIFY, json={}), 400)
    assert "url" in body["errors"]


def test_verify_is_rate_limited_per_client(app, member, site):
    app.config["RATE_LIMIT_LINK_VERIFY"] = "2 per minute"
    for _ in range(2):
        assert verify(member, site.url("/title")).status_code == 200
    response = verify(member, site.url("/title"))
    assert_problem(response, 429)
    assert "Retry-After" in response.headers


def test_the_verify_limit_is_published_in_the_status(app, member):
    app.config["RATE_LIMIT_LINK_VERIFY"] = "3 per minute"
    limits = member.get("/api/system/status").get_json()["limits"]
    assert limits["rateLimits"]["linkVerify"] == "3 per minute"
