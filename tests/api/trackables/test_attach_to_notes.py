"""Attaching trackables to a note (contract: Public note pages; Note attachment and
visibility; decisions: "Attaching by a code..."): who may attach with which credential,
the stop at the note's point, and the gating of a `VisibleOnceAssociatedTrackableAccessed`
note from its first trackable on, for each kind of viewer."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.trackable import JourneyStop, TrackableVisibility, note_trackables
from tests.api.trackables.conftest import open_session
from tests.conftest import ApiClient, assert_problem
from tests.factories import (
    codes_of,
    count_guess_misses,
    count_rows,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)

POINT = {"latitude": 52.520049, "longitude": 13.405049}
BOUNDS = {"minLatitude": 52, "minLongitude": 13, "maxLatitude": 53, "maxLongitude": 14}


def attach_url(note) -> str:
    return f"/api/public/notes/{note.id}/trackables"


def attach(api, note, user, **body):
    return api.as_user(user).post(attach_url(note), json=body)


@pytest.fixture
def olga(app):
    return make_user("olga")


@pytest.fixture
def note(olga):
    return make_note(olga, title="Bridge", visibility=NoteVisibility.PUBLIC, **POINT)


@pytest.fixture
def bug(app):
    return make_trackable(make_user("finn"), name="Bug")


def attached(note) -> list:
    return list(
        db.session.scalars(
            select(note_trackables.c.trackable_id).where(note_trackables.c.note_id == note.id)
        )
    )


# --- credentials -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["secret", "secret typed in lower case", "QR token"])
def test_the_notes_owner_attaches_by_a_secret_credential(api, olga, note, bug, kind):
    secret, token = codes_of(bug)
    code = {"secret": secret, "secret typed in lower case": secret.lower(), "QR token": token}
    response = attach(api, note, olga, trackableSecretCodes=code[kind])
    assert response.status_code == 204, response.get_data(as_text=True)
    assert attached(note) == [bug.id]


def test_attaching_records_a_stop_at_the_notes_snapped_point(api, olga, note, bug):
    attach(api, note, olga, trackableSecretCodes=codes_of(bug)[0])
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude) == (52.52, 13.405)
    assert (stop.note_id, stop.created_by_user_id) == (note.id, olga.id)
    assert stop.is_location_only is False
    (read,) = api.get(f"/api/trackables/{bug.id}/journey").get_json()
    assert read["currentNotesAtCoordinate"][0]["noteId"] == str(note.id)
    assert read["isLocationOnly"] is False


@pytest.mark.parametrize("code", ["public", "nothing"])
def test_a_public_code_or_a_code_matching_nothing_is_invalid(api, olga, note, bug, code):
    sent = bug.public_code if code == "public" else "LNZZZZZZZZ"
    response = attach(api, note, olga, trackableSecretCodes=sent)
    assert_problem(response, 403, code="trackable_access_code_invalid")
    assert attached(note) == []
    assert count_guess_misses() == 1


def test_an_unactivated_trackable_is_not_attached(api, olga, note):
    unactivated = make_trackable(None, created_by_user_id=olga.id)
    response = attach(api, note, olga, trackableSecretCodes=codes_of(unactivated)[0])
    assert_problem(response, 400, code="trackable_activation_required")
    assert attached(note) == []
    assert count_rows(JourneyStop) == 0


def test_a_trackable_with_an_active_session_is_attached_by_its_id(api, olga, note, bug):
    open_session(api, codes_of(bug)[1])
    response = attach(api, note, olga, selectedActiveTrackableIds=[str(bug.id)])
    assert response.status_code == 204, response.get_data(as_text=True)
    assert attached(note) == [bug.id]


def test_the_trackables_own_manager_attaches_it_by_id(api, olga, note):
    mine = make_trackable(olga)
    assert attach(api, note, olga, selectedActiveTrackableIds=[str(mine.id)]).status_code == 204


def test_a_visible_trackable_without_a_session_needs_its_code(api, olga, note, bug):
    response = attach(api, note, olga, selectedActiveTrackableIds=[str(bug.id)])
    assert_problem(response, 403, code="trackable_access_code_required")
    assert attached(note) == []


def test_a_hidden_trackable_selected_by_id_is_not_found(api, olga, note):
    hidden = make_trackable(make_user(), visibility=TrackableVisibility.ONCE_ACCESSED)
    response = attach(api, note, olga, selectedActiveTrackableIds=[str(hidden.id)])
    assert_problem(response, 404, code="trackable_not_found")


def test_nothing_is_attached_when_one_of_several_fails(api, olga, note, bug):
    open_session(api, codes_of(bug)[0])
    other = make_trackable(make_user())
    response = attach(api, note, olga, selectedActiveTrackableIds=[str(bug.id), str(other.id)])
    assert_problem(response, 403, code="trackable_access_code_required")
    assert attached(note) == []
    assert count_rows(JourneyStop) == 0


@pytest.mark.parametrize(
    "body",
    [{}, {"trackableSecretCodes": "  "}, {"selectedActiveTrackableIds": []}],
)
def test_a_request_naming_no_trackable_is_rejected(api, olga, note, body):
    assert "trackableSecretCodes" in assert_problem(attach(api, note, olga, **body), 400)["errors"]


def test_an_unknown_attach_mode_is_rejected(api, olga, note, bug):
    response = attach(
        api, note, olga, trackableSecretCodes=codes_of(bug)[0], activeTrackableAttachMode="Team"
    )
    assert "activeTrackableAttachMode" in assert_problem(response, 400)["errors"]


def test_attaching_twice_records_one_stop(api, olga, note, bug):
    for _ in range(2):
        assert attach(api, note, olga, trackableSecretCodes=codes_of(bug)[0]).status_code == 204
    assert attached(note) == [bug.id]
    assert count_rows(JourneyStop) == 1


def test_a_note_without_coordinates_gets_the_trackable_and_no_stop(api, olga, bug):
    unmapped = make_note(olga, visibility=NoteVisibility.PUBLIC)
    assert attach(api, unmapped, olga, trackableSecretCodes=codes_of(bug)[0]).status_code == 204
    assert attached(unmapped) == [bug.id]
    assert count_rows(JourneyStop) == 0


# --- who may attach ----------------------------------------------------------------------


def test_attaching_needs_a_sign_in(api, note, bug):
    assert_problem(attach(api, note, None, trackableSecretCodes=codes_of(bug)[0]), 401)


def test_someone_who_sees_the_note_but_does_not_manage_it_is_forbidden(api, note, bug):
    response = attach(api, note, make_user(), trackableSecretCodes=codes_of(bug)[0])
    assert_problem(response, 403)
    assert attached(note) == []


def test_a_note_the_caller_may_not_see_is_404(api, olga, bug):
    private = make_note(olga)
    response = attach(api, private, make_user(), trackableSecretCodes=codes_of(bug)[0])
    assert_problem(response, 404)


@pytest.mark.parametrize(("role", "status"), [("admin", 204), ("member", 403)])
def test_on_a_team_note_a_team_admin_attaches(api, bug, role, status):
    admin, writer, member = make_user(), make_user(), make_user()
    team = make_team(admin, members=(writer, member))
    team_note = make_note(writer, team_id=team.id, visibility=NoteVisibility.PUBLIC, **POINT)
    caller = admin if role == "admin" else member
    response = attach(api, team_note, caller, trackableSecretCodes=codes_of(bug)[0])
    assert response.status_code == status, response.get_data(as_text=True)


# --- gating ------------------------------------------------------------------------------


@pytest.fixture
def gated(olga):
    return make_note(
        olga, title="Hidden cache", visibility=NoteVisibility.ONCE_TRACKABLE_ACCESSED, **POINT
    )


def in_discovery(api, note) -> bool:
    found = api.as_user(None).get("/api/notes/public/bounds", query_string=BOUNDS).get_json()
    return str(note.id) in [item["noteId"] for item in found]


def test_a_gated_note_is_public_like_before_its_first_trackable(api, gated):
    assert api.as_user(None).get(f"/api/public/notes/{gated.id}").status_code == 200
    assert api.as_user(make_user()).get(f"/api/public/notes/{gated.id}").status_code == 200
    assert in_discovery(api, gated)


def test_the_first_attach_takes_a_gated_note_out_of_anonymous_discovery(api, olga, gated, bug):
    assert attach(api, gated, olga, trackableSecretCodes=codes_of(bug)[0]).status_code == 204
    assert not in_discovery(api, gated)


@pytest.mark.parametrize(
    ("viewer", "status"),
    [
        ("anonymous", 404),
        ("signed-in stranger", 404),
        ("owner", 200),
        ("anonymous with a session for its trackable", 200),
        ("account that unlocked its trackable", 200),
        ("anonymous with a session for another trackable", 404),
    ],
)
def test_after_the_first_attach_only_unlockers_and_the_workspace_open_it(
    app, api, olga, gated, bug, viewer, status
):
    assert attach(api, gated, olga, trackableSecretCodes=codes_of(bug)[0]).status_code == 204
    client = ApiClient(app.test_client())  # another browser, without the owner's cookies
    user = None
    if viewer == "signed-in stranger":
        user = make_user()
    elif viewer == "owner":
        user = olga
    elif viewer == "anonymous with a session for its trackable":
        open_session(client, codes_of(bug)[1])
    elif viewer == "account that unlocked its trackable":
        user = make_user()
        unlock_trackable(user, bug)
    elif viewer == "anonymous with a session for another trackable":
        open_session(client, codes_of(make_trackable(make_user()))[0])
    response = client.as_user(user).get(f"/api/public/notes/{gated.id}")
    assert response.status_code == status, response.get_data(as_text=True)
    comments = client.as_user(user).get(f"/api/public/notes/{gated.id}/comments")
    assert comments.status_code == status


def test_a_public_note_stays_public_after_an_attach(api, olga, note, bug):
    attach(api, note, olga, trackableSecretCodes=codes_of(bug)[0])
    assert api.as_user(None).get(f"/api/public/notes/{note.id}").status_code == 200
    assert in_discovery(api, note)
