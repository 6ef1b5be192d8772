"""Hosted map tiles GET /maps/tiles/{z}/{x}/{y}.png (app/storage/tiles.py): the tile
directory first, then an MBTiles file, then the built-in base map drawn from the
shipped country borders and place names (cached), and 404 beyond every source."""

from __future__ import annotations

import io
import sqlite3

import pytest
from PIL import Image

from app.storage import tiles

PNG = b"\x89PNG\r\n\x1a\n"


def image_of(response) -> Image.Image:
    return Image.open(io.BytesIO(response.get_data())).convert("RGB")


def test_the_base_map_serves_low_zoom_tiles_on_a_fresh_machine(api, app):
    response = api.get("/maps/tiles/0/0/0.png")
    assert response.status_code == 200
    assert response.mimetype == "image/png"
    assert "max-age=86400" in response.headers["Cache-Control"]
    image = image_of(response)
    assert image.size == (256, 256)
    colours = {colour for _, colour in image.getcolors(maxcolors=16)}
    assert {tiles.LAND, tiles.WATER} <= colours


@pytest.mark.parametrize(
    ("z", "x", "y", "colour"),
    [
        (6, 33, 22, tiles.LAND),  # northern Italy, inland
        (6, 20, 25, tiles.WATER),  # the middle of the North Atlantic
    ],
)
def test_base_map_tiles_show_land_and_sea_where_they_are(api, z, x, y, colour):
    image = image_of(api.get(f"/maps/tiles/{z}/{x}/{y}.png"))
    assert image.getpixel((128, 128)) == colour


def test_base_map_tiles_are_kept_in_the_cache(api, app):
    api.get("/maps/tiles/2/1/1.png")
    cached = app.config["MAP_TILE_CACHE"] / tiles.BASE_MAP_VERSION / "2" / "1" / "1.png"
    assert cached.read_bytes().startswith(PNG)
    assert list(cached.parent.glob("*.part")) == []


def test_tiles_cached_by_an_older_drawing_are_not_served(api, app):
    """A new style is kept in a folder of its own: tiles the old one left are ignored."""
    old = app.config["MAP_TILE_CACHE"] / "5" / "16" / "11.png"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes(PNG + b"old style")
    response = api.get("/maps/tiles/5/16/11.png")
    assert response.status_code == 200
    assert response.get_data() != PNG + b"old style"
    image_of(response)  # a whole PNG


def test_the_base_map_reaches_city_level(api):
    assert tiles.BASE_MAP_MAX_ZOOM >= 10
    response = api.get("/maps/tiles/10/518/352.png")  # Paris
    assert response.status_code == 200
    assert image_of(response).size == (256, 256)


def test_the_base_map_stops_at_its_zoom(api):
    assert api.get(f"/maps/tiles/{tiles.BASE_MAP_MAX_ZOOM + 1}/0/0.png").status_code == 404


def test_the_base_map_can_be_switched_off(api, app):
    app.config["MAP_BASE_TILES"] = False
    assert api.get("/maps/tiles/0/0/0.png").status_code == 404


def test_a_tile_directory_wins_over_the_base_map(api, app):
    folder = app.config["MAP_TILE_ROOT"] / "1" / "0"
    folder.mkdir(parents=True)
    (folder / "1.png").write_bytes(PNG + b"operator")
    assert api.get("/maps/tiles/1/0/1.png").get_data() == PNG + b"operator"


def make_mbtiles(path, rows) -> None:
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, "
        "tile_data BLOB)"
    )
    connection.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
    connection.commit()
    connection.close()


def test_an_mbtiles_file_serves_its_tiles_with_rows_counted_from_the_south(api, app, tmp_path):
    path = tmp_path / "world.mbtiles"
    jpeg = b"\xff\xd8\xff\xe0jpeg tile"
    # XYZ 12/2100/1400 is TMS row 2**12 - 1 - 1400 = 2695
    make_mbtiles(path, [(12, 2100, 2695, PNG + b"deep"), (12, 2101, 2695, jpeg)])
    app.config["MAP_TILE_MBTILES"] = str(path)
    response = api.get("/maps/tiles/12/2100/1400.png")
    assert (response.status_code, response.get_data()) == (200, PNG + b"deep")
    response = api.get("/maps/tiles/12/2101/1400.png")
    assert (response.mimetype, response.get_data()) == ("image/jpeg", jpeg)
    assert api.get("/maps/tiles/12/2100/1401.png").status_code == 404  # not in the file
    assert api.get("/maps/tiles/0/0/0.png").status_code == 200  # the base map fills in


def test_vector_tiles_in_an_mbtiles_file_are_not_served_as_images(api, app, tmp_path):
    path = tmp_path / "vector.mbtiles"
    make_mbtiles(path, [(12, 1, 4094, b"\x1f\x8b gzip protobuf")])
    app.config["MAP_TILE_MBTILES"] = str(path)
    assert api.get("/maps/tiles/12/1/1.png").status_code == 404


@pytest.mark.parametrize("path", ["3/8/0", "3/0/8", "23/0/0"])
def test_tiles_outside_the_world_are_404(api, path):
    assert api.get(f"/maps/tiles/{path}.png").status_code == 404


def test_concurrent_first_requests_for_one_tile_all_get_the_whole_tile(app):
    """Workers drawing the same tile at once each write a temporary file and rename it:
    nobody reads half a file, and one file is left."""
    import threading

    folder = app.config["MAP_TILE_CACHE"] / tiles.BASE_MAP_VERSION / "3" / "4"
    (folder / "2.png").unlink(missing_ok=True)
    warm = app.test_client().get("/maps/tiles/0/0/0.png")  # the borders, decoded once
    assert warm.status_code == 200
    warm.close()
    barrier = threading.Barrier(4)
    results: list[bytes] = []

    def fetch() -> None:
        client = app.test_client()
        barrier.wait()
        response = client.get("/maps/tiles/3/4/2.png")
        results.append(response.get_data() if response.status_code == 200 else b"")
        response.close()

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(result.startswith(PNG) for result in results)
    assert len(set(results)) == 1
    assert sorted(path.name for path in folder.iterdir()) == ["2.png"]
