"""The built-in base map's drawing (app/storage/basemap.py, app/storage/places.py): TopoJSON
decoding, land and lakes, coasts and borders told apart by shared arcs, the antimeridian,
and tiles that show borders, names and open sea where they should."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from app.storage import basemap, places

# Two unit squares side by side (A left, B right) sharing the edge x = 1, and a square C
# with a hole nobody fills; delta encoded, scaled by 0.5 and moved by (10, 20).
TOPOLOGY = {
    "type": "Topology",
    "transform": {"scale": [0.5, 0.5], "translate": [10, 20]},
    "arcs": [
        [[2, 0], [0, 2]],  # 0: (11, 20) -> (11, 21), shared by A and B
        [[2, 2], [-2, 0], [0, -2], [2, 0]],  # 1: the rest of A
        [[2, 0], [2, 0], [0, 2], [-2, 0]],  # 2: the rest of B
        [[20, 0], [8, 0], [0, 8], [-8, 0], [0, -8]],  # 3: C's outline
        [[22, 2], [0, 2], [2, 0], [0, -2], [-2, 0]],  # 4: C's hole
    ],
    "objects": {
        "countries": {
            "type": "GeometryCollection",
            "geometries": [
                {"type": "Polygon", "arcs": [[0, 1]], "properties": {"name": "A"}},
                {"type": "Polygon", "arcs": [[2, ~0]], "properties": {"name": "B"}},
                {"type": "MultiPolygon", "arcs": [[[3], [4]]], "properties": {"name": "C"}},
            ],
        }
    },
}


def tile_of(latitude: float, longitude: float, z: int) -> tuple[int, int]:
    count = 2**z
    x = int((longitude + 180) / 360 * count)
    lat = math.radians(latitude)
    y = int((1 - math.asinh(math.tan(lat)) / math.pi) / 2 * count)
    return x, y


def draw(z: int, x: int, y: int) -> np.ndarray:
    image = Image.open(io.BytesIO(basemap.draw_base_tile(z, x, y))).convert("RGB")
    assert image.size == (256, 256)
    return np.asarray(image).astype(int)


def near(pixels: np.ndarray, colour: tuple[int, int, int], within: int = 40) -> int:
    """How many pixels are within `within` (each channel) of `colour`."""
    return int((np.abs(pixels - colour).max(axis=2) <= within).sum())


def test_arcs_are_delta_decoded_and_scaled_by_the_transform():
    arcs = basemap.decode_arcs(TOPOLOGY)
    assert arcs[0].tolist() == [[11.0, 20.0], [11.0, 21.0]]
    assert arcs[1].tolist() == [[11.0, 21.0], [10.0, 21.0], [10.0, 20.0], [11.0, 20.0]]


def test_rings_join_their_arcs_and_a_negative_index_is_an_arc_reversed():
    arcs = basemap.decode_arcs(TOPOLOGY)
    assert basemap.ring_points(arcs, [0, 1]).tolist() == [
        [11, 20],
        [11, 21],
        [10, 21],
        [10, 20],
        [11, 20],
    ]
    ring = basemap.ring_points(arcs, [2, ~0])
    assert ring[0].tolist() == ring[-1].tolist() == [11, 20]  # closed
    assert ring[-2].tolist() == [11, 21]  # arc 0 walked backwards


def test_shared_arcs_are_borders_and_the_others_coasts():
    world = basemap.build_world(TOPOLOGY)
    assert len(world.land.parts) == 3  # A, B and C's outline
    assert len(world.borders.parts) == 1
    border = world.borders.parts[0]
    assert border[:, 0] == pytest.approx([(11 + 180) / 360] * 2)  # the line x = 11 degrees
    assert len(world.coasts.parts) == 4  # A's, B's, C's outline and its hole
    assert len(world.lakes.parts) == 1  # the hole no country fills


def test_a_ring_across_the_antimeridian_is_unwrapped_and_drawn_on_both_sides():
    ring = np.array([[170.0, 10], [-170, 10], [-170, 0], [170, 0], [170, 10]])
    unwrapped = basemap.unwrap(ring, closed=True)
    assert unwrapped[:, 0].tolist() == [170, 190, 190, 170, 170]
    shifted = basemap.copies(unwrapped)
    assert len(shifted) == 2
    assert shifted[1][:, 0].tolist() == [-190, -170, -170, -190, -190]


def test_a_ring_round_the_pole_is_closed_along_the_pole():
    ring = np.array([[-180.0, -70], [0, -65], [180, -70], [-180, -70]])
    closed = basemap.unwrap(ring, closed=True)
    assert closed[:, 0].tolist() == [-180, 0, 180, 180, 180, -180]  # once round, east
    assert closed[-2:].tolist() == [[180.0, -90.0], [-180.0, -90.0]]


def test_the_shipped_world_has_land_coasts_and_borders():
    world = basemap.world()
    assert len(world.land.parts) > 1000
    assert len(world.borders.parts) > 300
    assert len(world.coasts.parts) > 1000


def test_a_tile_on_the_french_german_border_shows_the_border():
    pixels = draw(7, *tile_of(48.6, 7.9, 7))  # the Rhine by Strasbourg
    assert near(pixels, basemap.BORDER) > 30
    assert near(pixels, basemap.LAND, within=2) > 30_000


def test_a_tile_inside_a_country_shows_no_border():
    pixels = draw(7, *tile_of(46.8, 2.4, 7))  # the middle of France
    assert near(pixels, basemap.BORDER, within=20) == 0


def test_an_open_sea_tile_is_all_sea():
    pixels = draw(6, *tile_of(40.0, -40.0, 6))  # the middle of the North Atlantic
    assert (pixels == basemap.WATER).all()


def test_a_tile_over_paris_at_zoom_8_is_labelled():
    z = 8
    pixels = draw(z, *tile_of(48.8566, 2.3522, z))
    assert near(pixels, places.TEXT, within=30) > 100
    assert "Paris" in [label.text for label in places.labels(z)]


def test_a_name_across_a_tile_edge_is_drawn_by_both_tiles():
    z = 8
    edge = next(
        label
        for label in places.labels(z)
        if label.box[0] // 256 != label.box[2] // 256 and label.box[1] // 256 == label.box[3] // 256
    )
    left_x, y = edge.box[0] // 256, edge.box[1] // 256
    left, right = draw(z, left_x, y), draw(z, left_x + 1, y)
    stitched = np.concatenate((left, right), axis=1)
    top, bottom = edge.box[1] - y * 256, edge.box[3] - y * 256
    start, end = edge.box[0] - left_x * 256, edge.box[2] - left_x * 256
    text = stitched[top:bottom, start:end]
    seam = 256 - start
    assert near(text[:, :seam], places.TEXT, within=30) > 0
    assert near(text[:, seam:], places.TEXT, within=30) > 0


def test_fewer_names_show_further_out_and_capitals_show_early():
    counts = [len(places.labels(z)) for z in (2, 4, 6, 8)]
    assert counts[0] == 0
    assert counts[1] < counts[2] < counts[3]
    assert "Bern" in [label.text for label in places.labels(places.CAPITALS_FROM)]


def test_names_never_overlap():
    boxes = np.array([label.box for label in places.labels(6)])
    for index, box in enumerate(boxes):
        others = np.delete(boxes, index, axis=0)
        overlapping = (
            (others[:, 0] < box[2])
            & (box[0] < others[:, 2])
            & (others[:, 1] < box[3])
            & (box[1] < others[:, 3])
        )
        assert not overlapping.any()


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("Zürich", "Zürich"),  # the font has it
        ("Łódź", "Lódz"),  # stroke and acute the font lacks, dropped
        ("Hồ Chí Minh", "Ho Chí Minh"),
        ("東京", None),  # another script: no name rather than boxes
    ],
)
def test_names_are_written_in_letters_the_font_has(name, printed):
    assert places.printable_name(name) == printed
