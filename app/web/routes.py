"""Non-API routes: the offline API-docs assets, Leaflet's files and hosted map tiles (the
operator's probes and /metrics are app.platform.probes)."""

from __future__ import annotations

from pathlib import Path

import flask_swagger_ui
from flask import (
    Blueprint,
    Flask,
    Response,
    abort,
    current_app,
    send_file,
    send_from_directory,
)

from app.error_codes import Code
from app.errors import problem
from app.storage import tiles
from app.web.leaflet import LEAFLET_DIST, LEAFLET_MAX_AGE, LEAFLET_VERSION

web = Blueprint("web", __name__)

# Swagger UI 5 (OpenAPI 3.1) ships inside the flask-swagger-ui package: /api/docs works
# with no internet and nothing vendored into this repository.
SWAGGER_UI_DIST = Path(flask_swagger_ui.__file__).resolve().parent / "dist"


@web.get("/api/docs/assets/<path:filename>")
def docs_asset(filename: str) -> Response:
    response = send_from_directory(SWAGGER_UI_DIST, filename, max_age=86400)
    return response


@web.get("/static/leaflet/<version>/<path:filename>")
def leaflet_asset(version: str, filename: str) -> Response:
    """Leaflet's script, style sheet and images, from our own origin: the pages' CSP
    loads nothing from elsewhere. Another version's path is 404 (never a stale file
    under a name that promises a fixed one)."""
    if version != LEAFLET_VERSION:
        abort(404)
    response = send_from_directory(LEAFLET_DIST, filename, max_age=LEAFLET_MAX_AGE)
    response.cache_control.public = True
    response.cache_control.immutable = True
    return response


@web.get("/maps/tiles/<int:z>/<int:x>/<int:y>.png")
def hosted_tile(z: int, x: int, y: int) -> Response:
    """A hosted map tile, used when privacy rules forbid third-party map providers: from
    the tile directory, the MBTiles file or the built-in base map (app.storage.tiles)."""
    config = current_app.config
    mbtiles = config.get("MAP_TILE_MBTILES")
    cache_root = config.get("MAP_TILE_CACHE") if config.get("MAP_BASE_TILES", True) else None
    tile = tiles.find_tile(
        z,
        x,
        y,
        tile_root=Path(config["MAP_TILE_ROOT"]),
        mbtiles=Path(mbtiles) if mbtiles else None,
        cache_root=Path(cache_root) if cache_root else None,
    )
    if tile is None:
        return problem(404, "No such tile.", code=Code.TILE_NOT_FOUND)
    if tile.path is not None:
        return send_file(tile.path, mimetype=tile.mimetype, max_age=86400)
    response = Response(tile.data, mimetype=tile.mimetype)
    response.cache_control.public = True
    response.cache_control.max_age = 86400
    return response


def register_web(app: Flask) -> None:
    from app.web.images import files as image_files  # GET /Images/{Variant}/{guid}-{size}.jpg
    from app.web.pages import install_pages  # /, /{lang}/..., /trackable/{code}

    app.register_blueprint(web)
    app.register_blueprint(image_files)
    install_pages(app)
