"""Offline IP location and reverse geocoding behind two small provider interfaces.

IP locators (`ip_locator`, GEOIP_PROVIDER): ``builtin`` (geoip2fast, country level, shipped
in a package) or ``maxmind`` (a MaxMind DB file at GEOIP_DATABASE_PATH). Reverse geocoders
(`reverse_geocoder`, GEOCODER_PROVIDER): ``builtin`` (the GeoNames index of
`app.integrations.geo_data`) or ``http`` (a Nominatim-compatible endpoint). Country names
are GeoNames' English ones on every route, so both routes name a country the same way.
A failed lookup is a `GeoResult` with a `failure_reason` and no coordinates or names: no
function here raises for bad input; the factories raise ValueError for bad settings.
This module knows nothing of Flask or of the application.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests

from app.integrations.geo_data import GeoIndex, country_names, get_index

logger = logging.getLogger(__name__)

SOURCE_IP = "IpAddress"
SOURCE_COORDINATES = "Coordinates"

# Failure reasons. invalid-ip: not a string holding an IP address; local-ip: loopback; private-ip:
# private use, unique-local, link-local, carrier-grade NAT, local-use NAT64; reserved-ip: any other
# special-purpose address, and IPv6 outside 2000::/3 (see _IPV4_RULES, _IPV6_RULES); not-found: a
# public address the IP data has no country for (or only a continent); invalid-coordinates:
# latitude/longitude not finite numbers within range (bools and strings refused);
# no-locality-nearby: no place within the maximum distance, or the HTTP provider found nothing;
# provider-unavailable: the HTTP geocoder failed (network error, timeout, non-200, malformed JSON);
# lookup-error: an unexpected failure inside an offline provider (logged).
INVALID_IP = "invalid-ip"
LOCAL_IP = "local-ip"
PRIVATE_IP = "private-ip"
RESERVED_IP = "reserved-ip"
NOT_FOUND = "not-found"
INVALID_COORDINATES = "invalid-coordinates"
NO_LOCALITY_NEARBY = "no-locality-nearby"
PROVIDER_UNAVAILABLE = "provider-unavailable"
LOOKUP_ERROR = "lookup-error"

GEOIP2FAST_DATA_FILE = "geoip2fast-ipv6.dat.gz"  # country data for IPv4 and IPv6
HTTP_TIMEOUT_SECONDS = 3.0
HTTP_USER_AGENT = "location-notes-service (reverse geocoding)"
_MAX_IP_TEXT_LENGTH = 100

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class GeoResult:
    """The outcome of an IP lookup or a reverse geocoding, resolved or not."""

    resolved: bool
    source_kind: str  # "IpAddress" for IP lookups, "Coordinates" for reverse geocoding
    coordinate_source_provider: str  # "geoip2fast", "maxmind", "request" ("" when unresolved)
    locality_source_provider: str  # "geoip2fast", "maxmind", "geonames", "http" (or "")
    latitude: float | None
    longitude: float | None
    city: str
    state_or_province: str
    country: str  # country NAME, e.g. "Germany"
    is_approximate: bool
    accuracy_radius_km: float | None
    failure_reason: str  # "" on success


class IpLocator(Protocol):
    """Locates an IP address; never raises for bad input."""

    name: str

    def locate(self, ip: str) -> GeoResult:
        """The location of `ip`, or an unresolved result with a failure reason."""
        ...


class ReverseGeocoder(Protocol):
    """Names the place at a coordinate; never raises for bad input."""

    name: str

    def reverse(self, latitude: float, longitude: float) -> GeoResult:
        """The locality at the point, or an unresolved result with a failure reason."""
        ...


@dataclass(frozen=True)
class GeoSettings:
    """Plain provider settings (mirrors the GEOIP_* and GEOCODER_* configuration)."""

    geoip_provider: str = "builtin"  # "builtin" | "maxmind"
    geoip_database_path: str = ""  # a MaxMind or DB-IP .mmdb file for "maxmind"
    geocoder_provider: str = "builtin"  # "builtin" | "http"
    geocoder_http_url: str = ""  # e.g. a Nominatim-compatible reverse endpoint
    geocoder_max_distance_km: float = 50.0
    cache_dir: str = ""  # where the GeoNames index is cached; empty: built in memory


def unresolved(source_kind: str, failure_reason: str) -> GeoResult:
    """An unresolved result: no providers, coordinates or names, only the reason."""
    return GeoResult(
        resolved=False,
        source_kind=source_kind,
        coordinate_source_provider="",
        locality_source_provider="",
        latitude=None,
        longitude=None,
        city="",
        state_or_province="",
        country="",
        is_approximate=False,
        accuracy_radius_km=None,
        failure_reason=failure_reason,
    )


# ----------------------------------------------------------------------------- validation


def _networks(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


_IPV4_RULES = (
    (_networks("127.0.0.0/8"), LOCAL_IP),
    (
        _networks("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"),
        PRIVATE_IP,
    ),
    (_networks("169.254.0.0/16"), PRIVATE_IP),
    (
        _networks(
            "0.0.0.0/8",  # "this network", including the unspecified address
            "192.0.0.0/24",  # IETF protocol assignments
            "192.0.2.0/24",  # documentation (TEST-NET-1..3)
            "198.51.100.0/24",
            "203.0.113.0/24",
            "198.18.0.0/15",  # benchmarking
            "192.88.99.0/24",  # deprecated 6to4 relay anycast
            "224.0.0.0/4",  # multicast
            "240.0.0.0/4",  # reserved, including the limited broadcast address
        ),
        RESERVED_IP,
    ),
)
_IPV6_RULES = (
    (_networks("::1/128"), LOCAL_IP),
    (_networks("fc00::/7", "fe80::/10", "fec0::/10", "64:ff9b:1::/48"), PRIVATE_IP),
    (
        _networks(
            "::/128",  # unspecified
            "100::/64",  # discard-only
            "2001::/23",  # IETF protocol assignments, including Teredo 2001::/32
            "2001:db8::/32",  # documentation
            "3fff::/20",  # documentation
            "ff00::/8",  # multicast
        ),
        RESERVED_IP,
    ),
)
_IPV6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


def classify_ip(ip: object) -> tuple[IPAddress | None, str]:
    """(address to look up, "") for a public address, else (address or None, failure reason).

    IPv6 zone identifiers are dropped; an IPv4 address embedded in an IPv4-mapped, NAT64 or
    6to4 IPv6 address is returned (and judged) as the IPv4 address.
    """
    if not isinstance(ip, str) or len(ip) > _MAX_IP_TEXT_LENGTH:
        return None, INVALID_IP
    try:
        address: IPAddress = ipaddress.ip_address(ip.strip())
    except ValueError:
        return None, INVALID_IP
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(int(address))  # drops a %zone
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64_WELL_KNOWN:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        elif address.sixtofour is not None:
            address = address.sixtofour
    rules = _IPV4_RULES if isinstance(address, ipaddress.IPv4Address) else _IPV6_RULES
    for networks, reason in rules:
        if any(address in network for network in networks):
            return address, reason
    if isinstance(address, ipaddress.IPv6Address) and address not in _IPV6_GLOBAL_UNICAST:
        return address, RESERVED_IP
    return address, ""


def is_public_ip(ip: str) -> bool:
    """Whether `ip` is a publicly routable address worth locating (see `classify_ip`).

    False for private, loopback, link-local, carrier-grade NAT, reserved, multicast,
    unspecified, documentation and unparsable input, also when wrapped in IPv6.
    """
    return classify_ip(ip)[1] == ""


def _finite_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def valid_coordinates(latitude: object, longitude: object) -> bool:
    """Whether these are finite numbers (not bools or strings) within +-90 and +-180."""
    lat, lon = _finite_number(latitude), _finite_number(longitude)
    return lat is not None and lon is not None and -90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0


# GeoNames' English name wherever the ISO code is known (so "Turkey" where MaxMind data says
# "Türkiye").
def _country_name(iso: str, fallback: str = "") -> str:
    return country_names().get(iso.upper(), "") or fallback.strip()


# ----------------------------------------------------------------------------- IP locators


class _CountryDatabase(Protocol):
    def lookup(self, ipaddr: str) -> Any: ...


_GEOIP2FAST_LOCK = threading.Lock()
_geoip2fast: _CountryDatabase | None = None


def _load_geoip2fast() -> _CountryDatabase:
    """The process-wide GeoIP2Fast database (it keeps its data in module globals).

    Importing geoip2fast sets PYTHONWARNINGS and PYTHONIOENCODING in os.environ; the
    environment is restored so that the service's own subprocesses are unaffected.
    """
    global _geoip2fast
    with _GEOIP2FAST_LOCK:
        if _geoip2fast is None:
            saved = dict(os.environ)
            try:
                import geoip2fast
                from geoip2fast import GeoIP2Fast
            finally:
                for key in set(os.environ) - set(saved):
                    del os.environ[key]
                for key, value in saved.items():
                    if os.environ.get(key) != value:
                        os.environ[key] = value
            data_file = Path(geoip2fast.__file__).parent / GEOIP2FAST_DATA_FILE
            _geoip2fast = GeoIP2Fast(geoip2fast_data_file=str(data_file))
        return _geoip2fast


# Coordinates are the country's centre of population from the GeoNames index; accuracy_radius_km is
# the radius of a disc with the country's area (500 km when GeoNames has no area); city and state
# are empty. Countries without any GeoNames city of 15,000 (Antarctica, Bouvet Island, ...) resolve
# with the name only, without coordinates.
class BuiltinIpLocator:
    """Country-level IP location from geoip2fast's shipped data, offline."""

    name = "geoip2fast"

    def __init__(self, index: GeoIndex, database: _CountryDatabase | None = None) -> None:
        """`index` gives country names and centres; `database` defaults to geoip2fast."""
        self._index = index
        self._database = database if database is not None else _load_geoip2fast()

    def locate(self, ip: str) -> GeoResult:
        """Country, centre of population and country-sized radius; never raises."""
        address, reason = classify_ip(ip)
        if reason or address is None:
            return unresolved(SOURCE_IP, reason or INVALID_IP)
        try:
            detail = self._database.lookup(str(address))
            code = str(getattr(detail, "country_code", "") or "")
            if not code:  # geoip2fast's code for an internal error (the IP is valid)
                return unresolved(SOURCE_IP, LOOKUP_ERROR)
            # "--" (not found or special), or a code GeoNames does not know: MaxMind's
            # continent-level pseudo-countries "EU" and "AP", geoip2fast's "ASIA"
            country = None if getattr(detail, "is_private", False) else self._index.country(code)
        except Exception:
            logger.exception("geoip2fast lookup failed")
            return unresolved(SOURCE_IP, LOOKUP_ERROR)
        if country is None or not country.name:
            return unresolved(SOURCE_IP, NOT_FOUND)
        return GeoResult(
            resolved=True,
            source_kind=SOURCE_IP,
            coordinate_source_provider=self.name,
            locality_source_provider=self.name,
            latitude=country.latitude,
            longitude=country.longitude,
            city="",
            state_or_province="",
            country=country.name,
            is_approximate=True,
            accuracy_radius_km=country.radius_km if country.latitude is not None else None,
            failure_reason="",
        )


class MmdbReader(Protocol):
    """The part of `maxminddb.Reader` this module uses."""

    def get(self, ip_address: str) -> Any:
        """The record for the address, or None."""
        ...

    def metadata(self) -> Any:
        """The database metadata (has `database_type`)."""
        ...


def _english_name(block: object) -> str:
    names = block.get("names") if isinstance(block, dict) else None
    if not isinstance(names, dict):
        return ""
    name = names.get("en") or next(iter(names.values()), "")
    return name.strip() if isinstance(name, str) else ""


# Reads MaxMind GeoLite2/GeoIP2 and DB-IP Lite, City or Country: English city, first subdivision and
# country names, location and accuracy_radius. A record without a location falls back to the
# GeoNames country centre and radius.
class MaxMindIpLocator:
    """IP location from a MaxMind DB file (MaxMind GeoIP2/GeoLite2, DB-IP Lite)."""

    name = "maxmind"

    def __init__(
        self,
        database_path: str,
        *,
        reader: MmdbReader | None = None,
        index: Callable[[], GeoIndex] | None = None,
    ) -> None:
        """Open `database_path` (ValueError naming GEOIP_DATABASE_PATH when unusable).

        `reader` replaces the file (tests); `index` returns the GeoNames index, needed only
        for records without a location.
        """
        self._index = index
        if reader is None:
            reader = self._open(database_path)
        self._reader = reader
        database_type = str(getattr(reader.metadata(), "database_type", ""))
        if not any(kind in database_type.lower() for kind in ("city", "country")):
            logger.warning(
                "GEOIP_DATABASE_PATH database type %r is neither a City nor a Country "
                "database; lookups will likely find nothing",
                database_type,
            )

    @staticmethod
    def _open(database_path: str) -> MmdbReader:
        import maxminddb

        if not database_path or not Path(database_path).is_file():
            raise ValueError(
                "GEOIP_PROVIDER=maxmind needs GEOIP_DATABASE_PATH to name a readable .mmdb "
                f"file; {database_path or '(empty)'!r} is not a file"
            )
        try:
            reader: MmdbReader = maxminddb.open_database(database_path)
        except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
            raise ValueError(
                f"GEOIP_DATABASE_PATH {database_path!r} is not a readable MaxMind DB file: {exc}"
            ) from exc
        return reader

    def locate(self, ip: str) -> GeoResult:
        """City, subdivision, country, location and accuracy radius; never raises."""
        address, reason = classify_ip(ip)
        if reason or address is None:
            return unresolved(SOURCE_IP, reason or INVALID_IP)
        try:
            try:
                record = self._reader.get(str(address))
            except ValueError:  # an IPv6 address in an IPv4-only database
                return unresolved(SOURCE_IP, NOT_FOUND)
            if not isinstance(record, dict):
                return unresolved(SOURCE_IP, NOT_FOUND)
            return self._result(record)
        except Exception:
            logger.exception("MaxMind DB lookup failed")
            return unresolved(SOURCE_IP, LOOKUP_ERROR)

    def _result(self, record: dict[str, Any]) -> GeoResult:
        country_block = record.get("country") or record.get("registered_country") or {}
        iso = country_block.get("iso_code") if isinstance(country_block, dict) else None
        iso = iso.upper() if isinstance(iso, str) else ""
        country = _country_name(iso, _english_name(country_block))
        subdivisions = record.get("subdivisions")
        state = (
            _english_name(subdivisions[0])
            if isinstance(subdivisions, list) and subdivisions
            else ""
        )
        location = record.get("location")
        location = location if isinstance(location, dict) else {}
        latitude = _finite_number(location.get("latitude"))
        longitude = _finite_number(location.get("longitude"))
        radius = _finite_number(location.get("accuracy_radius"))
        if not valid_coordinates(latitude, longitude):
            latitude = longitude = radius = None
            fallback = self._index().country(iso) if iso and self._index else None
            if fallback is not None and fallback.latitude is not None:
                latitude, longitude = fallback.latitude, fallback.longitude
                radius = fallback.radius_km
        if not country and latitude is None:
            return unresolved(SOURCE_IP, NOT_FOUND)
        return GeoResult(
            resolved=True,
            source_kind=SOURCE_IP,
            coordinate_source_provider=self.name,
            locality_source_provider=self.name,
            latitude=latitude,
            longitude=longitude,
            city=_english_name(record.get("city")),
            state_or_province=state,
            country=country,
            is_approximate=True,
            accuracy_radius_km=radius,
            failure_reason="",
        )


# ----------------------------------------------------------------------------- geocoders


def _coordinates_result(
    provider: str, latitude: float, longitude: float, city: str, state: str, country: str
) -> GeoResult:
    return GeoResult(
        resolved=True,
        source_kind=SOURCE_COORDINATES,
        coordinate_source_provider="request",
        locality_source_provider=provider,
        latitude=float(latitude),
        longitude=float(longitude),
        city=city,
        state_or_province=state,
        country=country,
        is_approximate=False,
        accuracy_radius_km=None,
        failure_reason="",
    )


# The nearest place names the point, merged into a dominant city whose core contains the point
# (GeoIndex.locality). state_or_province is the GeoNames admin1 name, which the package ships for
# the United States only (its bare admin1 codes elsewhere, such as "16" for Berlin, are not names).
class GeoNamesReverseGeocoder:
    """Nearest GeoNames city (population >= 15,000) within a maximum distance, offline."""

    name = "geonames"

    def __init__(self, index: GeoIndex, max_distance_km: float = 50.0) -> None:
        """`max_distance_km`: no place is named for a point farther than this from all."""
        self._index = index
        self._max_distance_km = float(max_distance_km)

    def reverse(self, latitude: float, longitude: float) -> GeoResult:
        """City, US state name and country at the point; never raises."""
        if not valid_coordinates(latitude, longitude):
            return unresolved(SOURCE_COORDINATES, INVALID_COORDINATES)
        try:
            match = self._index.locality(float(latitude), float(longitude), self._max_distance_km)
        except Exception:
            logger.exception("GeoNames index query failed")
            return unresolved(SOURCE_COORDINATES, LOOKUP_ERROR)
        if match is None:
            return unresolved(SOURCE_COORDINATES, NO_LOCALITY_NEARBY)
        city = match.city
        country = self._index.country(city.country_code)
        return _coordinates_result(
            self.name,
            latitude,
            longitude,
            city.name,
            city.admin1_name,
            country.name if country else _country_name(city.country_code),
        )


class HttpReverseGeocoder:
    """A Nominatim-compatible reverse geocoding endpoint over HTTP."""

    name = "http"

    def __init__(
        self,
        url: str,
        *,
        session: requests.Session | None = None,
        timeout_seconds: float = HTTP_TIMEOUT_SECONDS,
    ) -> None:
        """ValueError naming GEOCODER_HTTP_URL unless `url` is an http(s) URL."""
        parts = urlsplit(url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                "GEOCODER_PROVIDER=http needs GEOCODER_HTTP_URL to be an http(s) URL of a "
                f"Nominatim-compatible reverse endpoint; got {url or '(empty)'!r}"
            )
        self._url = url
        self._timeout = timeout_seconds
        self._injected = session
        self._sessions: dict[int, requests.Session] = {}

    def _session(self) -> requests.Session:
        if self._injected is not None:
            return self._injected
        pid = os.getpid()  # a connection pool must not cross a fork
        session = self._sessions.get(pid)
        if session is None:
            session = requests.Session()
            session.headers.update({"User-Agent": HTTP_USER_AGENT, "Accept-Language": "en"})
            self._sessions = {pid: session}
        return session

    def reverse(self, latitude: float, longitude: float) -> GeoResult:
        """City/town/village, state and country from the endpoint; never raises."""
        if not valid_coordinates(latitude, longitude):
            return unresolved(SOURCE_COORDINATES, INVALID_COORDINATES)
        params = {"format": "jsonv2", "lat": f"{latitude:.7f}", "lon": f"{longitude:.7f}"}
        try:
            response = self._session().get(self._url, params=params, timeout=self._timeout)
            if response.status_code != 200:
                logger.warning("reverse geocoder answered HTTP %s", response.status_code)
                return unresolved(SOURCE_COORDINATES, PROVIDER_UNAVAILABLE)
            data = response.json()
        except (requests.RequestException, ValueError) as exc:
            logger.warning("reverse geocoder unavailable: %s", exc)
            return unresolved(SOURCE_COORDINATES, PROVIDER_UNAVAILABLE)
        if not isinstance(data, dict):
            return unresolved(SOURCE_COORDINATES, PROVIDER_UNAVAILABLE)
        address = data.get("address")
        if "error" in data or not isinstance(address, dict):  # e.g. "Unable to geocode"
            return unresolved(SOURCE_COORDINATES, NO_LOCALITY_NEARBY)

        def first(*keys: str) -> str:
            for key in keys:
                value = address.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
            return ""

        city = first("city", "town", "village", "municipality", "hamlet")
        if not city:
            return unresolved(SOURCE_COORDINATES, NO_LOCALITY_NEARBY)
        country = _country_name(first("country_code"), first("country"))
        return _coordinates_result(
            self.name, latitude, longitude, city, first("state", "province"), country
        )


# ----------------------------------------------------------------------------- factories


def _provider(value: str) -> str:
    return (value or "").strip().lower()


@functools.lru_cache(maxsize=16)
def ip_locator(settings: GeoSettings) -> IpLocator:
    """The IP locator for these settings, built once per process and settings.

    ValueError for an unknown GEOIP_PROVIDER or an unusable GEOIP_DATABASE_PATH.
    """
    provider = _provider(settings.geoip_provider)
    if provider == "builtin":
        return BuiltinIpLocator(get_index(settings.cache_dir))
    if provider == "maxmind":
        return MaxMindIpLocator(
            settings.geoip_database_path,
            index=functools.partial(get_index, settings.cache_dir),
        )
    raise ValueError(
        f"GEOIP_PROVIDER must be 'builtin' or 'maxmind', not {settings.geoip_provider!r}"
    )


@functools.lru_cache(maxsize=16)
def reverse_geocoder(settings: GeoSettings) -> ReverseGeocoder:
    """The reverse geocoder for these settings, built once per process and settings.

    ValueError for an unknown GEOCODER_PROVIDER, a missing GEOCODER_HTTP_URL or a
    GEOCODER_MAX_DISTANCE_KM that is not a positive number.
    """
    provider = _provider(settings.geocoder_provider)
    if provider == "builtin":
        max_distance = _finite_number(settings.geocoder_max_distance_km)
        if max_distance is None or max_distance <= 0:
            raise ValueError(
                "GEOCODER_MAX_DISTANCE_KM must be a positive number of kilometres, not "
                f"{settings.geocoder_max_distance_km!r}"
            )
        return GeoNamesReverseGeocoder(get_index(settings.cache_dir), max_distance)
    if provider == "http":
        return HttpReverseGeocoder(settings.geocoder_http_url)
    raise ValueError(
        f"GEOCODER_PROVIDER must be 'builtin' or 'http', not {settings.geocoder_provider!r}"
    )


def country_code_at(settings: GeoSettings, latitude: float, longitude: float) -> str:
    """The ISO 3166-1 alpha-2 code of the country of the GeoNames town nearest the point,
    within GEOCODER_MAX_DISTANCE_KM, by the offline index whatever GEOCODER_PROVIDER names
    places with (journey statistics are recomputed and backfilled without a network);
    "" when no town is that near, for bad input, or when the index fails (logged)."""
    max_distance = _finite_number(settings.geocoder_max_distance_km)
    if max_distance is None or max_distance <= 0 or not valid_coordinates(latitude, longitude):
        return ""
    try:
        match = get_index(settings.cache_dir).nearest(
            float(latitude), float(longitude), max_distance
        )
    except Exception:
        logger.exception("GeoNames index query failed")
        return ""
    return match.city.country_code.upper() if match is not None else ""
