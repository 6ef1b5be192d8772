"""The journey's GeoJSON (app.storage.geojson): positions as [longitude, latitude], the line
cut where a leg crosses the antimeridian (RFC 7946, 3.1.9), no line under two points."""

from __future__ import annotations

import json

import geojson
import pytest

from app.storage.geojson import PointFeature, feature_collection, line_geometry, line_parts


def test_a_line_keeps_the_points_in_order_as_longitude_latitude():
    assert line_parts([(1.0, 2.0), (3.0, 4.0), (1.0, 2.0)]) == [
        [[2.0, 1.0], [4.0, 3.0], [2.0, 1.0]]
    ]


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        # eastwards over the antimeridian
        (
            [(0.0, 170.0), (10.0, -170.0)],
            [[[170.0, 0.0], [180.0, 5.0]], [[-180.0, 5.0], [-170.0, 10.0]]],
        ),
        # westwards
        (
            [(10.0, -170.0), (0.0, 170.0)],
            [[[-170.0, 10.0], [-180.0, 5.0]], [[180.0, 5.0], [170.0, 0.0]]],
        ),
        # starting on it: no one-point part before the cut
        ([(0.0, 180.0), (0.0, -179.0)], [[[-180.0, 0.0], [-179.0, 0.0]]]),
        # there and back: three parts
        (
            [(0.0, 179.0), (0.0, -179.0), (0.0, 179.0)],
            [
                [[179.0, 0.0], [180.0, 0.0]],
                [[-180.0, 0.0], [-179.0, 0.0], [-180.0, 0.0]],
                [[180.0, 0.0], [179.0, 0.0]],
            ],
        ),
    ],
)
def test_a_leg_over_the_antimeridian_is_cut_there(points, expected):
    assert line_parts(points) == expected


def test_half_way_round_is_not_a_crossing():
    # 180 degrees apart either way is as short: drawn as given (over a pole, say)
    assert line_parts([(89.0, 0.0), (89.0, 180.0)]) == [[[0.0, 89.0], [180.0, 89.0]]]


@pytest.mark.parametrize("points", [[], [(1.0, 2.0)]])
def test_fewer_than_two_points_make_no_line(points):
    assert line_geometry(points) is None


def test_the_collection_is_valid_geojson_line_first():
    points = [
        PointFeature(latitude=0.0, longitude=179.0, feature_id="a", properties={"n": 1}),
        PointFeature(latitude=0.0, longitude=-179.0, feature_id="b", properties={"n": 2}),
    ]
    document = feature_collection(points, line_properties={"name": "x"})
    parsed = geojson.loads(json.dumps(document))
    assert parsed.is_valid, parsed.errors()
    assert [f["geometry"]["type"] for f in document["features"]] == [
        "MultiLineString",
        "Point",
        "Point",
    ]
    assert [f.get("id") for f in document["features"]] == [None, "a", "b"]
    assert document["features"][0]["properties"] == {"name": "x"}
