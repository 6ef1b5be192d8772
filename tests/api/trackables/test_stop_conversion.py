"""Converting a journey stop to a note (contract: Trackables: comments and journey, rule 4;
error codes `trackable_journey_stop_convert_forbidden` / `..._rejected`): only the
signed-in creator of a direct report, once, into a personal note at the stop's point."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.trackable import JourneyStop
from tests.api.trackables.test_journey import BERLIN, journey, stop_at_note, stops_url
from tests.conftest import assert_problem
from tests.factories import count_rows, make_note, make_trackable

NOTE = {"title": "Found the bug here", "body": "Under the bench."}


def report(api, cast, user=None, **body) -> dict:
    response = api.as_user(user).post(
        stops_url(cast.trackable), json={"latitude": 52.520049, "longitude": 13.405049, **body}
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def convert(api, cast, stop_id, user, trackable=None, **body):
    url = f"{stops_url(trackable or cast.trackable)}/{stop_id}/note"
    return api.as_user(user).post(url, json={**NOTE, **body})


def test_the_creator_turns_a_direct_report_into_a_note_at_its_point(api, cast):
    stop = report(api, cast, cast.author)
    response = convert(api, cast, stop["journeyStopId"], cast.author)
    assert response.status_code == 201, response.get_data(as_text=True)
    note = response.get_json()
    assert (note["title"], note["latitude"], note["longitude"]) == (NOTE["title"], 52.52, 13.405)
    assert note["visibility"] == "Private"
    stored = db.session.scalars(select(Note)).one()
    assert stored.owner_user_id == cast.author.id
    (after,) = journey(api, cast.trackable, cast.author)
    assert after["isLocationOnly"] is False
    assert after["canConvertToNote"] is False
    assert after["currentNotesAtCoordinate"][0]["noteId"] == note["noteId"]
    assert (after["latitude"], after["locationLabel"]) == (stop["latitude"], stop["locationLabel"])


def test_the_note_takes_the_create_bodys_visibility(api, cast):
    stop = report(api, cast, cast.author)
    response = convert(api, cast, stop["journeyStopId"], cast.author, visibility="Public")
    assert response.get_json()["visibility"] == "Public"


@pytest.mark.parametrize("who", ["owner", "team_admin", "stranger"])
def test_only_the_creator_converts(api, cast, who):
    stop = report(api, cast, cast.author)
    response = convert(api, cast, stop["journeyStopId"], getattr(cast, who))
    assert_problem(response, 403, code="trackable_journey_stop_convert_forbidden")
    assert count_rows(Note) == 0


def test_an_anonymous_report_is_converted_by_nobody(api, cast):
    stop = report(api, cast, accessCode=cast.secret)
    response = convert(api, cast, stop["journeyStopId"], cast.owner)
    assert_problem(response, 403, code="trackable_journey_stop_convert_forbidden")


def test_a_stop_converts_once(api, cast):
    stop = report(api, cast, cast.author)
    assert convert(api, cast, stop["journeyStopId"], cast.author).status_code == 201
    again = convert(api, cast, stop["journeyStopId"], cast.author)
    assert_problem(again, 400, code="trackable_journey_stop_convert_rejected")
    assert count_rows(Note) == 1


def test_a_stop_recorded_at_a_note_is_no_direct_report(api, cast):
    note = make_note(cast.author, visibility=NoteVisibility.PUBLIC, **BERLIN)
    stop = stop_at_note(cast.trackable, note, cast.author)
    response = convert(api, cast, stop.id, cast.author)
    assert_problem(response, 400, code="trackable_journey_stop_convert_rejected")
    assert count_rows(Note) == 1


def test_an_invalid_note_body_converts_nothing(api, cast):
    stop = report(api, cast, cast.author)
    response = convert(api, cast, stop["journeyStopId"], cast.author, title="")
    assert "title" in assert_problem(response, 400)["errors"]
    assert count_rows(Note) == 0
    assert db.session.get(JourneyStop, uuid.UUID(stop["journeyStopId"])).note_id is None


def test_coordinates_in_the_body_are_ignored_the_note_stands_at_the_stop(api, cast):
    stop = report(api, cast, cast.author)
    response = convert(api, cast, stop["journeyStopId"], cast.author, latitude=1.0)
    assert (response.get_json()["latitude"], response.get_json()["longitude"]) == (52.52, 13.405)


def test_converting_needs_a_sign_in(api, cast):
    stop = report(api, cast, cast.author)
    assert_problem(convert(api, cast, stop["journeyStopId"], None), 401)


def test_a_stop_of_another_trackable_is_not_found(api, cast):
    stop = report(api, cast, cast.author)
    other = make_trackable(cast.author)
    response = convert(api, cast, stop["journeyStopId"], cast.author, trackable=other)
    assert_problem(response, 404, code="trackable_journey_stop_not_found")


def test_a_stop_whose_note_went_away_is_still_no_direct_report(api, cast):
    note = make_note(cast.author, visibility=NoteVisibility.PUBLIC, **BERLIN)
    stop = stop_at_note(cast.trackable, note, cast.author)
    stop.note_id = None  # as when the note's owner deletes their account
    db.session.commit()
    (read,) = journey(api, cast.trackable, cast.author)
    assert read["canConvertToNote"] is False
    response = convert(api, cast, stop.id, cast.author)
    assert_problem(response, 400, code="trackable_journey_stop_convert_rejected")
