"""The built-in base map's drawing: land, coasts and country borders from Natural Earth's
1:50m countries (the `world-atlas` TopoJSON in app/data, see tools/fetch_world_atlas.py),
and place names (app.storage.places), as 256 px Web Mercator PNG tiles.

TopoJSON stores each border once as an "arc" that the countries on both sides share, so
the file says which lines are land borders (arcs of two countries) and which are coasts
(arcs of one). Land is the union of the countries' outer rings; a hole is water only
when no other country fills it (enclaves such as Lesotho are countries of their own).
Shapes are drawn at twice the size and halved, which smooths their edges; names are
drawn after that, at full size, at whole world pixels, so neighbouring tiles agree.
"""

from __future__ import annotations

import gzip
import io
import json
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from app.storage import places

TILE_SIZE = 256
SUPERSAMPLE = 2
WATER = (170, 211, 223)
LAND = (236, 233, 222)
COAST = (120, 150, 165)
BORDER = (150, 120, 150)
MAX_LATITUDE = 85.3  # a little past Web Mercator's edge, so the last tile row is filled
DATA_FILE = "countries-50m.json.gz"


@dataclass(frozen=True)
class Shapes:
    """Rings or lines in Web Mercator world units (0..1 both ways, y down), with their
    bounding boxes (min x, min y, max x, max y) to pick those a tile touches."""

    parts: list[np.ndarray]
    boxes: np.ndarray

    @classmethod
    def of(cls, parts: Sequence[np.ndarray]) -> Shapes:
        boxes = np.array(
            [(*part.min(axis=0), *part.max(axis=0)) for part in parts], dtype=float
        ).reshape(-1, 4)
        return cls(list(parts), boxes)

    def touching(
        self, left: float, top: float, right: float, bottom: float, least: float = 0.0
    ) -> Iterable[Any]:
        """The parts whose boxes reach into this box and span at least `least` units
        (an island smaller than a pixel is not drawn)."""
        boxes = self.boxes
        hit = (
            (boxes[:, 0] <= right)
            & (boxes[:, 2] >= left)
            & (boxes[:, 1] <= bottom)
            & (boxes[:, 3] >= top)
            & (np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) >= least)
        )
        return (self.parts[index] for index in np.flatnonzero(hit))


@dataclass(frozen=True)
class World:
    land: Shapes  # the countries' outer rings
    lakes: Shapes  # holes no country fills
    coasts: Shapes  # arcs of one country
    borders: Shapes  # arcs two countries share


def decode_arcs(topology: dict[str, Any]) -> list[np.ndarray]:
    """Each arc as an (n, 2) array of longitude, latitude: quantized arcs are delta
    encoded (each position relative to the one before) and scaled by the transform."""
    transform = topology.get("transform")
    arcs = []
    for arc in topology["arcs"]:
        points = np.asarray(arc, dtype=float).reshape(-1, 2)
        if transform is not None:
            points = np.cumsum(points, axis=0) * transform["scale"] + transform["translate"]
        arcs.append(points)
    return arcs


def ring_points(arcs: Sequence[np.ndarray], indexes: Sequence[int]) -> np.ndarray:
    """A ring from its arc indexes: ~i is arc i reversed; consecutive arcs share their
    end point, which is kept once."""
    pieces = []
    for position, index in enumerate(indexes):
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        pieces.append(arc if position == 0 else arc[1:])
    return np.concatenate(pieces)


def polygons_of(geometry: dict[str, Any]) -> list[list[list[int]]]:
    """The polygons (rings of arc indexes, outer ring first) of a Polygon or MultiPolygon."""
    if geometry["type"] == "Polygon":
        return [geometry["arcs"]]
    if geometry["type"] == "MultiPolygon":
        return list(geometry["arcs"])
    return []


def unwrap(lonlat: np.ndarray, closed: bool) -> np.ndarray:
    """Longitudes made continuous where a line crosses the antimeridian (a step of more
    than 180 degrees), so it may reach past +-180. A ring that goes round a pole
    (Antarctica) is closed along that pole."""
    steps = np.diff(lonlat[:, 0])
    turns = np.concatenate(([0.0], np.cumsum(-360.0 * np.round(steps / 360.0))))
    points = lonlat + np.column_stack((turns, np.zeros_like(turns)))
    if closed and abs(points[-1, 0] - points[0, 0]) > 180.0:
        pole = 90.0 if points[:, 1].mean() > 0 else -90.0
        points = np.vstack((points, [[points[-1, 0], pole], [points[0, 0], pole]]))
    return points


def copies(lonlat: np.ndarray) -> list[np.ndarray]:
    """The part, and where it reaches past the antimeridian, its copy a world away."""
    found = [lonlat]
    if lonlat[:, 0].max() > 180.0:
        found.append(lonlat - np.array((360.0, 0.0)))
    if lonlat[:, 0].min() < -180.0:
        found.append(lonlat + np.array((360.0, 0.0)))
    return found


def mercator(lonlat: np.ndarray) -> np.ndarray:
    """Longitude, latitude to Web Mercator world units (0..1, y growing southwards)."""
    lat = np.radians(np.clip(lonlat[:, 1], -MAX_LATITUDE, MAX_LATITUDE))
    x = (lonlat[:, 0] + 180.0) / 360.0
    y = (1.0 - np.arcsinh(np.tan(lat)) / np.pi) / 2.0
    return np.column_stack((x, y))


def _projected(lonlat: np.ndarray, closed: bool) -> list[np.ndarray]:
    return [mercator(part) for part in copies(unwrap(lonlat, closed))]


def build_world(topology: dict[str, Any], object_name: str = "countries") -> World:
    """Land, lakes, coasts and borders from a TopoJSON topology of countries."""
    arcs = decode_arcs(topology)
    geometries = topology["objects"][object_name]["geometries"]
    owners: Counter[int] = Counter()
    for geometry in geometries:
        used = {
            index if index >= 0 else ~index
            for polygon in polygons_of(geometry)
            for ring in polygon
            for index in ring
        }
        owners.update(used)
    land: list[np.ndarray] = []
    lakes: list[np.ndarray] = []
    for geometry in geometries:
        for outer, *holes in polygons_of(geometry):
            land += _projected(ring_points(arcs, outer), closed=True)
            for hole in holes:
                if all(owners[index if index >= 0 else ~index] == 1 for index in hole):
                    lakes += _projected(ring_points(arcs, hole), closed=True)
    coasts: list[np.ndarray] = []
    borders: list[np.ndarray] = []
    for index in sorted(owners):
        (coasts if owners[index] == 1 else borders).extend(_projected(arcs[index], closed=False))
    return World(Shapes.of(land), Shapes.of(lakes), Shapes.of(coasts), Shapes.of(borders))


_loading = threading.Lock()


def world() -> World:
    """The shipped countries, decoded once per process (about a second), however many
    threads ask at once."""
    with _loading:
        return _world()


@cache
def _world() -> World:
    data = resources.files("app.data").joinpath(DATA_FILE).read_bytes()
    return build_world(json.loads(gzip.decompress(data)))


def _pixels(part: np.ndarray, scale: float, left: float, top: float) -> list[int]:
    """World units to this tile's pixels (x, y, x, y, ...), repeated pixels dropped (at
    low zoom most vertices fall on the pixel before them)."""
    points = np.rint((part - (left, top)) * scale).astype(np.int64)
    if len(points) > 2:
        keep = np.ones(len(points), dtype=bool)
        keep[1:] = np.any(points[1:] != points[:-1], axis=1)
        points = points[keep]
    flat: list[int] = points.ravel().tolist()
    return flat


def draw_shapes(shapes: World, z: int, x: int, y: int) -> Image.Image:
    """Land, lakes, coasts and borders of one tile, drawn large and halved (smooth edges)."""
    size = TILE_SIZE * SUPERSAMPLE
    tiles = 2**z
    left, top = x / tiles, y / tiles
    right, bottom = (x + 1) / tiles, (y + 1) / tiles
    pad = 2 / (TILE_SIZE * tiles)  # lines just outside still reach into the tile
    box = (left - pad, top - pad, right + pad, bottom + pad)
    scale = size * tiles
    pixel = 1 / scale
    image = Image.new("RGB", (size, size), WATER)
    draw = ImageDraw.Draw(image)
    for part in shapes.land.touching(*box, least=pixel):
        points = _pixels(part, scale, left, top)
        if len(points) >= 6:
            draw.polygon(points, fill=LAND)
    for part in shapes.lakes.touching(*box, least=pixel):
        points = _pixels(part, scale, left, top)
        if len(points) >= 6:
            draw.polygon(points, fill=WATER)
    width = SUPERSAMPLE if z < 6 else SUPERSAMPLE + 1
    for lines, colour in ((shapes.coasts, COAST), (shapes.borders, BORDER)):
        if lines is shapes.borders and z < 2:
            continue  # the whole world on one or four tiles: borders would be a smudge
        for part in lines.touching(*box, least=pixel):
            points = _pixels(part, scale, left, top)
            if len(points) >= 4:
                draw.line(points, fill=colour, width=width, joint="curve")
    return image.reduce(SUPERSAMPLE)


def draw_base_tile(z: int, x: int, y: int) -> bytes:
    """One base-map tile as PNG bytes: land, sea, coasts, borders and place names."""
    image = draw_shapes(world(), z, x, y)
    places.draw_labels(image, z, x, y)
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()
