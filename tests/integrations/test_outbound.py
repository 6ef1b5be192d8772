"""The SSRF-safe fetcher: what it refuses before connecting, and what it reads from a real
local web server (127.0.0.1, admitted only through the tests-only allow_loopback)."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
import requests

from app.integrations import outbound
from app.integrations.addresses import blocked_reason
from app.integrations.html_title import extract_title
from app.integrations.outbound import (
    BlockedDestination,
    FetchFailed,
    InvalidUrl,
    OutboundSettings,
    UpstreamHttpError,
    fetch_page,
    parse_target,
)
from config import Config
from tests.hanging_peers import Trickler
from tests.integrations.local_site import Site, make_certificate

DEFAULTS = OutboundSettings()


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


@pytest.fixture
def local(site: Site) -> OutboundSettings:
    """Settings that let the local site stand in for the web."""
    return OutboundSettings(
        allow_loopback=True, allowed_ports=frozenset({80, 443, site.port}), timeout_seconds=3
    )


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection attempt fails the test: refusals must happen before connecting."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(requests.Session, "request", refuse)


def fake_dns(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> list[str]:
    """Replace the fetcher's resolver with a table; returns the names looked up."""
    lookups: list[str] = []

    def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        lookups.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ipaddress.ip_address(address) for address in table[host]]

    monkeypatch.setattr(outbound, "resolve_host", resolve)
    return lookups


# --- refused before connecting -----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.8.9.10/", "loopback"),
        ("http://localhost/", "loopback"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://169.254.10.10/", "link-local"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://100.100.100.200/", "cloud metadata"),
        ("http://168.63.129.16/", "cloud metadata"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://255.255.255.255/", "reserved"),
        ("http://198.18.0.1/", "reserved"),
    ],
)
def test_ipv4_destinations_that_are_not_public_are_refused(offline, url, reason):
    with pytest.raises(BlockedDestination, match=reason):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1]/", "loopback"),
        ("http://[::]/", "unspecified"),
        ("http://[::ffff:127.0.0.1]/", "loopback, inside an IPv6 address"),
        ("http://[::ffff:10.0.0.1]/", "private, inside an IPv6 address"),
        ("http://[::ffff:0:7f00:1]/", "loopback, inside an IPv6 address"),
        ("http://[64:ff9b::a9fe:a9fe]/", "cloud metadata, inside an IPv6 address"),
        ("http://[2002:7f00:1::1]/", "loopback, inside an IPv6 address"),
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "loopback, inside an IPv6 address"),
        ("http://[::127.0.0.1]/", "loopback, inside an IPv6 address"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fc00::1]/", "private"),
        ("http://[fd12:3456:789a::1]/", "private"),
        ("http://[fd00:ec2::254]/", "cloud metadata"),
        ("http://[ff02::1]/", "multicast"),
        ("http://[2001:db8::1]/", "reserved"),
        ("http://[::ffff:8.8.8.8]/", "reserved"),
    ],
)
def test_ipv6_destinations_that_are_not_public_are_refused(offline, url, reason):
    with pytest.raises(BlockedDestination, match=reason):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f000001/",
        "http://0x7f.0.0.1/",
        "http://127.1/",
        "http://127.0.1/",
        "http://127.0.0.1./",
    ],
)
def test_other_spellings_of_loopback_are_read_as_ipv4_and_refused(offline, url):
    assert parse_target(url, DEFAULTS).host == "127.0.0.1"
    with pytest.raises(BlockedDestination, match="loopback"):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    "url", ["http://1.2.3.4.5/", "http://08.0.0.1/", "http://256.0.0.1/", "http://example.123/"]
)
def test_hosts_ending_in_a_number_that_is_no_ipv4_address_are_invalid(offline, url):
    with pytest.raises(InvalidUrl):
        fetch_page(url, DEFAULTS)


def test_ipv6_loopback_forms_stay_refused_when_loopback_is_allowed(offline):
    settings = replace(DEFAULTS, allow_loopback=True)
    with pytest.raises(BlockedDestination, match="inside an IPv6 address"):
        fetch_page("http://[::ffff:127.0.0.1]/", settings)
    assert blocked_reason(ipaddress.ip_address("::1"), allow_loopback=True) is None


@pytest.mark.parametrize(
    "url",
    ["http://user@example.com/", "http://user:secret@example.com/", "http://example.com@10.0.0.1/"],
)
def test_user_info_in_urls_is_refused(offline, url):
    with pytest.raises(BlockedDestination, match="user name or password"):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<title>x</title>",
        "gopher://example.com/",
    ],
)
def test_schemes_other_than_http_and_https_are_refused(offline, url):
    with pytest.raises(BlockedDestination, match="Only http and https"):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    "url", ["http://example.com:8080/", "https://example.com:22/", "http://example.com:0/"]
)
def test_ports_outside_the_allow_list_are_refused(offline, url):
    with pytest.raises(BlockedDestination, match="port"):
        fetch_page(url, DEFAULTS)


def test_urls_over_2048_characters_are_refused(offline):
    url = "https://example.com/" + "a" * (2049 - len("https://example.com/"))
    with pytest.raises(InvalidUrl, match="longer than 2048"):
        fetch_page(url, DEFAULTS)


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("HTTP://Example.COM:80/a b?q=1&r=%41#top", "http://example.com/a%20b?q=1&r=A"),
        ("https://example.com:443", "https://example.com/"),
        ("https://Bücher.example/straße", "https://xn--bcher-kva.example/stra%C3%9Fe"),
        ("http://example.com./x", "http://example.com/x"),
        ("http://[0:0::FFFF:8.8.8.8]/", "http://[::ffff:808:808]/"),
    ],
)
def test_urls_are_normalized(url, normalized):
    assert parse_target(url, DEFAULTS).url == normalized


def test_a_name_resolving_to_a_private_address_is_refused(offline, monkeypatch):
    fake_dns(monkeypatch, {"intranet.example.com": ["10.1.2.3"]})
    with pytest.raises(BlockedDestination, match="private"):
        fetch_page("https://intranet.example.com/", DEFAULTS)


def test_every_resolved_address_must_be_public(offline, monkeypatch):
    fake_dns(monkeypatch, {"mixed.example.com": ["93.184.215.14", "2606:2800::1", "::1"]})
    with pytest.raises(BlockedDestination, match="loopback"):
        fetch_page("https://mixed.example.com/", DEFAULTS)


def test_a_name_that_does_not_resolve_fails(offline, monkeypatch):
    fake_dns(monkeypatch, {})
    with pytest.raises(FetchFailed, match="could not be resolved"):
        fetch_page("https://nowhere.example.com/", DEFAULTS)


def test_settings_from_config_never_allow_loopback():
    settings = OutboundSettings.from_config(vars(Config))
    assert settings.allow_loopback is False
    assert settings.allowed_ports == frozenset({80, 443})
    assert settings.max_redirects == 5


# --- against the local site ---------------------------------------------------------------


def test_a_page_title_is_read(site, local):
    page = fetch_page(site.url("/title"), local)
    assert (page.status, page.content_type, page.redirects) == (200, "text/html", 0)
    assert page.title == "Café & Friends — “Notes”"


def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(
    site, local, monkeypatch
):
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])  # a rebinding resolver
    lookups: list[str] = []

    def resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        lookups.append(host)
        return [ipaddress.ip_address(address) for address in next(answers)]

    system_lookups: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def recording_getaddrinfo(host, *args, **kwargs):
        system_lookups.append(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(outbound, "resolve_host", resolve)
    monkeypatch.setattr(socket, "getaddrinfo", recording_getaddrinfo)
    page = fetch_page(site.url("/title", host="rebind.example.com"), local)
    assert page.title.startswith("Café")
    assert lookups == ["rebind.example.com"]
    assert "rebind.example.com" not in system_lookups
    assert site.seen[-1] == ("/title", f"rebind.example.com:{site.port}")


@pytest.mark.parametrize("status", [404, 500])
def test_http_errors_carry_the_upstream_status(site, local, status):
    path = {404: "/missing", 500: "/broken"}[status]
    with pytest.raises(UpstreamHttpError) as caught:
        fetch_page(site.url(path), local)
    assert caught.value.status == status


def test_a_redirect_chain_is_followed_to_its_page(site, local):
    page = fetch_page(site.url("/redirect/5"), local)
    assert (page.title, page.redirects) == ("Café & Friends — “Notes”", 5)
    assert page.url == site.url("/title")


def test_more_redirects_than_allowed_fail(site, local):
    with pytest.raises(FetchFailed, match="more than 5 times"):
        fetch_page(site.url("/redirect/6"), local)


def test_an_endless_redirect_loop_fails(site, local):
    with pytest.raises(FetchFailed, match="more than 5 times"):
        fetch_page(site.url("/loop"), local)


def test_a_redirect_without_location_fails(site, local):
    with pytest.raises(FetchFailed, match="without saying where"):
        fetch_page(site.url("/no-location"), local)


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/to-private", "private"), ("/to-metadata", "cloud metadata"), ("/to-ftp", "http and https")],
)
def test_each_redirect_is_checked_again(site, local, path, reason):
    with pytest.raises(BlockedDestination, match=reason):
        fetch_page(site.url(path), local)


def test_a_redirect_to_a_name_resolving_to_a_private_address_is_refused(site, local, monkeypatch):
    fake_dns(monkeypatch, {"intranet.example.com": ["192.168.0.10"]})
    with pytest.raises(BlockedDestination, match="private"):
        fetch_page(site.url("/to-named"), local)


def test_a_huge_page_is_read_only_up_to_its_title(site, local):
    page = fetch_page(site.url("/huge"), local)
    assert page.title == "Big page"
    assert page.bytes_read < 64 * 1024


def test_a_huge_page_without_title_is_read_only_up_to_the_byte_cap(site, local):
    page = fetch_page(site.url("/huge-untitled"), replace(local, max_bytes=100_000))
    assert (page.title, page.bytes_read) == ("", 100_000)


def test_a_slow_answer_times_out(site, local):
    started = time.monotonic()
    with pytest.raises(FetchFailed, match="too long"):
        fetch_page(site.url("/slow"), replace(local, timeout_seconds=0.5))
    assert time.monotonic() - started < 2


def test_a_body_that_trickles_in_is_cut_off_at_the_deadline(site, local):
    started = time.monotonic()
    page = fetch_page(site.url("/drip"), replace(local, timeout_seconds=0.5))
    assert (page.status, page.title) == (200, "")
    assert time.monotonic() - started < 1.5


def test_headers_that_trickle_in_are_cut_off_at_the_deadline(local):
    """A server sending its status line a byte every 0.2 s: each read gets a byte within
    the socket's timeout, so only the one deadline for the whole fetch ends it."""
    slow = Trickler(interval=0.2)
    settings = replace(local, allowed_ports=frozenset({slow.port}), timeout_seconds=0.6)
    try:
        started = time.monotonic()
        with pytest.raises(outbound.TimedOut, match="too long"):
            fetch_page(f"http://127.0.0.1:{slow.port}/", settings)
        assert time.monotonic() - started < 1.2
        started = time.monotonic()
        with pytest.raises(outbound.TimedOut):
            outbound.post(f"http://127.0.0.1:{slow.port}/", b"{}", {}, settings)
        assert time.monotonic() - started < 1.2
    finally:
        slow.close()


def test_a_resolver_that_hangs_is_left_behind_at_the_deadline(offline, monkeypatch):
    def hang(host: str, port: int) -> list:
        time.sleep(2)
        return [ipaddress.ip_address("93.184.215.14")]

    monkeypatch.setattr(outbound, "resolve_host", hang)
    started = time.monotonic()
    with pytest.raises(outbound.Unresolvable, match="could not be resolved"):
        fetch_page("http://slow-dns.example.org/", replace(DEFAULTS, timeout_seconds=0.3))
    assert time.monotonic() - started < 1


def test_a_closed_port_fails_as_unreachable(local):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = replace(local, allowed_ports=frozenset({port}))
    with pytest.raises(FetchFailed, match="could not be reached"):
        fetch_page(f"http://127.0.0.1:{port}/", settings)


def test_a_non_html_page_is_a_working_link_without_title(site, local):
    page = fetch_page(site.url("/pdf"), local)
    assert (page.content_type, page.title, page.bytes_read) == ("application/pdf", "", 0)


def test_the_charset_comes_from_the_content_type_header(site, local):
    assert fetch_page(site.url("/latin1"), local).title == "Café “Zoo”"


def test_the_charset_comes_from_a_meta_tag(site, local):
    assert fetch_page(site.url("/meta-charset"), local).title == "Привет"


def test_a_long_title_is_capped(site, local):
    title = fetch_page(site.url("/long-title"), local).title
    assert len(title) == 200
    assert title.endswith("word…")


def test_a_page_without_title_gives_an_empty_title(site, local):
    assert fetch_page(site.url("/no-title"), local).title == ""


# --- title extraction --------------------------------------------------------------------


def test_titles_inside_svg_are_skipped():
    assert extract_title(b"<svg><title>icon</title></svg><title>Real</title>") == "Real"


def test_control_characters_leave_the_title():
    assert extract_title(b"<title>A\x00B\x1bC\x7f</title>") == "A B C"


def test_an_unknown_or_non_text_charset_falls_back_to_utf8():
    body = "<title>Grüße</title>".encode()
    assert extract_title(body, "base64") == extract_title(body, "no-such-charset") == "Grüße"


def test_a_byte_order_mark_wins_over_the_header():
    body = "<title>Ölçü</title>".encode("utf-16")
    assert extract_title(body, "iso-8859-1") == "Ölçü"


# --- HTTPS to a pinned address ------------------------------------------------------------

TLS_HOST = "secure.example.com"


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, str]]:
    made = make_certificate(tmp_path_factory.mktemp("tls"), TLS_HOST)
    if made is None:
        pytest.skip("openssl is not installed")
    cert, key = made
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with Site(context) as running:
        yield running, str(cert)


def test_https_to_a_pinned_address_keeps_sni_and_certificate_checks(tls_site, monkeypatch):
    site, ca_bundle = tls_site
    fake_dns(monkeypatch, {TLS_HOST: ["127.0.0.1"]})
    settings = OutboundSettings(
        allow_loopback=True, allowed_ports=frozenset({site.port}), ca_bundle=ca_bundle
    )
    page = fetch_page(site.url("/title", host=TLS_HOST), settings)
    assert page.title.startswith("Café")
    assert site.sni_names[-1] == TLS_HOST
    assert site.seen[-1] == ("/title", f"{TLS_HOST}:{site.port}")


def test_https_refuses_a_certificate_for_another_name(tls_site, monkeypatch):
    site, ca_bundle = tls_site
    fake_dns(monkeypatch, {"other.example.com": ["127.0.0.1"]})
    settings = OutboundSettings(
        allow_loopback=True, allowed_ports=frozenset({site.port}), ca_bundle=ca_bundle
    )
    with pytest.raises(FetchFailed, match="certificate"):
        fetch_page(site.url("/title", host="other.example.com"), settings)


def test_https_refuses_an_untrusted_certificate(tls_site, monkeypatch):
    site, _ = tls_site
    fake_dns(monkeypatch, {TLS_HOST: ["127.0.0.1"]})
    settings = OutboundSettings(allow_loopback=True, allowed_ports=frozenset({site.port}))
    with pytest.raises(FetchFailed, match="certificate"):
        fetch_page(site.url("/title", host=TLS_HOST), settings)
