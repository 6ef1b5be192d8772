"""The circle test that SQL runs for nearby reads agrees with the haversine distance, on
the test database itself (SQLite and PostgreSQL evaluate the same expression)."""

from __future__ import annotations

import math
import random

import pytest
from sqlalchemy import Column, Float, Integer, MetaData, Table, insert, select

from app.extensions import db
from app.services.shared.areas import EARTH_RADIUS_KM, Circle, circle_clause


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """The reference: great-circle distance by the haversine formula."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    half_dphi = (phi2 - phi1) / 2
    half_dlambda = math.radians(lon2 - lon1) / 2
    a = math.sin(half_dphi) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(half_dlambda) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def random_points(circle: Circle, count: int) -> list[tuple[int, float, float]]:
    """Points in and around the circle's window, some at any longitude."""
    rng = random.Random(7)
    window = circle.bounds()
    points = []
    for number in range(count):
        latitude = rng.uniform(window.min_latitude, window.max_latitude)
        if rng.random() < 0.2:
            longitude = rng.uniform(-180.0, 180.0)
        else:
            longitude = circle.longitude + rng.gauss(0, 1)
        points.append((number, latitude, (longitude + 180.0) % 360.0 - 180.0))
    return points


def points_table(points: list[tuple[int, float, float]]) -> Table:
    """A temporary table of numbered points on the session's connection (replacing the one
    an earlier test left on the same pooled connection)."""
    table = Table(
        "circle_points",
        MetaData(),
        Column("number", Integer, primary_key=True),
        Column("latitude", Float),
        Column("longitude", Float),
        prefixes=["TEMPORARY"],
    )
    connection = db.session.connection()
    table.drop(connection, checkfirst=True)
    table.create(connection)
    connection.execute(
        insert(table),
        [{"number": n, "latitude": lat, "longitude": lon} for n, lat, lon in points],
    )
    return table


@pytest.mark.parametrize(
    ("latitude", "longitude", "radius_km"),
    [(52.52, 13.405, 5.0), (-18.14, 179.99, 25.0), (89.9, 0.0, 50.0), (0.0, -180.0, 500.0)],
)
def test_circle_in_sql_matches_haversine_distance(app, latitude, longitude, radius_km):
    circle = Circle(latitude, longitude, radius_km)
    points = random_points(circle, 2000)
    table = points_table(points)
    inside = circle_clause(
        circle.bounds().crosses_antimeridian, table.c.latitude, table.c.longitude
    )
    found = set(db.session.scalars(select(table.c.number).where(inside), circle.params()))

    expected, edge = set(), set()
    for number, lat, lon in points:
        distance = distance_km(latitude, longitude, lat, lon)
        if abs(distance - radius_km) < 1e-6:
            edge.add(number)  # too close to the edge for floating point to agree on
        elif distance <= radius_km:
            expected.add(number)
    assert expected, "the sample must hold points inside the circle"
    assert found - edge == expected


def test_a_radius_past_half_the_globe_holds_every_point(app):
    circle = Circle(0.0, 0.0, 25_000.0)
    points = [(0, 0.0, 180.0), (1, -89.0, 90.0), (2, 45.0, -45.0)]
    table = points_table(points)
    inside = circle_clause(
        circle.bounds().crosses_antimeridian, table.c.latitude, table.c.longitude
    )
    assert set(db.session.scalars(select(table.c.number).where(inside), circle.params())) == {
        0,
        1,
        2,
    }
