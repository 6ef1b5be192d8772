"""The link rules other areas call: normalization and revalidation on create and update."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.integrations.outbound import BlockedDestination, OutboundSettings
from app.services.shared.links import LinkVerificationFailed, normalize_link, revalidate_link
from tests.integrations.local_site import Site


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


@pytest.fixture
def app_overrides(site: Site) -> dict[str, Any]:
    return {"OUTBOUND_ALLOW_LOOPBACK": True, "OUTBOUND_ALLOWED_PORTS": [80, 443, site.port]}


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("example.com/page?q=1", "https://example.com/page?q=1"),
        ("  Example.com  ", "https://example.com/"),
        ("//example.com/x", "https://example.com/x"),
        ("example.com:443/x", "https://example.com/x"),
        ("https://EXAMPLE.com/Path#frag", "https://example.com/Path"),
    ],
)
def test_normalize_link_adds_https_to_a_bare_host(text, normalized):
    assert normalize_link(text, OutboundSettings()) == normalized


@pytest.mark.parametrize("text", ["mailto:someone@example.com", "javascript:void(0)", "data:,x"])
def test_normalize_link_keeps_other_schemes_so_they_are_refused(text):
    with pytest.raises(BlockedDestination, match="Only http and https"):
        normalize_link(text, OutboundSettings())


@pytest.mark.parametrize("url", [None, "", "   "])
def test_revalidate_without_a_link_stores_nothing(app, url):
    assert revalidate_link(url, "kept?") == (None, "")


def test_revalidate_fills_a_blank_description_from_the_page_title(app, site):
    url, description = revalidate_link(site.url("/title"), "  ")
    assert (url, description) == (site.url("/title"), "Café & Friends — “Notes”")


def test_revalidate_keeps_a_given_description(app, site):
    assert revalidate_link(site.url("/title#x"), " Our café ") == (site.url("/title"), "Our café")


def test_revalidate_rejects_a_broken_link_with_the_upstream_status(app, site):
    with pytest.raises(LinkVerificationFailed) as caught:
        revalidate_link(site.url("/missing"), "")
    assert (caught.value.status, caught.value.upstream_status_code) == (400, 404)
    assert caught.value.extra["supportUrl"] == "/help/external-links"


def test_revalidate_rejects_a_private_address(app):
    with pytest.raises(LinkVerificationFailed, match="private"):
        revalidate_link("http://192.168.0.1/", "router")
