"""Non-API routes: health probes, the offline API-docs assets and hosted map tiles."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

import flask_swagger_ui
from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    jsonify,
    send_file,
    send_from_directory,
)

from app.errors import problem
from app.extensions import db
from app.platform.database import RETRY_AFTER_SECONDS, check_database, note_failure
from app.storage import tiles

web = Blueprint("web", __name__)

# Swagger UI 5 (OpenAPI 3.1) ships inside the flask-swagger-ui package: /api/docs works
# with no internet and nothing vendored into this repository.
SWAGGER_UI_DIST = Path(flask_swagger_ui.__file__).resolve().parent / "dist"


@web.get("/healthz")
def healthz() -> Response:
    """The process is up."""
    return jsonify(status="ok")


@web.get("/readyz")
def readyz() -> Response:
    """The process can serve: the database answers."""
    try:
        check_database(db.session, current_app.config)
    except Exception as error:  # any driver error means "not ready"
        note_failure(error)
        with suppress(Exception):  # the connection may have died with the database
            db.session.rollback()
        current_app.logger.warning("readiness check: database unreachable: %s", error)
        return problem(
            503,
            "Service unavailable",
            "The database is not reachable.",
            code="database_unavailable",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    return jsonify(status="ready")


@web.get("/api/docs/assets/<path:filename>")
def docs_asset(filename: str) -> Response:
    response = send_from_directory(SWAGGER_UI_DIST, filename, max_age=86400)
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
        return problem(404, "Not found", "No such tile.", code="tile_not_found")
    if tile.path is not None:
        return send_file(tile.path, mimetype=tile.mimetype, max_age=86400)
    response = Response(tile.data, mimetype=tile.mimetype)
    response.cache_control.public = True
    response.cache_control.max_age = 86400
    return response


def register_web(app: Flask) -> None:
    from app.web.images import files as image_files  # GET /Images/{Variant}/{guid}-{size}.jpg
    from app.web.pages import install_pages  # /{lang}/trackables/...
    from app.web.trackables import entry  # GET /trackable/{code}

    app.register_blueprint(web)
    app.register_blueprint(entry)
    app.register_blueprint(image_files)
    install_pages(app)
