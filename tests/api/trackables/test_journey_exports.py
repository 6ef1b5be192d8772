"""The journey as a file: GET /api/trackables/{id}/journey.gpx (GPX 1.1,
one track point per stop, valid against the schema, read back with gpxpy, each point's
`desc` starting with the day it was seen there) and
.../journey.geojson (RFC 7946, checked with the `geojson` package), their media types and
attachment names, and who may download them: whoever may read the journey."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import geojson
import gpxpy
import pytest
import xmlschema

from app.auth import build_viewer
from app.extensions import db
from app.models.trackable import StopPrecision, TrackableVisibility
from app.services.trackables import export_journey, record_stop
from tests.conftest import assert_problem
from tests.factories import make_trackable, make_user, unlock_trackable

GPX_SCHEMA = Path(__file__).resolve().parents[2] / "data" / "gpx" / "gpx11.xsd"
ZURICH = (47.3769, 8.5417)
BERLIN = (52.52, 13.405)


@pytest.fixture(scope="module")
def gpx_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(GPX_SCHEMA), allow="local")


def stop(trackable, point, precision=StopPrecision.EXACT, name="Kim", observed_utc=None):
    latitude, longitude = point
    found = record_stop(
        trackable,
        latitude=latitude,
        longitude=longitude,
        precision=precision,
        created_by=None,
        display_name=name,
        is_anonymous=True,
        observed_utc=observed_utc,
    )
    db.session.commit()
    return found


def gpx_of(api, trackable, user=None):
    return api.as_user(user).get(f"/api/trackables/{trackable.id}/journey.gpx")


def geojson_of(api, trackable, user=None):
    return api.as_user(user).get(f"/api/trackables/{trackable.id}/journey.geojson")


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def travelled(owner):
    trackable = make_trackable(owner, name="Blue bug", public_code="LN-BLUE42")
    stop(trackable, ZURICH, name="Ann")
    stop(trackable, BERLIN, StopPrecision.ABOUT_10KM, name="Ben")
    stop(trackable, (0.0, -30.0), name="Cy")
    return trackable


# --- GPX ---------------------------------------------------------------------------------


def test_the_gpx_file_is_one_track_with_a_point_per_stop(api, travelled, gpx_schema):
    response = gpx_of(api, travelled)
    assert response.status_code == 200
    assert response.mimetype == "application/gpx+xml"
    assert response.headers["Content-Disposition"] == (
        'attachment; filename="LN-BLUE42-journey.gpx"'
    )
    data = response.get_data()
    gpx_schema.validate(io.BytesIO(data))
    parsed = gpxpy.parse(data.decode())
    assert parsed.waypoints == []
    (track,) = parsed.tracks
    assert track.name == "Blue bug"
    (segment,) = track.segments
    points = [(p.latitude, p.longitude, p.name) for p in segment.points]
    assert points == [
        (47.3769, 8.5417, "Zürich, Switzerland"),
        (52.5, 13.4, "Berlin, Germany"),  # about 10 km: the snapped point only
        (0.0, -30.0, "Stop 3"),  # no place near: its number
    ]
    journey = api.get(f"/api/trackables/{travelled.id}/journey").get_json()
    times = [p.time.replace(microsecond=p.time.microsecond // 1000 * 1000) for p in segment.points]
    assert times == [datetime.fromisoformat(s["associatedUtc"]) for s in journey]
    days = [utc_day(s["associatedUtc"]) for s in journey]  # none was given a seen-on day
    assert [p.description for p in segment.points] == [
        f"Seen on {days[0]} by Ann",
        f"Seen on {days[1]} by Ben (precision: about10km)",
        f"Seen on {days[2]} by Cy",
    ]


def utc_day(stamp: str) -> str:
    return datetime.fromisoformat(stamp).astimezone(UTC).date().isoformat()


def test_each_gpx_point_says_the_day_it_was_seen_and_keeps_its_saved_time(api, owner, gpx_schema):
    trackable = make_trackable(owner, name="Red kayak")
    now = datetime.now(UTC)
    seen = [now - timedelta(days=4), now - timedelta(days=30), None]  # the second came late
    for point, observed in zip([ZURICH, BERLIN, (0.0, -30.0)], seen, strict=True):
        stop(trackable, point, name="Kim", observed_utc=observed)
    response = gpx_of(api, trackable)
    data = response.get_data()
    gpx_schema.validate(io.BytesIO(data))
    points = gpxpy.parse(data.decode()).tracks[0].segments[0].points
    journey = api.get(f"/api/trackables/{trackable.id}/journey").get_json()
    assert [(p.latitude, p.longitude) for p in points] == [
        (s["latitude"], s["longitude"]) for s in journey
    ]  # oldest stop first, as the journey
    saved = [datetime.fromisoformat(s["associatedUtc"]) for s in journey]
    assert [p.time.replace(microsecond=p.time.microsecond // 1000 * 1000) for p in points] == saved
    days = [
        observed.date().isoformat() if observed else utc_day(s["associatedUtc"])
        for observed, s in zip(seen, journey, strict=True)
    ]
    assert [p.description for p in points] == [f"Seen on {day} by Kim" for day in days]
    statistics = api.get(f"/api/trackables/{trackable.id}").get_json()["journeyStatistics"]
    assert (statistics["firstSeenOn"], statistics["lastSeenOn"]) == (days[1], days[2])


def test_an_empty_journey_is_a_valid_gpx_file_with_an_empty_track(api, owner, gpx_schema):
    quiet = make_trackable(owner)
    response = gpx_of(api, quiet)
    assert response.status_code == 200
    gpx_schema.validate(io.BytesIO(response.get_data()))
    (track,) = gpxpy.parse(response.get_data(as_text=True)).tracks
    assert [segment.points for segment in track.segments] == [[]]


def test_a_journey_over_the_antimeridian_is_valid_gpx(api, owner, gpx_schema):
    trackable = make_trackable(owner)
    for point in [(0.0, 179.99999), (0.0, -179.5), (-90.0, 180.0)]:
        stop(trackable, point)
    response = gpx_of(api, trackable)
    gpx_schema.validate(io.BytesIO(response.get_data()))
    points = gpxpy.parse(response.get_data(as_text=True)).tracks[0].segments[0].points
    assert [p.longitude for p in points] == [-180.0, -179.5, -180.0]  # 180 is written -180


# --- GeoJSON -----------------------------------------------------------------------------


def test_the_geojson_file_is_the_line_and_a_point_per_stop(api, travelled):
    response = geojson_of(api, travelled)
    assert response.status_code == 200
    assert response.mimetype == "application/geo+json"
    assert response.headers["Content-Disposition"] == (
        'attachment; filename="LN-BLUE42-journey.geojson"'
    )
    document = geojson.loads(response.get_data(as_text=True))
    assert document.is_valid, document.errors()
    assert document["type"] == "FeatureCollection"
    line, *points = document["features"]
    assert line["geometry"]["type"] == "LineString"
    assert line["geometry"]["coordinates"] == [[8.5417, 47.3769], [13.4, 52.5], [-30.0, 0.0]]
    assert line["properties"]["publicCode"] == "LN-BLUE42"
    assert line["properties"]["stopCount"] == 3
    assert line["properties"]["countries"] == ["CH", "DE"]
    journey = api.get(f"/api/trackables/{travelled.id}/journey").get_json()
    assert [p["id"] for p in points] == [s["journeyStopId"] for s in journey]
    assert [p["geometry"]["coordinates"] for p in points] == [
        [s["longitude"], s["latitude"]] for s in journey
    ]
    first = points[0]["properties"]
    assert first == {
        "journeyStopId": journey[0]["journeyStopId"],
        "coordinateId": journey[0]["coordinateId"],
        "associatedUtc": journey[0]["associatedUtc"],
        "observedUtc": None,
        "precision": "exact",
        "locationLabel": "Zürich, Switzerland",
        "countryCode": "CH",
        "isLocationOnly": True,
        "isAnonymous": True,
        "creatorDisplayText": "Ann",
    }
    assert points[1]["properties"]["precision"] == "about10km"
    assert points[2]["properties"]["countryCode"] is None


def test_a_line_over_the_antimeridian_is_cut_there(api, owner):
    trackable = make_trackable(owner)
    for point in [(10.0, 179.0), (20.0, -179.0), (30.0, -178.0)]:
        stop(trackable, point)
    document = geojson.loads(geojson_of(api, trackable).get_data(as_text=True))
    assert document.is_valid, document.errors()
    line = document["features"][0]["geometry"]
    assert line == {
        "type": "MultiLineString",
        "coordinates": [
            [[179.0, 10.0], [180.0, 15.0]],
            [[-180.0, 15.0], [-179.0, 20.0], [-178.0, 30.0]],
        ],
    }


@pytest.mark.parametrize("count", [0, 1])
def test_a_journey_of_fewer_than_two_stops_has_no_line(api, owner, count):
    trackable = make_trackable(owner)
    for _ in range(count):
        stop(trackable, ZURICH)
    document = geojson.loads(geojson_of(api, trackable).get_data(as_text=True))
    assert document.is_valid, document.errors()
    assert [f["geometry"]["type"] for f in document["features"]] == ["Point"] * count


def test_the_geojson_check_is_not_vacuous():
    broken = {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[1, 2]]}}
    assert not geojson.loads(json.dumps(broken)).is_valid


# --- who may download --------------------------------------------------------------------


@pytest.mark.parametrize("route", ["journey.gpx", "journey.geojson"])
@pytest.mark.parametrize(
    ("who", "visibility", "status"),
    [
        ("anonymous", TrackableVisibility.ALWAYS_VISIBLE, 200),
        ("stranger", TrackableVisibility.ALWAYS_VISIBLE, 200),
        ("owner", TrackableVisibility.ALWAYS_VISIBLE, 200),
        ("anonymous", TrackableVisibility.ONCE_ACCESSED, 404),
        ("stranger", TrackableVisibility.ONCE_ACCESSED, 404),
        ("unlocker", TrackableVisibility.ONCE_ACCESSED, 200),
        ("owner", TrackableVisibility.ONCE_ACCESSED, 200),
    ],
)
def test_the_files_open_to_whoever_may_read_the_journey(api, owner, route, who, visibility, status):
    trackable = make_trackable(owner, visibility=visibility)
    stop(trackable, ZURICH)
    unlocker = make_user("una")
    unlock_trackable(unlocker, trackable)
    users = {"anonymous": None, "stranger": make_user("sam"), "owner": owner, "unlocker": unlocker}
    user = users[who]
    journey = api.as_user(user).get(f"/api/trackables/{trackable.id}/journey")
    response = api.as_user(user).get(f"/api/trackables/{trackable.id}/{route}")
    assert response.status_code == journey.status_code == status
    if status == 404:
        assert_problem(response, 404, code="trackable_not_found")
        assert "Content-Disposition" not in response.headers


def test_an_unactivated_trackable_is_hidden_from_everyone_but_its_creator(api, owner):
    unactivated = make_trackable(None, created_by_user_id=owner.id)
    db.session.commit()
    assert gpx_of(api, unactivated).status_code == 404
    assert geojson_of(api, unactivated, owner).status_code == 200


def test_a_missing_trackable_is_404(api, owner):
    response = api.get("/api/trackables/00000000-0000-4000-8000-000000000000/journey.geojson")
    assert_problem(response, 404, code="trackable_not_found")


def test_a_long_journey_is_read_in_batches_in_journey_order(app, owner):
    trackable = make_trackable(owner)
    for index in range(7):
        stop(trackable, (float(index), 0.0))
    export = export_journey(build_viewer(owner), trackable.id, batch_size=3)
    assert [s.latitude for s in export.stops] == [float(i) for i in range(7)]
