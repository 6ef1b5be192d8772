"""GeoJSON (RFC 7946) out: a journey as a FeatureCollection of its line and its points.
Pure functions, no Flask, no database.

Positions are `[longitude, latitude]` in WGS 84, as RFC 7946 orders them. The line joins the
points in order, cut where a leg crosses the antimeridian, so no map draws it once around
the world; a journey of fewer than two points has no line feature. Each point is a Point
feature with the caller's `properties` and `id`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ANTIMERIDIAN = 180.0

Position = list[float]  # [longitude, latitude]


@dataclass(frozen=True)
class PointFeature:
    """One point of the collection: where, its feature id and its properties."""

    latitude: float
    longitude: float
    feature_id: str
    properties: dict[str, Any]


# A leg whose longitudes are more than 180 degrees apart goes the short way, over the antimeridian,
# and is cut there (RFC 7946, 3.1.9: "a line that crosses the antimeridian SHOULD be represented by
# cutting it in two"), the crossing's latitude interpolated along the leg: the line is then a
# MultiLineString.
def line_parts(positions: Sequence[tuple[float, float]]) -> list[list[Position]]:
    """The `(latitude, longitude)` positions joined in order as GeoJSON line strings: one,
    or one more for each crossing of the antimeridian; parts of fewer than two positions
    (none at all for fewer than two points) are left out."""
    parts: list[list[Position]] = []
    current: list[Position] = []
    previous: tuple[float, float] | None = None
    for latitude, longitude in positions:
        if previous is not None and abs(longitude - previous[1]) > ANTIMERIDIAN:
            edge_latitude, edge = _crossing(previous, (latitude, longitude))
            if [edge, edge_latitude] != current[-1]:
                current.append([edge, edge_latitude])
            parts.append(current)
            current = [[-edge, edge_latitude]]
        current.append([longitude, latitude])
        previous = (latitude, longitude)
    parts.append(current)
    return [part for part in parts if len(part) >= 2]


def _crossing(start: tuple[float, float], end: tuple[float, float]) -> tuple[float, float]:
    """Where the short leg from `start` to `end` meets the antimeridian: (latitude, the
    longitude of that side of it, 180 or -180)."""
    (lat1, lon1), (lat2, lon2) = start, end
    edge = ANTIMERIDIAN if lon1 > 0 else -ANTIMERIDIAN
    unwrapped = lon2 + 360.0 if lon1 > 0 else lon2 - 360.0
    fraction = (edge - lon1) / (unwrapped - lon1)
    return lat1 + fraction * (lat2 - lat1), edge


def line_geometry(positions: Sequence[tuple[float, float]]) -> dict[str, Any] | None:
    """A LineString, a MultiLineString when cut at the antimeridian, or None."""
    parts = line_parts(positions)
    if not parts:
        return None
    if len(parts) == 1:
        return {"type": "LineString", "coordinates": parts[0]}
    return {"type": "MultiLineString", "coordinates": parts}


def feature_collection(
    points: Sequence[PointFeature], *, line_properties: dict[str, Any]
) -> dict[str, Any]:
    """The line through `points` (first, with `line_properties`) and each point."""
    features: list[dict[str, Any]] = []
    line = line_geometry([(point.latitude, point.longitude) for point in points])
    if line is not None:
        features.append({"type": "Feature", "geometry": line, "properties": line_properties})
    features.extend(
        {
            "type": "Feature",
            "id": point.feature_id,
            "geometry": {"type": "Point", "coordinates": [point.longitude, point.latitude]},
            "properties": point.properties,
        }
        for point in points
    )
    return {"type": "FeatureCollection", "features": features}
