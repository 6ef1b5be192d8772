"""The journey map's layout (app/web/maps.py): the zoom that fits every stop, the tiles
that cover the frame, the stops placed on them."""

from __future__ import annotations

import pytest

from app.web.maps import HEIGHT, MARGIN, WIDTH, choose_zoom, journey_map, world_pixel

TILES = "/maps/tiles/{z}/{x}/{y}.png"


def test_no_stops_no_map():
    assert journey_map([], tile_url=TILES, max_zoom=6) is None


def test_the_zoom_is_the_highest_at_which_every_stop_fits():
    zurich, munich = (47.3769, 8.5417), (48.1374, 11.5755)
    assert choose_zoom([zurich, munich], 6) == 6
    assert choose_zoom([zurich, munich], 12) == 7
    assert choose_zoom([zurich, (-33.87, 151.21)], 12) == 2  # to Sydney: most of the world
    assert choose_zoom([zurich], 12) == 5  # one stop: its region
    assert choose_zoom([zurich], 3) == 3


def test_world_pixels_follow_web_mercator():
    assert world_pixel(0, 0, 0) == pytest.approx((128, 128))
    assert world_pixel(0, -180, 1) == pytest.approx((0, 256))
    assert world_pixel(89.9, 180, 0)[1] == pytest.approx(0, abs=0.01)  # clamped at the edge


def test_stops_lie_inside_the_frame_and_tiles_cover_it():
    stops = [(47.3769, 8.5417, "Zürich"), (48.1374, 11.5755, "Munich"), (45.46, 9.19, "Milan")]
    found = journey_map(stops, tile_url=TILES, max_zoom=6)
    assert found is not None
    for stop in found.stops:
        assert MARGIN - 1 <= stop.x <= WIDTH - MARGIN + 1
        assert MARGIN - 1 <= stop.y <= HEIGHT - MARGIN + 1
    assert [stop.label for stop in found.stops] == ["Zürich", "Munich", "Milan"]
    assert min(tile.x for tile in found.tiles) <= 0 < max(tile.x for tile in found.tiles) + 256
    assert min(tile.y for tile in found.tiles) <= 0
    assert max(tile.x for tile in found.tiles) + 256 >= WIDTH
    assert max(tile.y for tile in found.tiles) + 256 >= HEIGHT
    assert all(tile.url.startswith(f"/maps/tiles/{found.zoom}/") for tile in found.tiles)
    assert found.route.count(",") == 3


def test_tiles_wrap_around_the_antimeridian_and_stop_at_the_poles():
    found = journey_map([(0.0, 179.9, "")], tile_url=TILES, max_zoom=0)
    assert found is not None
    assert {tile.url for tile in found.tiles} == {"/maps/tiles/0/0/0.png"}
    near_pole = journey_map([(84.0, 0.0, "")], tile_url=TILES, max_zoom=2)
    assert near_pole is not None
    assert all(0 <= int(tile.url.split("/")[-1][:-4]) < 4 for tile in near_pole.tiles)
