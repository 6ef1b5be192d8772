"""Journey statistics on the trackable read model: great-circle distance
along the stops in journey order (the short way over the antimeridian and the poles),
stop count, countries in order of first visit, first and last stop's time, first and last
day seen (each stop's "seen on" day, whatever its place in the journey); kept by every
change of the journey (a stop added, deleted, an account's stops removed) and equal to a
recomputation from the stops."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.integrations.geo_data import great_circle_km
from app.models.trackable import JourneyStop, Trackable
from app.services.trackables.journey import statistics
from tests.api.trackables.conftest import Cast
from tests.factories import make_note, make_trackable, make_user

ZURICH = (47.3769, 8.5417)
BERLIN = (52.52, 13.405)
PARIS = (48.8566, 2.3522)
MID_ATLANTIC = (0.0, -30.0)
KM_PER_DEGREE = 6371.0088 * 3.141592653589793 / 180  # 111.195 km on a great circle


def add(api, cast: Cast, point: tuple[float, float], who: str = "author", **body) -> dict:
    latitude, longitude = point
    response = api.as_user(getattr(cast, who)).post(
        f"/api/trackables/{cast.trackable.id}/journey-stops",
        json={"latitude": latitude, "longitude": longitude, **body},
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def stats(api, trackable, user=None) -> dict:
    response = api.as_user(user).get(f"/api/trackables/{trackable.id}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["journeyStatistics"]


def recomputed(trackable_id) -> statistics.JourneyStatistics:
    return statistics.compute(statistics.journey_points(trackable_id))


def test_a_trackable_without_stops_has_empty_statistics(api, cast):
    assert stats(api, cast.trackable) == {
        "distanceKm": 0.0,
        "stopCount": 0,
        "countries": [],
        "firstStopUtc": None,
        "lastStopUtc": None,
        "firstSeenOn": None,
        "lastSeenOn": None,
    }


def test_one_degree_along_the_equator_is_about_111_km(api, cast):
    add(api, cast, (0.0, 0.0))
    add(api, cast, (0.0, 1.0))
    found = stats(api, cast.trackable)
    assert found["distanceKm"] == pytest.approx(KM_PER_DEGREE, abs=0.01)
    assert found["distanceKm"] == pytest.approx(111.2, abs=0.05)
    assert found["stopCount"] == 2


def test_a_leg_over_the_antimeridian_goes_the_short_way(api, cast):
    add(api, cast, (0.0, 179.5))
    add(api, cast, (0.0, -179.5))
    assert stats(api, cast.trackable)["distanceKm"] == pytest.approx(KM_PER_DEGREE, abs=0.01)


def test_a_leg_over_the_pole_goes_the_short_way(api, cast):
    add(api, cast, (89.0, 0.0))
    add(api, cast, (89.0, 180.0))  # two degrees of latitude over the pole
    assert stats(api, cast.trackable)["distanceKm"] == pytest.approx(2 * KM_PER_DEGREE, abs=0.01)


def test_distance_sums_the_legs_in_journey_order(api, cast):
    for point in [(0.0, 0.0), (0.0, 2.0), (0.0, 1.0)]:
        add(api, cast, point)
    # 0 -> 2 -> 1 is three degrees (not the two of 0 -> 1 -> 2, a sorted order)
    assert stats(api, cast.trackable)["distanceKm"] == pytest.approx(3 * KM_PER_DEGREE, abs=0.01)


def test_countries_are_listed_in_order_of_first_visit(api, cast):
    for point in [ZURICH, MID_ATLANTIC, BERLIN, ZURICH, PARIS, BERLIN]:
        add(api, cast, point)
    found = stats(api, cast.trackable)
    assert found["countries"] == ["CH", "DE", "FR"]  # mid-ocean names no country
    assert found["stopCount"] == 6


def test_first_and_last_stop_times_are_the_oldest_and_newest_stops(api, cast):
    first = add(api, cast, ZURICH)
    add(api, cast, BERLIN)
    last = add(api, cast, PARIS)
    found = stats(api, cast.trackable)
    assert found["firstStopUtc"] == first["associatedUtc"]
    assert found["lastStopUtc"] == last["associatedUtc"]


def utc_day(stamp: str) -> str:
    """The UTC day of a wire time."""
    return datetime.fromisoformat(stamp).astimezone(UTC).date().isoformat()


def days_ago(days: int) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def test_seen_on_days_are_the_earliest_and_latest_of_the_stops_days(api, cast):
    seen = days_ago(3)
    first = add(api, cast, ZURICH, observedUtc=seen.isoformat())
    late = add(api, cast, BERLIN, observedUtc=days_ago(20).isoformat())  # reported late
    live = add(api, cast, PARIS)  # no seen-on day: seen when it was saved
    journey = api.get(f"/api/trackables/{cast.trackable.id}/journey").get_json()
    ids = [stop["journeyStopId"] for stop in (first, late, live)]
    assert [stop["journeyStopId"] for stop in journey] == ids  # still oldest stop first
    found = stats(api, cast.trackable)
    assert found["firstSeenOn"] == utc_day(late["observedUtc"])
    assert found["lastSeenOn"] == utc_day(live["associatedUtc"])
    assert found["firstStopUtc"] == first["associatedUtc"]
    assert found["lastStopUtc"] == live["associatedUtc"]
    assert found["firstSeenOn"] < utc_day(first["associatedUtc"])


def test_a_stop_without_a_seen_on_day_counts_the_day_it_was_saved(api, cast):
    only = add(api, cast, ZURICH)
    found = stats(api, cast.trackable)
    assert found["firstSeenOn"] == found["lastSeenOn"] == utc_day(only["associatedUtc"])


def test_the_seen_on_day_is_the_utc_day_of_the_observed_time(api, cast):
    day = days_ago(5).date()
    # 00:30 at UTC+02:00 is 22:30 UTC of the day before
    add(api, cast, ZURICH, observedUtc=f"{day.isoformat()}T00:30:00+02:00")
    found = stats(api, cast.trackable)
    assert found["firstSeenOn"] == (day - timedelta(days=1)).isoformat()


def test_deleting_the_earliest_seen_stop_moves_first_seen_on(api, cast):
    early = add(api, cast, ZURICH, observedUtc=days_ago(30).isoformat())
    later = add(api, cast, BERLIN, observedUtc=days_ago(10).isoformat())
    assert stats(api, cast.trackable)["firstSeenOn"] == utc_day(early["observedUtc"])
    response = api.as_user(cast.owner).delete(
        f"/api/trackables/{cast.trackable.id}/journey-stops/{early['journeyStopId']}"
    )
    assert response.status_code == 204
    found = stats(api, cast.trackable)
    assert found["firstSeenOn"] == found["lastSeenOn"] == utc_day(later["observedUtc"])


def test_a_deleted_stop_updates_the_statistics(api, cast):
    add(api, cast, ZURICH)
    middle = add(api, cast, (0.0, 0.0))  # far away: most of the distance
    last = add(api, cast, BERLIN)
    before = stats(api, cast.trackable)
    response = api.as_user(cast.owner).delete(
        f"/api/trackables/{cast.trackable.id}/journey-stops/{middle['journeyStopId']}"
    )
    assert response.status_code == 204
    after = stats(api, cast.trackable)
    assert after["stopCount"] == 2
    assert after["distanceKm"] == pytest.approx(great_circle_km(*ZURICH, *BERLIN), abs=0.001)
    assert after["distanceKm"] < before["distanceKm"]
    assert after["lastStopUtc"] == last["associatedUtc"]
    assert after["countries"] == ["CH", "DE"]


def test_deleting_the_only_stop_empties_the_statistics(api, cast):
    only = add(api, cast, ZURICH)
    api.as_user(cast.owner).delete(
        f"/api/trackables/{cast.trackable.id}/journey-stops/{only['journeyStopId']}"
    )
    assert stats(api, cast.trackable) == {
        "distanceKm": 0.0,
        "stopCount": 0,
        "countries": [],
        "firstStopUtc": None,
        "lastStopUtc": None,
        "firstSeenOn": None,
        "lastSeenOn": None,
    }


def test_statistics_are_on_every_read_of_the_trackable(api, cast):
    add(api, cast, ZURICH)
    add(api, cast, BERLIN)
    listed = api.get("/api/trackables/public").get_json()
    (item,) = [one for one in listed if one["trackableId"] == str(cast.trackable.id)]
    assert item["journeyStatistics"] == stats(api, cast.trackable)
    mine = api.as_user(cast.owner).get("/api/trackables/mine").get_json()
    (own,) = [one for one in mine if one["trackableId"] == str(cast.trackable.id)]
    assert own["journeyStatistics"]["countries"] == ["CH", "DE"]


def test_an_activations_initial_stop_counts(api):
    owner = make_user()
    trackable = make_trackable(None, created_by_user_id=owner.id)
    db.session.commit()
    response = api.as_user(owner).post(
        f"/api/trackables/{trackable.id}/activate",
        json={
            "name": "Paddle",
            "initialJourneyStopLatitude": BERLIN[0],
            "initialJourneyStopLongitude": BERLIN[1],
        },
    )
    assert response.status_code == 200, response.get_json()
    found = stats(api, trackable, owner)
    assert (found["stopCount"], found["countries"]) == (1, ["DE"])


def test_attaching_to_a_note_counts_the_stop_at_the_note(api, cast):
    note = make_note(owner=cast.owner, latitude=PARIS[0], longitude=PARIS[1])
    db.session.commit()
    response = api.as_user(cast.owner).post(
        f"/api/public/notes/{note.id}/trackables",
        json={"selectedActiveTrackableIds": [str(cast.trackable.id)]},
    )
    assert response.status_code == 204, response.get_json()
    assert stats(api, cast.trackable)["countries"] == ["FR"]


def test_an_authors_account_deletion_updates_the_trackables_they_visited(api, cast):
    add(api, cast, ZURICH, who="owner")
    add(api, cast, BERLIN, who="author")
    add(api, cast, PARIS, who="owner")
    response = api.as_user(cast.author).delete("/api/account")
    assert response.status_code == 200, response.get_json()
    found = stats(api, cast.trackable)
    assert found["stopCount"] == 2
    assert found["countries"] == ["CH", "FR"]
    assert found["distanceKm"] == pytest.approx(great_circle_km(*ZURICH, *PARIS), abs=0.001)


def test_stored_statistics_equal_a_recomputation(api, cast):
    points = [ZURICH, BERLIN, (0.0, 179.9), (0.0, -179.9), PARIS]
    for point, ago in zip(points, [9, 2, 5, 12, 1], strict=True):
        add(api, cast, point, observedUtc=days_ago(ago).isoformat())
    db.session.expire_all()
    trackable = db.session.get(Trackable, cast.trackable.id)
    assert statistics.stored(trackable) == recomputed(cast.trackable.id)
    assert (
        db.session.scalar(
            select(JourneyStop.country_code).where(
                JourneyStop.trackable_id == cast.trackable.id, JourneyStop.latitude == PARIS[0]
            )
        )
        == "FR"
    )
