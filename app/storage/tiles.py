"""Hosted map tiles `{z}/{x}/{y}.png` (Web Mercator, 256 px, XYZ numbering) for the website
pages and the apps (`hostedMapTileUrlTemplate`), from the first source that has the tile:

1. A tile directory (`MAP_TILE_ROOT/{z}/{x}/{y}.png`), e.g. one rendered by an operator.
2. An MBTiles file (`MAP_TILE_MBTILES`): the `tiles` table of the MBTiles 1.3 format,
   whose rows count from the south (TMS), so row = 2**z - 1 - y. Raster tiles only (PNG
   or JPEG; the content type follows the bytes).
3. The built-in base map, zoom 0 to BASE_MAP_MAX_ZOOM: land and sea drawn with Pillow
   from the global land/sea mask the `global-land-mask` package ships (1/120 degree
   cells, thinned once to 1/30 degree and kept in `MAP_TILE_CACHE`: a few seconds on the
   first request of a machine), coasts outlined. Nothing is downloaded: each tile is
   drawn when first asked for (milliseconds) and kept in `MAP_TILE_CACHE`; files there
   are written to a temporary file and renamed, so concurrent workers never read half
   a file.

A fresh machine therefore shows a real (coarse) map; a full tile set replaces it tile by
tile wherever it has tiles.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
import sqlite3
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TILE_SIZE = 256
BASE_MAP_MAX_ZOOM = 6
WATER = (170, 211, 223)
LAND = (236, 233, 222)
COAST = (140, 160, 170)
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


def base_map_tile(cache_root: Path, z: int, x: int, y: int) -> Path:
    """The cached base-map tile, drawn first when missing."""
    path = cache_root / str(z) / str(x) / f"{y}.png"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = draw_base_tile(land_mask(cache_root), z, x, y)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


MASK_STEP = 4  # keep every 4th cell of the package's 1/120 degree mask: 1/30 degree
MASK_FILE = f"land-mask-{MASK_STEP}-v1.npz"


@dataclass(frozen=True)
class LandMask:
    """The land/sea mask at 1/30 degree, one bit a cell (5400 x 10800 cells, 7 MB)."""

    bits: Any  # numpy uint8 array, rows north to south, 8 cells a byte
    rows: int
    columns: int

    def is_land(self, lat: Any, lon: Any) -> Any:
        import numpy as np

        row = np.clip(((90.0 - lat) * 120 // MASK_STEP).astype(int), 0, self.rows - 1)
        column = np.clip(((lon + 180.0) * 120 // MASK_STEP).astype(int), 0, self.columns - 1)
        return (self.bits[row, column >> 3] >> (7 - (column & 7))) & 1 == 1


def build_land_mask(target: Path) -> None:
    """Thin out the mask `global-land-mask` ships (21600 x 43200 booleans, 1 GB once
    unpacked) into `target`, streaming it row by row so no more than one row is ever
    held (a few seconds, once per machine)."""
    import zipfile

    import numpy as np

    source = _package_folder("global_land_mask") / "globe_combined_mask_compressed.npz"
    with zipfile.ZipFile(source) as archive, archive.open("mask.npy") as file:
        version = np.lib.format.read_magic(file)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(file)
        else:
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(file)
        if fortran_order or dtype != np.bool_ or len(shape) != 2:
            raise ValueError("unexpected land mask layout")
        rows, columns = shape
        kept = []
        for row in range(rows):
            line = file.read(columns)
            if row % MASK_STEP == MASK_STEP // 2:
                cells = np.frombuffer(line, dtype=np.uint8)[MASK_STEP // 2 :: MASK_STEP]
                kept.append(np.packbits(cells == 0))  # the package marks ocean: keep land
    bits = np.stack(kept)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez_compressed(file, bits=bits, columns=np.array(columns // MASK_STEP))
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _package_folder(name: str) -> Path:
    """Where an installed package's files are, without importing it (importing
    `global_land_mask` unpacks its whole mask: about 1 GB and several seconds)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the {name} package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


_building = threading.Lock()


@cache
def land_mask(cache_root: Path) -> LandMask:
    """The thinned mask kept in `cache_root`, built there first when missing (once per
    process however many requests ask at once; concurrent processes each write a whole
    file and rename it)."""
    import numpy as np

    path = cache_root / MASK_FILE
    with _building:
        if not path.is_file():
            cache_root.mkdir(parents=True, exist_ok=True)
            build_land_mask(path)
    with np.load(path) as stored:
        bits = stored["bits"]
        return LandMask(bits, bits.shape[0], int(stored["columns"]))


def draw_base_tile(mask: LandMask, z: int, x: int, y: int) -> bytes:
    """One base-map tile as PNG bytes: land, sea and the coast between them."""
    import numpy as np
    from PIL import Image

    world = TILE_SIZE * 2**z
    pixels = np.arange(TILE_SIZE) + 0.5
    lon = (x * TILE_SIZE + pixels) / world * 360.0 - 180.0
    mercator_y = math.pi * (1 - 2 * (y * TILE_SIZE + pixels) / world)
    lat = np.degrees(np.arctan(np.sinh(mercator_y)))
    land = mask.is_land(lat[:, np.newaxis], lon[np.newaxis, :])
    coast = np.zeros_like(land)
    coast[1:, :] |= land[1:, :] != land[:-1, :]
    coast[:, 1:] |= land[:, 1:] != land[:, :-1]
    index = np.where(coast & land, 2, land.astype(np.uint8)).astype(np.uint8)
    image = Image.frombytes("P", (TILE_SIZE, TILE_SIZE), index.tobytes())
    image.putpalette([*WATER, *LAND, *COAST])
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
