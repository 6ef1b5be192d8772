"""The journey (contract: Journey stop (read shape); Trackables: comments and journey,
rules 1 and 3; decisions: journeys oldest stop first): the read shape for each viewer,
who may add and delete stops, snapping and labels, and the notes now at a stop's point."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import delete, select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.team import TeamMembership
from app.models.trackable import JourneyStop, TrackableVisibility
from app.services.trackables import record_stop
from tests.api.trackables.conftest import open_session
from tests.conftest import assert_problem
from tests.factories import (
    codes_of,
    count_guess_misses,
    count_rows,
    make_note,
    make_trackable,
    make_user,
)

BERLIN = {"latitude": 52.52, "longitude": 13.405}
READ_SHAPE = {
    "journeyStopId",
    "trackableId",
    "coordinateId",
    "latitude",
    "longitude",
    "precision",
    "associatedUtc",
    "observedUtc",
    "isLocationOnly",
    "isAnonymous",
    "canDelete",
    "canConvertToNote",
    "locationLabel",
    "creatorDisplayText",
    "creatorProfileUserName",
    "currentNotesAtCoordinate",
}


def journey_url(trackable) -> str:
    return f"/api/trackables/{trackable.id}/journey"


def stops_url(trackable) -> str:
    return f"/api/trackables/{trackable.id}/journey-stops"


def post_stop(api, trackable, user=None, **body):
    for key, value in BERLIN.items():
        body.setdefault(key, value)
    return api.as_user(user).post(stops_url(trackable), json=body)


def stop_by(api, cast, who: str, **body) -> dict:
    response = post_stop(api, cast.trackable, getattr(cast, who), **body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def journey(api, trackable, user=None) -> list[dict]:
    response = api.as_user(user).get(journey_url(trackable))
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def stop_at_note(trackable, note, user) -> JourneyStop:
    """A stop recorded at a note, as attaching records it."""
    stop = record_stop(
        trackable,
        latitude=note.latitude,
        longitude=note.longitude,
        created_by=user,
        display_name=user.display_text,
        is_anonymous=False,
        note_id=note.id,
    )
    db.session.commit()
    return stop


# --- the read shape ----------------------------------------------------------------------


def test_a_stop_has_every_field_of_the_read_shape(api, cast):
    stop_by(api, cast, "author")
    (stop,) = journey(api, cast.trackable)
    assert set(stop) == READ_SHAPE
    assert stop["trackableId"] == str(cast.trackable.id)
    assert stop["isLocationOnly"] is True
    assert stop["isAnonymous"] is False
    assert stop["creatorDisplayText"] == "Ann A."
    assert stop["creatorProfileUserName"] == "ann"
    assert stop["associatedUtc"].endswith("Z")
    assert stop["observedUtc"] is None


def test_the_coordinate_is_snapped_to_the_grid_and_shares_its_id(api, cast):
    first = stop_by(api, cast, "author", latitude=52.520049, longitude=13.404951)
    second = stop_by(api, cast, "owner", latitude=52.519951, longitude=13.405049)
    assert (first["latitude"], first["longitude"]) == (52.52, 13.405)
    assert (second["latitude"], second["longitude"]) == (52.52, 13.405)
    assert first["coordinateId"] == second["coordinateId"]
    elsewhere = stop_by(api, cast, "author", latitude=52.5202, longitude=13.405)
    assert elsewhere["coordinateId"] != first["coordinateId"]


def test_the_location_label_names_the_place_at_save_time(api, cast):
    label = stop_by(api, cast, "author")["locationLabel"]
    assert label.startswith("Berlin")
    assert label.endswith("Germany")


def test_a_stop_far_from_any_town_has_an_empty_label(api, cast):
    assert stop_by(api, cast, "author", latitude=30.0, longitude=-40.0)["locationLabel"] == ""


def test_the_journey_is_listed_oldest_stop_first(api, cast):
    ids = [stop_by(api, cast, "author", latitude=10.0 + n)["journeyStopId"] for n in range(3)]
    assert [stop["journeyStopId"] for stop in journey(api, cast.trackable)] == ids


def test_an_anonymous_stop_shows_the_chosen_name_and_no_profile(api, cast):
    response = post_stop(api, cast.trackable, accessCode=cast.secret, displayName="Kim")
    assert response.status_code == 201
    (stop,) = journey(api, cast.trackable)
    assert stop["isAnonymous"] is True
    assert stop["creatorDisplayText"] == "Kim"
    assert stop["creatorProfileUserName"] is None
    assert db.session.scalars(select(JourneyStop)).one().created_by_user_id is None


@pytest.mark.parametrize(
    ("who", "can_delete", "can_convert"),
    [
        ("author", True, True),
        ("owner", True, False),
        ("team_admin", True, False),
        ("former_admin", False, False),
        ("stranger", False, False),
        ("anonymous", False, False),
    ],
)
def test_the_callers_rights_on_each_stop(api, cast, who, can_delete, can_convert):
    stop_by(api, cast, "author")
    viewer = None if who == "anonymous" else getattr(cast, who)
    (stop,) = journey(api, cast.trackable, viewer)
    assert (stop["canDelete"], stop["canConvertToNote"]) == (can_delete, can_convert)


def test_a_stop_recorded_at_a_note_cannot_be_converted(api, cast):
    note = make_note(cast.author, visibility=NoteVisibility.PUBLIC, **BERLIN)
    stop_at_note(cast.trackable, note, cast.author)
    (stop,) = journey(api, cast.trackable, cast.author)
    assert stop["isLocationOnly"] is False
    assert stop["canConvertToNote"] is False


def test_the_journey_of_a_hidden_trackable_is_404(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert_problem(api.get(journey_url(hidden)), 404, code="trackable_not_found")


def test_an_unlocked_viewer_reads_a_hidden_trackables_journey(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    open_session(api, codes_of(hidden)[0])
    assert api.get(journey_url(hidden)).status_code == 200


# --- notes now at the point --------------------------------------------------------------


def test_a_public_note_at_the_point_is_listed(api, cast):
    note = make_note(make_user(), title="Bridge", visibility=NoteVisibility.PUBLIC, **BERLIN)
    stop_by(api, cast, "author", latitude=52.52003, longitude=13.40502)  # same grid point
    (stop,) = journey(api, cast.trackable)
    assert stop["currentNotesAtCoordinate"] == [
        {
            "noteId": str(note.id),
            "title": "Bridge",
            "contentLanguage": "en",
            "thumbnailUrl": None,
            "isContentOmitted": False,
        }
    ]


def test_a_note_at_another_point_is_not_listed(api, cast):
    make_note(make_user(), visibility=NoteVisibility.PUBLIC, latitude=52.5202, longitude=13.405)
    stop_by(api, cast, "author")
    assert journey(api, cast.trackable)[0]["currentNotesAtCoordinate"] == []


def test_a_private_note_shows_only_to_who_may_open_it(api, cast):
    owner = make_user()
    note = make_note(owner, title="Secret spot", **BERLIN)
    stop_by(api, cast, "author")
    assert journey(api, cast.trackable, cast.stranger)[0]["currentNotesAtCoordinate"] == []
    listed = journey(api, cast.trackable, owner)[0]["currentNotesAtCoordinate"]
    assert [entry["noteId"] for entry in listed] == [str(note.id)]


def test_the_stops_own_private_note_is_listed_with_its_content_omitted(api, cast):
    note = make_note(cast.owner, title="Secret spot", **BERLIN)
    stop_at_note(cast.trackable, note, cast.owner)
    (stop,) = journey(api, cast.trackable, cast.stranger)
    assert (stop["latitude"], stop["longitude"]) == (52.52, 13.405)
    assert stop["currentNotesAtCoordinate"] == [
        {
            "noteId": None,
            "title": None,
            "contentLanguage": None,
            "thumbnailUrl": None,
            "isContentOmitted": True,
        }
    ]
    assert "Secret spot" not in api.get(journey_url(cast.trackable)).get_data(as_text=True)
    (as_owner,) = journey(api, cast.trackable, cast.owner)
    assert as_owner["currentNotesAtCoordinate"][0]["title"] == "Secret spot"


def test_moving_a_note_later_changes_no_stop(api, cast):
    note = make_note(cast.owner, visibility=NoteVisibility.PUBLIC, **BERLIN)
    stop_at_note(cast.trackable, note, cast.owner)
    moved = api.as_user(cast.owner).post(
        f"/api/notes/mine/{note.id}/move", json={"latitude": 48.0, "longitude": 11.0}
    )
    assert moved.status_code in (200, 204), moved.get_data(as_text=True)
    (stop,) = journey(api, cast.trackable)
    assert (stop["latitude"], stop["longitude"]) == (52.52, 13.405)
    assert stop["currentNotesAtCoordinate"] == []


def test_a_deleted_note_is_not_listed(api, cast):
    note = make_note(cast.owner, visibility=NoteVisibility.PUBLIC, is_deleted=True, **BERLIN)
    stop_at_note(cast.trackable, note, cast.owner)
    assert journey(api, cast.trackable, cast.owner)[0]["currentNotesAtCoordinate"] == []


# --- adding stops (rule 1) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "status", "code"),
    [
        ("anonymous with a session", 201, None),
        ("anonymous with the secret code", 201, None),
        ("anonymous with the QR token", 201, None),
        ("anonymous without a code", 403, "trackable_access_code_required"),
        ("anonymous with a wrong code", 403, "trackable_access_code_invalid"),
        ("anonymous with the public code", 403, "trackable_access_code_invalid"),
        ("signed-in stranger", 201, None),
    ],
)
def test_who_may_add_a_stop(api, cast, caller, status, code):
    body: dict = {}
    user = None
    if caller == "anonymous with a session":
        open_session(api, cast.secret)
    elif caller == "anonymous with the secret code":
        body["accessCode"] = cast.secret
    elif caller == "anonymous with the QR token":
        body["accessCode"] = cast.qr_token
    elif caller == "anonymous with a wrong code":
        body["accessCode"] = "LNZZZZZZZZ"
    elif caller == "anonymous with the public code":
        body["accessCode"] = cast.trackable.public_code
    elif caller == "signed-in stranger":
        user = cast.stranger
    response = post_stop(api, cast.trackable, user, **body)
    if code is None:
        assert response.status_code == status, response.get_data(as_text=True)
        assert count_rows(JourneyStop) == 1
    else:
        assert_problem(response, status, code=code)
        assert count_rows(JourneyStop) == 0


def test_an_unactivated_trackable_takes_no_stop(api):
    unactivated = make_trackable(None, created_by_user_id=make_user().id)
    response = post_stop(api, unactivated, accessCode=codes_of(unactivated)[0])
    assert_problem(response, 400, code="trackable_activation_required")
    assert count_rows(JourneyStop) == 0


def test_a_wrong_code_for_a_stop_counts_against_the_guess_budget(api, cast):
    post_stop(api, cast.trackable, accessCode="LNZZZZZZZZ")
    assert count_guess_misses() == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"latitude": 91},
        {"longitude": -180.5},
        {"latitude": None},
        {"latitude": "north"},
    ],
)
def test_a_coordinate_out_of_range_is_rejected(api, cast, bad):
    response = post_stop(api, cast.trackable, cast.author, **bad)
    assert set(assert_problem(response, 400)["errors"]) <= {"latitude", "longitude"}
    assert count_rows(JourneyStop) == 0


def test_a_missing_coordinate_is_rejected(api, cast):
    response = api.as_user(cast.author).post(stops_url(cast.trackable), json={"latitude": 1})
    assert "longitude" in assert_problem(response, 400)["errors"]


# --- deleting stops (rule 3) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("author", 204),
        ("owner", 204),
        ("team_admin", 204),
        ("former_admin", 403),
        ("stranger", 403),
    ],
)
def test_who_may_delete_a_stop(api, cast, who, status):
    stop = stop_by(api, cast, "author")
    response = api.as_user(getattr(cast, who)).delete(
        f"{stops_url(cast.trackable)}/{stop['journeyStopId']}"
    )
    if status == 204:
        assert response.status_code == 204
        assert count_rows(JourneyStop) == 0
    else:
        assert_problem(response, 403, code="trackable_journey_stop_delete_forbidden")
        assert count_rows(JourneyStop) == 1


def test_an_anonymous_stop_is_deleted_by_the_owner_side_only(api, cast):
    stop = post_stop(api, cast.trackable, accessCode=cast.secret).get_json()
    url = f"{stops_url(cast.trackable)}/{stop['journeyStopId']}"
    assert_problem(
        api.as_user(cast.stranger).delete(url), 403, code="trackable_journey_stop_delete_forbidden"
    )
    assert api.as_user(cast.owner).delete(url).status_code == 204


def test_an_owner_who_left_the_team_no_longer_deletes_stops(api, cast):
    stop = stop_by(api, cast, "author")
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == cast.owner.id))
    db.session.commit()
    response = api.as_user(cast.owner).delete(
        f"{stops_url(cast.trackable)}/{stop['journeyStopId']}"
    )
    assert_problem(response, 403, code="trackable_journey_stop_delete_forbidden")


def test_deleting_a_stop_needs_a_sign_in(api, cast):
    stop = stop_by(api, cast, "author")
    assert_problem(api.delete(f"{stops_url(cast.trackable)}/{stop['journeyStopId']}"), 401)


def test_a_stop_of_another_trackable_is_not_found(api, cast):
    stop = stop_by(api, cast, "author")
    other = make_trackable(cast.author)
    response = api.as_user(cast.author).delete(f"{stops_url(other)}/{stop['journeyStopId']}")
    assert_problem(response, 404, code="trackable_journey_stop_not_found")
    assert count_rows(JourneyStop) == 1


def test_an_unknown_stop_is_not_found(api, cast):
    response = api.as_user(cast.author).delete(f"{stops_url(cast.trackable)}/{uuid.uuid4()}")
    assert_problem(response, 404, code="trackable_journey_stop_not_found")
