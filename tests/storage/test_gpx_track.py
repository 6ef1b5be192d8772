"""The GPX writer's track (app.storage.gpx, `ExportTrack`): a `<trk>` of one `<trkseg>`
after the waypoints, each point written as a waypoint is, valid GPX 1.1."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import gpxpy
import pytest
import xmlschema
from defusedxml import ElementTree

from app.storage.gpx import CHUNK_CHARS, ExportTrack, ExportWaypoint, write_gpx

DATA = Path(__file__).resolve().parent.parent / "data" / "gpx"
NS = "{http://www.topografix.com/GPX/1/1}"


@pytest.fixture(scope="module")
def gpx_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(DATA / "gpx11.xsd"), allow="local")


def written(*args, **kwargs) -> bytes:
    return b"".join(write_gpx(*args, **kwargs))


def point(index: int, **fields) -> ExportWaypoint:
    return ExportWaypoint(
        latitude=index / 10,
        longitude=-index / 10,
        name=f"P{index} <&>",
        time=datetime(2026, 1, 1, 12, index, tzinfo=UTC),
        **fields,
    )


def test_a_track_follows_the_waypoints_and_is_valid(gpx_schema):
    data = written(
        [point(0)],
        track=ExportTrack(name="Trip & back", points=[point(1), point(2, description="d")]),
    )
    gpx_schema.validate(io.BytesIO(data))
    root = ElementTree.fromstring(data)
    assert [child.tag for child in root] == [f"{NS}metadata", f"{NS}wpt", f"{NS}trk"]
    parsed = gpxpy.parse(data.decode())
    (track,) = parsed.tracks
    assert track.name == "Trip & back"
    assert [(p.name, p.time.minute, p.description) for p in track.segments[0].points] == [
        ("P1 <&>", 1, None),
        ("P2 <&>", 2, "d"),
    ]


def test_an_empty_track_is_valid(gpx_schema):
    data = written([], track=ExportTrack(name="", points=[]))
    gpx_schema.validate(io.BytesIO(data))
    assert b"<trkseg>" in data


def test_points_that_cannot_be_written_are_left_out_of_the_track(gpx_schema):
    bad = ExportWaypoint(latitude=float("nan"), longitude=0.0, name="bad")
    data = written([], track=ExportTrack(name="t", points=[point(1), bad, point(2)]))
    gpx_schema.validate(io.BytesIO(data))
    assert len(gpxpy.parse(data.decode()).tracks[0].segments[0].points) == 2


def test_a_long_track_is_streamed_in_chunks_lazily():
    consumed = []

    def points():
        for index in range(2000):
            consumed.append(index)
            yield point(index % 50)

    chunks = write_gpx([], track=ExportTrack(name="long", points=points()))
    first = next(chunks)
    assert len(first) >= CHUNK_CHARS
    assert len(consumed) < 2000  # not all read for the first chunk
    rest = b"".join(chunks)
    assert len(gpxpy.parse((first + rest).decode()).tracks[0].segments[0].points) == 2000
