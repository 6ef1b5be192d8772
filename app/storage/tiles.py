"""Hosted map tiles `{z}/{x}/{y}.png` (Web Mercator, 256 px, XYZ numbering) for the website
pages and the apps (`hostedMapTileUrlTemplate`), from the first source that has the tile:
a tile directory (MAP_TILE_ROOT), an MBTiles file (MAP_TILE_MBTILES), then the built-in
base map drawn by app.storage.basemap from data shipped in the repository and its packages.

Nothing is downloaded, so a fresh machine shows a real map down to city level; a full tile
set replaces it tile by tile wherever it has tiles.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.storage import basemap

BASE_MAP_MAX_ZOOM = 10  # a city and its neighbours are told apart; streets need real tiles
BASE_MAP_VERSION = "base-v2"  # the cache folder of this drawing style
WATER, LAND = basemap.WATER, basemap.LAND
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


@dataclass(frozen=True)
class Tile:
    data: bytes | None = None  # the bytes (MBTiles, base map)
    path: Path | None = None  # or a file to send (tile directory, base-map cache)
    mimetype: str = "image/png"


def is_valid(z: int, x: int, y: int) -> bool:
    return 0 <= z <= 22 and 0 <= x < 2**z and 0 <= y < 2**z


def find_tile(
    z: int,
    x: int,
    y: int,
    *,
    tile_root: Path,
    mbtiles: Path | None,
    cache_root: Path | None,
) -> Tile | None:
    """The tile from the first source that has it (see the module), or None."""
    if not is_valid(z, x, y):
        return None
    stored = tile_root / str(z) / str(x) / f"{y}.png"
    if stored.is_file():
        return Tile(path=stored)
    if mbtiles is not None:
        data = read_mbtiles(mbtiles, z, x, y)
        if data is not None:
            return Tile(data=data, mimetype=_mimetype(data))
    if cache_root is not None and z <= BASE_MAP_MAX_ZOOM:
        return Tile(path=base_map_tile(cache_root, z, x, y))
    return None


def _mimetype(data: bytes) -> str:
    return "image/jpeg" if data.startswith(JPEG_MAGIC) else "image/png"


# The tiles table of the MBTiles 1.3 format, whose rows count from the south (TMS), so row = 2**z -
# 1 - y. Raster tiles only (PNG or JPEG; the content type follows the bytes).
def read_mbtiles(path: Path, z: int, x: int, y: int) -> bytes | None:
    """One tile of an MBTiles file (opened read-only), or None when it has none."""
    if not path.is_file():
        return None
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = connection.execute(
            "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
            (z, x, 2**z - 1 - y),
        ).fetchone()
    finally:
        connection.close()
    if row is None or not row[0]:
        return None
    data = bytes(row[0])
    return data if data.startswith((PNG_MAGIC, JPEG_MAGIC)) else None


# Zoom 0 to BASE_MAP_MAX_ZOOM: land, sea, coasts, country borders and place names. Each tile is
# drawn when first asked for (tens of milliseconds) and kept in MAP_TILE_CACHE under the drawing's
# version, so a new style never serves tiles of the old one; files there are written to a temporary
# file and renamed, so concurrent workers never read half a file.
def base_map_tile(cache_root: Path, z: int, x: int, y: int) -> Path:
    """The cached base-map tile, drawn first when missing."""
    path = cache_root / BASE_MAP_VERSION / str(z) / str(x) / f"{y}.png"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = basemap.draw_base_tile(z, x, y)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
