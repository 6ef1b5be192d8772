"""Note visibility rule 4 (contract: Note, visibility rule 4; docs/contract/trackables.md,
Trackable activity): attaching a trackable to a note grants the trackable the note's
owner scope. A hidden (`VisibleOnceAccessed`) trackable attached to a note becomes
visible to that note's owner and, on a team note, to the team's active members, while
the note stands; note content access stays the note's own rules."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, update

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.team import TeamMembership
from app.models.trackable import TrackableVisibility
from tests.conftest import assert_problem
from tests.factories import (
    attach_trackable,
    codes_of,
    make_note,
    make_team,
    make_trackable,
    make_user,
)

POINT = {"latitude": 52.520049, "longitude": 13.405049}


@pytest.fixture
def cast(app):
    finn, tara, mia, sam = (make_user(name) for name in ("finn", "tara", "mia", "sam"))
    team = make_team(tara, members=(mia,))
    hidden = make_trackable(finn, name="Hidden bug", visibility=TrackableVisibility.ONCE_ACCESSED)
    note = make_note(
        tara, title="Team bridge", visibility=NoteVisibility.PRIVATE, team_id=team.id, **POINT
    )
    return {
        "finn": finn,
        "tara": tara,
        "mia": mia,
        "sam": sam,
        "team": team,
        "bug": hidden,
        "note": note,
    }


def reads(api, user, trackable) -> list[int]:
    client = api.as_user(user)
    return [
        client.get(f"/api/trackables/{trackable.id}").status_code,
        client.get(f"/api/trackables/{trackable.id}/journey").status_code,
        client.get(f"/api/trackables/{trackable.id}/comments").status_code,
        client.get(f"/en/trackables/{trackable.public_code}").status_code,
    ]


def test_before_the_attachment_the_team_does_not_see_the_hidden_trackable(api, cast):
    for user in ("tara", "mia", "sam"):
        assert reads(api, cast[user], cast["bug"]) == [404] * 4


def test_after_the_attachment_the_notes_owner_scope_sees_it_and_no_one_else(api, cast):
    attach_trackable(cast["note"], cast["bug"])
    assert reads(api, cast["tara"], cast["bug"]) == [200] * 4
    assert reads(api, cast["mia"], cast["bug"]) == [200] * 4  # a member, never held it
    assert reads(api, cast["sam"], cast["bug"]) == [404] * 4
    assert reads(api, None, cast["bug"]) == [404] * 4


def test_the_grant_adds_nothing_to_the_members_own_or_the_public_list(api, cast):
    attach_trackable(cast["note"], cast["bug"])
    mine = api.as_user(cast["mia"]).get("/api/trackables/mine").get_json()
    assert str(cast["bug"].id) not in {item["trackableId"] for item in mine}  # not hers: only seen
    public = api.as_user(cast["mia"]).get("/api/trackables/public").get_json()
    assert str(cast["bug"].id) not in {item["trackableId"] for item in public}


def test_a_member_who_may_see_it_may_comment_as_a_signed_in_caller(api, cast):
    attach_trackable(cast["note"], cast["bug"])
    response = api.as_user(cast["mia"]).post(
        f"/api/trackables/{cast['bug'].id}/comments", json={"body": "Seen it on our bridge"}
    )
    assert response.status_code == 201


def test_the_grant_ends_with_the_team_membership_and_with_the_note(api, cast):
    attach_trackable(cast["note"], cast["bug"])
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == cast["mia"].id))
    db.session.commit()
    assert reads(api, cast["mia"], cast["bug"]) == [404] * 4
    db.session.execute(update(Note).where(Note.id == cast["note"].id).values(is_deleted=True))
    db.session.commit()
    assert reads(api, cast["tara"], cast["bug"]) == [404] * 4


def test_a_personal_notes_owner_sees_the_attached_trackable(api, cast):
    note = make_note(cast["sam"], visibility=NoteVisibility.PUBLIC, **POINT)
    attach_trackable(note, cast["bug"])
    assert reads(api, cast["sam"], cast["bug"]) == [200] * 4
    assert reads(api, cast["mia"], cast["bug"]) == [404] * 4  # a public note grants no one


def test_note_content_still_follows_the_notes_own_rules(api, cast):
    """The trackable's holders gain nothing on a private note: its point shows on the
    journey, its content does not."""
    response = api.as_user(cast["tara"]).post(
        f"/api/public/notes/{cast['note'].id}/trackables",
        json={"trackableSecretCodes": codes_of(cast["bug"])[0]},
    )
    assert response.status_code == 204
    finn = api.as_user(cast["finn"])  # the trackable's owner, outside the team
    assert_problem(finn.get(f"/api/public/notes/{cast['note'].id}"), 404)
    stops = finn.get(f"/api/trackables/{cast['bug'].id}/journey").get_json()
    assert stops[-1]["currentNotesAtCoordinate"] == [
        {
            "noteId": None,
            "title": None,
            "contentLanguage": None,
            "thumbnailUrl": None,
            "isContentOmitted": True,
        }
    ]
