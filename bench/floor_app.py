"""The discovery floor: the two public discovery routes written as directly as they can be,
to measure the API against (bench/discovery_floor.py serves it with gunicorn).

    gunicorn -w 4 bench.floor_app:app        (DATABASE_URL=postgresql://...)

No project code: a bare WSGI callable, plain psycopg2 (one autocommit connection per
worker), the best statement for each window size written by hand, orjson. It answers only
well-formed requests (the benchmark sends nothing else); validation, rate limits, logging
and request ids are what the API adds on top, which is the point of comparing.

Same records, same order as the API: newest activity first, ties by id, at most 500, and
`X-Result-Truncated: true` when there were more.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

import orjson
import psycopg2

CAP = 500
EARTH_RADIUS_KM = 6371.0088
RADIUS_KM = 5.0

COLUMNS = """CAST(n.id AS TEXT), CAST(n.owner_user_id AS TEXT), n.owner_user_name,
 CAST(n.category_id AS TEXT), n.title, n.body, n.content_language, n.latitude, n.longitude,
 n.visibility, n.comment_policy, n.external_link_url, n.external_link_description,
 n.is_deleted,
 to_char(n.updated_utc AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
 to_char(n.last_activity_utc AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
 NULL, CAST(n.team_id AS TEXT)"""
KEYS = (
    "noteId",
    "ownerUserId",
    "ownerUserName",
    "categoryId",
    "title",
    "body",
    "contentLanguage",
    "latitude",
    "longitude",
    "visibility",
    "commentPolicy",
    "externalLinkUrl",
    "externalLinkDescription",
    "isDeleted",
    "updatedUtc",
    "lastActivityUtc",
    "clientMutationId",
    "teamId",
)
ORDER = "ORDER BY n.last_activity_utc DESC, n.id DESC LIMIT %(limit)s"

# The window in SQL (wrapping across the antimeridian), and the exact circle test.
WINDOW = "n.latitude BETWEEN %(south)s AND %(north)s AND n.longitude BETWEEN %(west)s AND %(east)s"
WINDOW_WRAPPED = (
    "n.latitude BETWEEN %(south)s AND %(north)s"
    " AND (n.longitude >= %(west)s OR n.longitude <= %(east)s)"
)
CIRCLE = (
    " AND (abs(sin((radians(n.latitude) - %(phi)s) * 0.5)) + 1e-100)"
    " * (abs(sin((radians(n.latitude) - %(phi)s) * 0.5)) + 1e-100)"
    " + %(cos_phi)s * cos(radians(n.latitude))"
    " * (abs(sin((radians(n.longitude) - %(lam)s) * 0.5)) + 1e-100)"
    " * (abs(sin((radians(n.longitude) - %(lam)s) * 0.5)) + 1e-100) <= %(limit_a)s"
)


def statement(where: str, size: str) -> str:
    """The best form per window size (bench/README.md, "Discovery at the floor"):

    - small: the position index finds the window's few thousand notes; the newest ids
      first from the index alone, then the records by primary key.
    - medium: the same two steps; the planner reads the activity (or language) index in
      order from the index alone until enough match.
    - wide: one scan of the activity (or language) index and its rows.
    """
    condition = "n.is_publicly_discoverable AND " + where
    if size == "wide":
        return f"SELECT {COLUMNS} FROM notes n WHERE {condition} {ORDER}"  # noqa: S608 - constants
    # Constant SQL: the numbers and the language are bound parameters.
    newest = f"SELECT n.id, n.last_activity_utc FROM notes n WHERE {condition} {ORDER}"  # noqa: S608
    return (
        f"SELECT {COLUMNS} FROM notes n JOIN ({newest}) AS newest ON newest.id = n.id"  # noqa: S608
        " ORDER BY newest.last_activity_utc DESC, newest.id DESC"
    )


def size_of(south: float, west: float, north: float, east: float) -> str:
    width = east - west + (360.0 if west > east else 0.0)
    area = (north - south) * width
    if area <= 4.0:
        return "small"
    return "wide" if area >= 180.0 * 360.0 / 4 else "medium"


def circle_window(latitude: float, longitude: float, radius_km: float) -> tuple[float, ...]:
    angular = radius_km / EARTH_RADIUS_KM
    phi = math.radians(latitude)
    low, high = phi - angular, phi + angular
    if low <= -math.pi / 2 or high >= math.pi / 2:
        return (
            math.degrees(max(low, -math.pi / 2)),
            -180.0,
            math.degrees(min(high, math.pi / 2)),
            180.0,
        )
    half = math.degrees(math.asin(math.sin(angular) / math.cos(phi)))
    west, east = longitude - half, longitude + half
    west += 360.0 if west < -180.0 else 0.0
    east -= 360.0 if east > 180.0 else 0.0
    return math.degrees(low), west, math.degrees(high), east


_connection: Any = None


def cursor() -> Any:
    global _connection
    if _connection is None or _connection.closed:
        _connection = psycopg2.connect(os.environ["DATABASE_URL"])
        _connection.autocommit = True
    return _connection.cursor()


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ["PATH_INFO"]
    query = dict(parse_qsl(environ.get("QUERY_STRING", "")))
    params: dict[str, Any] = {"limit": CAP + 1}
    if path == "/api/notes/public/bounds":
        window = tuple(
            float(query[name])
            for name in ("minLatitude", "minLongitude", "maxLatitude", "maxLongitude")
        )
        circle = ""
    elif path == "/api/notes/public/nearby":
        latitude, longitude = float(query["latitude"]), float(query["longitude"])
        radius = float(query.get("radiusKm", RADIUS_KM))
        window = circle_window(latitude, longitude, radius)
        angular = radius / EARTH_RADIUS_KM
        params.update(
            phi=math.radians(latitude),
            lam=math.radians(longitude),
            cos_phi=math.cos(math.radians(latitude)),
            limit_a=max(math.sin(angular / 2) ** 2, 4e-200) if angular < math.pi else 2.0,
        )
        circle = CIRCLE
    else:
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]
    params.update(south=window[0], west=window[1], north=window[2], east=window[3])
    where = (WINDOW_WRAPPED if window[1] > window[3] else WINDOW) + circle
    if query.get("contentLanguage"):
        where += " AND n.content_language = %(language)s"
        params["language"] = query["contentLanguage"]
    with cursor() as cur:
        cur.execute(statement(where, size_of(*window)), params)
        rows = cur.fetchall()
    body = orjson.dumps([dict(zip(KEYS, row, strict=True)) for row in rows[:CAP]])
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if len(rows) > CAP:
        headers.append(("X-Result-Truncated", "true"))
    start_response("200 OK", headers)
    return [body]
