"""A stop's precision: the writer chooses `exact` (default), `about1km`
or `about10km`; the position is snapped to that fixed degree grid (the nearest grid point,
not a random one) before anything is stored, labelled or counted, and the read model says
which precision it has."""

from __future__ import annotations

import uuid

import pytest

from app.extensions import db
from app.models.trackable import JourneyStop, StopPrecision
from app.services.trackables.journey.recording import location_label
from tests.conftest import assert_problem
from tests.factories import make_trackable, make_user


def stops_url(trackable) -> str:
    return f"/api/trackables/{trackable.id}/journey-stops"


def post(api, cast, latitude: float, longitude: float, who: str = "author", **body):
    return api.as_user(getattr(cast, who)).post(
        stops_url(cast.trackable), json={"latitude": latitude, "longitude": longitude, **body}
    )


def added(api, cast, latitude: float, longitude: float, **body) -> dict:
    response = post(api, cast, latitude, longitude, **body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


@pytest.mark.parametrize(
    ("precision", "expected"),
    [
        (None, (47.3769, 8.5417, "exact")),
        ("exact", (47.3769, 8.5417, "exact")),
        ("about1km", (47.38, 8.54, "about1km")),
        ("about10km", (47.4, 8.5, "about10km")),
    ],
)
def test_the_position_is_snapped_to_the_chosen_grid(api, cast, precision, expected):
    body = {} if precision is None else {"precision": precision}
    stop = added(api, cast, 47.376912, 8.541688, **body)
    assert (stop["latitude"], stop["longitude"], stop["precision"]) == expected
    (listed,) = api.get(f"/api/trackables/{cast.trackable.id}/journey").get_json()
    assert (listed["latitude"], listed["longitude"], listed["precision"]) == expected


def test_finds_anywhere_in_a_cell_meet_at_its_centre_and_share_the_coordinate(api, cast):
    # The 0.1 degree cell around 47.4, 8.5 spans [47.35, 47.45) x [8.45, 8.55).
    corners = [(47.3501, 8.4501), (47.4499, 8.5499), (47.4, 8.5), (47.37, 8.52)]
    found = [added(api, cast, *corner, precision="about10km") for corner in corners]
    assert {(stop["latitude"], stop["longitude"]) for stop in found} == {(47.4, 8.5)}
    assert len({stop["coordinateId"] for stop in found}) == 1
    beyond = added(api, cast, 47.4501, 8.5, precision="about10km")
    assert (beyond["latitude"], beyond["longitude"]) == (47.5, 8.5)


def test_the_same_place_gives_the_same_point_every_time(api, cast):
    points = {
        (stop["latitude"], stop["longitude"])
        for stop in (added(api, cast, -33.918861, 18.423300, precision="about1km") for _ in "abc")
    }
    assert points == {(-33.92, 18.42)}


@pytest.mark.parametrize(
    ("latitude", "longitude", "expected"),
    [
        (89.97, 179.97, (90.0, 180.0)),  # the pole and the antimeridian stay in range
        (-89.96, -179.96, (-90.0, -180.0)),
        (-0.04, -0.04, (0.0, 0.0)),  # no negative zero
    ],
)
def test_the_grid_keeps_positions_in_range(api, cast, latitude, longitude, expected):
    stop = added(api, cast, latitude, longitude, precision="about10km")
    assert (stop["latitude"], stop["longitude"]) == expected


def test_the_label_names_the_snapped_point(api, cast):
    stop = added(api, cast, 47.376912, 8.541688, precision="about10km")
    assert stop["locationLabel"] == location_label(47.4, 8.5)[0]
    assert stop["locationLabel"].endswith("Switzerland")


def test_an_unknown_precision_is_400_on_precision(api, cast):
    response = post(api, cast, 47.3, 8.5, precision="about100m")
    body = assert_problem(response, 400)
    assert "precision" in body["errors"]
    assert db.session.query(JourneyStop).count() == 0


def test_a_retry_is_answered_with_the_first_stop_and_another_precision_is_a_new_change(api, cast):
    first = added(api, cast, 47.376912, 8.541688, precision="about1km", clientMutationId="t-1")
    again = added(api, cast, 47.376912, 8.541688, precision="about1km", clientMutationId="t-1")
    assert again["journeyStopId"] == first["journeyStopId"]
    other = post(api, cast, 47.376912, 8.541688, precision="exact", clientMutationId="t-1")
    assert_problem(other, 409, code="client_mutation_id_reused")


def test_an_activations_initial_stop_takes_a_precision(api):
    owner = make_user()
    trackable = make_trackable(None, created_by_user_id=owner.id)
    db.session.commit()
    response = api.as_user(owner).post(
        f"/api/trackables/{trackable.id}/activate",
        json={
            "name": "Paddle",
            "initialJourneyStopLatitude": 52.5163,
            "initialJourneyStopLongitude": 13.3777,
            "initialJourneyStopPrecision": "about1km",
        },
    )
    assert response.status_code == 200, response.get_json()
    stop = db.session.get(JourneyStop, uuid.UUID(response.get_json()["initialJourneyStopId"]))
    assert (stop.latitude, stop.longitude, stop.precision) == (
        52.52,
        13.38,
        StopPrecision.ABOUT_1KM,
    )


def test_the_statistics_count_the_snapped_points(api, cast):
    added(api, cast, 0.04, 0.04, precision="about10km")  # (0, 0)
    added(api, cast, 0.04, 1.04, precision="about10km")  # (0, 1)
    distance = api.get(f"/api/trackables/{cast.trackable.id}").get_json()["journeyStatistics"]
    assert distance["distanceKm"] == pytest.approx(111.195, abs=0.001)
