"""Map areas: a latitude/longitude window (`Bounds`, crossing the antimeridian when its
minimum longitude is past its maximum) and a great-circle circle (`Circle`), each as a SQL
condition whose numbers are bound parameters (contract: Public note discovery).

A circle in SQL is its bounding window, which the indexes serve, and the exact haversine
test for the rows in the window's corners.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from sqlalchemy import BindParameter, Float, and_, bindparam, func, or_
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from app.models.note import Note

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)


# --- areas in SQL ------------------------------------------------------------------------
#
# An area's SQL has the same shape for every request (the numbers are bound parameters), so
# a discovery statement is built once per shape and reused: building a SQLAlchemy statement
# costs more than running it on an index (bench/README.md).


def _parameter(name: str) -> BindParameter[float]:
    return bindparam(name, type_=Float)


MIN_LATITUDE = _parameter("area_min_latitude")
MAX_LATITUDE = _parameter("area_max_latitude")
MIN_LONGITUDE = _parameter("area_min_longitude")
MAX_LONGITUDE = _parameter("area_max_longitude")
CENTRE_PHI = _parameter("circle_phi")  # latitude of the centre, radians
CENTRE_LAMBDA = _parameter("circle_lambda")  # longitude of the centre, radians
CENTRE_COS_PHI = _parameter("circle_cos_phi")
HAVERSINE_LIMIT = _parameter("circle_limit")  # sin^2(r / 2R)


Coordinate = ColumnElement[float] | InstrumentedAttribute[float | None]

# PostgreSQL raises "value out of range: underflow" when a float product rounds to 0 from
# non-zero factors (SQLite gives 0). The haversine squares sines of half the differences,
# which are tiny for a point within ~1e-160 rad of the centre (a query at latitude 1e-300
# near a note at 0). Each sine enters the square as |sin| + SINE_FLOOR: for any |sin| above
# ~1e-84 the sum is |sin| exactly (the floor is below its last bit), so real distances are
# untouched; below, the square is at least SINE_FLOOR^2 and no product reaches 0 (the
# smallest, cos(phi1)cos(phi2) at the poles ~3.7e-33 times SINE_FLOOR^2, is ~1e-233).
# The radius's own term is never below HAVERSINE_FLOOR (4 x SINE_FLOOR^2, above both terms'
# floors), so a point within ~1e-96 km of the centre passes the exact test of any circle
# (the window, in plain comparisons, still applies), on every database alike.
SINE_FLOOR = 1e-100
HAVERSINE_FLOOR = 4 * SINE_FLOOR * SINE_FLOOR


@functools.cache
def window_clause(
    across_antimeridian: bool,
    latitude: Coordinate = Note.latitude,
    longitude: Coordinate = Note.longitude,
) -> ColumnElement[bool]:
    """A latitude/longitude window; across the antimeridian its longitudes wrap."""
    in_latitude = latitude.between(MIN_LATITUDE, MAX_LATITUDE)
    if across_antimeridian:
        in_longitude = or_(longitude >= MIN_LONGITUDE, longitude <= MAX_LONGITUDE)
    else:
        in_longitude = longitude.between(MIN_LONGITUDE, MAX_LONGITUDE)
    return and_(in_latitude, in_longitude)


@functools.cache
def circle_clause(
    across_antimeridian: bool,
    latitude: Coordinate = Note.latitude,
    longitude: Coordinate = Note.longitude,
) -> ColumnElement[bool]:
    """A circle: its bounding window (which the indexes serve) and the exact great-circle
    test of the rows in it, the haversine term compared with the radius's own (a <= sin^2
    (r / 2R) is `distance_km <= radius_km` without asin and sqrt)."""
    phi2 = func.radians(latitude, type_=Float)
    sin_half_dphi = (
        func.abs(func.sin((phi2 - CENTRE_PHI) * 0.5, type_=Float), type_=Float) + SINE_FLOOR
    )
    sin_half_dlambda = (
        func.abs(
            func.sin((func.radians(longitude, type_=Float) - CENTRE_LAMBDA) * 0.5, type_=Float),
            type_=Float,
        )
        + SINE_FLOOR
    )
    haversine = (
        sin_half_dphi * sin_half_dphi
        + CENTRE_COS_PHI * func.cos(phi2, type_=Float) * sin_half_dlambda * sin_half_dlambda
    )
    return and_(
        window_clause(across_antimeridian, latitude, longitude), haversine <= HAVERSINE_LIMIT
    )


@dataclass(frozen=True)
class Bounds:
    min_latitude: float
    min_longitude: float
    max_latitude: float
    max_longitude: float

    @property
    def crosses_antimeridian(self) -> bool:
        return self.min_longitude > self.max_longitude

    @property
    def shape(self) -> tuple[str, bool]:
        return ("window", self.crosses_antimeridian)

    @property
    def square_degrees(self) -> float:
        """Latitude span times longitude span (a window across the antimeridian wraps)."""
        width = self.max_longitude - self.min_longitude
        if self.crosses_antimeridian:
            width += 360.0
        return (self.max_latitude - self.min_latitude) * width

    def where(self) -> ColumnElement[bool]:
        """The window in SQL; its numbers come from `params()`."""
        return window_clause(self.crosses_antimeridian)

    def params(self) -> dict[str, float]:
        return {
            MIN_LATITUDE.key: self.min_latitude,
            MAX_LATITUDE.key: self.max_latitude,
            MIN_LONGITUDE.key: self.min_longitude,
            MAX_LONGITUDE.key: self.max_longitude,
        }


@dataclass(frozen=True)
class Circle:
    latitude: float
    longitude: float
    radius_km: float

    def bounds(self) -> Bounds:
        """The smallest latitude/longitude window holding the circle (spherical cap).

        Near a pole the cap covers every longitude; elsewhere the longitude half-width is
        asin(sin(r) / cos(lat)), and a window past +-180 wraps across the antimeridian.
        """
        angular = self.radius_km / EARTH_RADIUS_KM
        latitude = math.radians(self.latitude)
        low, high = latitude - angular, latitude + angular
        if low <= -math.pi / 2 or high >= math.pi / 2:
            return Bounds(
                math.degrees(max(low, -math.pi / 2)),
                -180.0,
                math.degrees(min(high, math.pi / 2)),
                180.0,
            )
        half_width = math.degrees(math.asin(math.sin(angular) / math.cos(latitude)))
        west, east = self.longitude - half_width, self.longitude + half_width
        if west < -180.0:
            west += 360.0
        if east > 180.0:
            east -= 360.0
        return Bounds(math.degrees(low), west, math.degrees(high), east)

    @property
    def shape(self) -> tuple[str, bool]:
        return ("circle", self.bounds().crosses_antimeridian)

    @property
    def square_degrees(self) -> float:
        """The size of the bounding window (which is what the indexes read)."""
        return self.bounds().square_degrees

    def where(self) -> ColumnElement[bool]:
        """The circle in SQL; its numbers come from `params()`."""
        return circle_clause(self.bounds().crosses_antimeridian)

    def params(self) -> dict[str, float]:
        angular = self.radius_km / EARTH_RADIUS_KM
        phi = math.radians(self.latitude)
        return {
            **self.bounds().params(),
            CENTRE_PHI.key: phi,
            CENTRE_LAMBDA.key: math.radians(self.longitude),
            CENTRE_COS_PHI.key: math.cos(phi),
            # Past half the globe every point is inside (a is at most 1); a tiny radius
            # keeps the points that the SQL's floor makes one with the centre.
            HAVERSINE_LIMIT.key: (
                max(math.sin(angular / 2) ** 2, HAVERSINE_FLOOR) if angular < math.pi else 2.0
            ),
        }


Area = Bounds | Circle
