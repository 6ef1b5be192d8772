"""The fast circle test used for nearby rows agrees with the haversine distance."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from app.services.discovery import Circle, distance_km


@pytest.mark.parametrize(
    ("latitude", "longitude", "radius_km"),
    [(52.52, 13.405, 5.0), (-18.14, 179.99, 25.0), (89.9, 0.0, 50.0), (0.0, -180.0, 500.0)],
)
def test_row_test_matches_haversine_distance(latitude, longitude, radius_km):
    circle = Circle(latitude, longitude, radius_km)
    test = circle.row_test()
    rng = random.Random(7)
    window = circle.bounds()
    for _ in range(5000):
        lat = rng.uniform(window.min_latitude, window.max_latitude)
        lon = rng.uniform(-180.0, 180.0) if rng.random() < 0.2 else longitude + rng.gauss(0, 1)
        lon = (lon + 180.0) % 360.0 - 180.0
        distance = distance_km(latitude, longitude, lat, lon)
        if abs(distance - radius_km) < 1e-6:
            continue  # too close to the edge for floating point to agree on
        assert test(SimpleNamespace(latitude=lat, longitude=lon)) == (distance <= radius_km)
