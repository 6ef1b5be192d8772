"""The journey map of the public page: hosted tiles and the stops, laid out on the server
as an inline SVG (tiles are `<image>` elements, stops circles, the route a polyline).
It needs no script and no inline style (the pages' CSP allows neither), scales with the
page's width, and the list of stops below it says the same in words. With JavaScript,
static/journey-map.js replaces it by a Leaflet map of the same tiles that pans and zooms;
`JourneyMap.markers` is what that script is given (a data attribute, not inline script).

The zoom is the highest (up to MAP_PAGE_MAX_ZOOM) at which every stop fits in the frame
with a margin, centred on them; one stop gets a view of its region. A journey crossing
the antimeridian is drawn the long way round (kept simple: such journeys are rare).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

TILE = 256
MAX_LATITUDE = 85.05112878
WIDTH, HEIGHT, MARGIN = 512, 320, 24
SINGLE_STOP_ZOOM = 5


@dataclass(frozen=True)
class PlacedTile:
    url: str
    x: int
    y: int


@dataclass(frozen=True)
class PlacedStop:
    number: int
    x: float
    y: float
    label: str
    latitude: float
    longitude: float


@dataclass(frozen=True)
class JourneyMap:
    width: int
    height: int
    zoom: int
    tiles: list[PlacedTile]
    stops: list[PlacedStop]
    tile_url: str  # the tile template, for the script's map
    max_zoom: int  # the script's map zooms no further in

    @property
    def route(self) -> str:
        """The polyline's points, oldest stop first."""
        return " ".join(f"{stop.x:.1f},{stop.y:.1f}" for stop in self.stops)

    @property
    def markers(self) -> list[list[float | str]]:
        """Each stop as [latitude, longitude, label], oldest first, for the script's map."""
        return [[stop.latitude, stop.longitude, stop.label or ""] for stop in self.stops]


def world_pixel(latitude: float, longitude: float, zoom: int) -> tuple[float, float]:
    """Web Mercator pixel of a point at `zoom` (256 px tiles)."""
    size = TILE * 2**zoom
    lat = math.radians(max(-MAX_LATITUDE, min(MAX_LATITUDE, latitude)))
    x = (longitude + 180.0) / 360.0 * size
    y = (1 - math.log(math.tan(lat) + 1 / math.cos(lat)) / math.pi) / 2 * size
    return x, y


def _fits(points: Sequence[tuple[float, float]], zoom: int) -> bool:
    pixels = [world_pixel(lat, lon, zoom) for lat, lon in points]
    xs, ys = [x for x, _ in pixels], [y for _, y in pixels]
    return max(xs) - min(xs) <= WIDTH - 2 * MARGIN and max(ys) - min(ys) <= HEIGHT - 2 * MARGIN


def choose_zoom(points: Sequence[tuple[float, float]], max_zoom: int) -> int:
    if len(set(points)) <= 1:
        return min(SINGLE_STOP_ZOOM, max_zoom)
    for zoom in range(max_zoom, 0, -1):
        if _fits(points, zoom):
            return zoom
    return 0


def journey_map(
    stops: Sequence[tuple[float, float, str]], *, tile_url: str, max_zoom: int
) -> JourneyMap | None:
    """The map of these stops (latitude, longitude, label), oldest first; None without
    stops. `tile_url` is the hosted tile template with {z}, {x} and {y}."""
    if not stops:
        return None
    points = [(lat, lon) for lat, lon, _ in stops]
    zoom = choose_zoom(points, max(0, max_zoom))
    pixels = [world_pixel(lat, lon, zoom) for lat, lon in points]
    xs, ys = [x for x, _ in pixels], [y for _, y in pixels]
    left = (min(xs) + max(xs)) / 2 - WIDTH / 2
    top = (min(ys) + max(ys)) / 2 - HEIGHT / 2
    count = 2**zoom
    tiles = []
    for tile_y in range(math.floor(top / TILE), math.floor((top + HEIGHT) / TILE) + 1):
        if not 0 <= tile_y < count:
            continue  # beyond the poles: the frame's background shows
        for tile_x in range(math.floor(left / TILE), math.floor((left + WIDTH) / TILE) + 1):
            url = tile_url.format(z=zoom, x=tile_x % count, y=tile_y)
            tiles.append(PlacedTile(url, round(tile_x * TILE - left), round(tile_y * TILE - top)))
    placed = [
        PlacedStop(number, x - left, y - top, label, lat, lon)
        for number, ((x, y), (lat, lon, label)) in enumerate(zip(pixels, stops, strict=True), 1)
    ]
    return JourneyMap(WIDTH, HEIGHT, zoom, tiles, placed, tile_url, max(0, max_zoom))
