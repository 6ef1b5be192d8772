"""`viewers_among` (who may hear of a trackable's event, for thousands at once) agrees with
`can_view` by each account alone, for every kind of grant and every trackable state."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.note import NoteVisibility
from app.models.team import MembershipStatus
from app.models.trackable import TrackableVisibility
from app.models.user import User
from app.policies import trackables as policy
from tests.factories import (
    attach_trackable,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)


@pytest.fixture
def cast(app):
    people = {
        name: make_user(name)
        for name in (
            "activator",
            "admin",
            "member",
            "requester",
            "unlocker",
            "note_owner",
            "note_team_member",
            "stranger",
            "creator",
        )
    }
    team = make_team(people["admin"], members=(people["activator"], people["member"]))
    make_membership(team, people["requester"], status=MembershipStatus.REQUESTING)
    note_team = make_team(make_user("note_admin"), members=(people["note_team_member"],))
    return people, team, note_team


def states(people, team, note_team):
    """Trackables in each state that decides who sees them."""
    creator, activator = people["creator"], people["activator"]
    yield "unactivated", make_trackable(None, created_by_user_id=creator.id)
    yield "public", make_trackable(activator)
    hidden = make_trackable(activator, visibility=TrackableVisibility.ONCE_ACCESSED)
    yield "hidden personal", hidden
    team_item = make_trackable(
        activator, team_id=team.id, visibility=TrackableVisibility.ONCE_ACCESSED
    )
    yield "hidden team", team_item
    attached = make_trackable(activator, visibility=TrackableVisibility.ONCE_ACCESSED)
    attach_trackable(make_note(people["note_owner"], visibility=NoteVisibility.PRIVATE), attached)
    team_note = make_note(people["note_owner"], team_id=note_team.id)
    attach_trackable(team_note, attached)
    yield "hidden, on notes", attached
    deleted_note = make_trackable(activator, visibility=TrackableVisibility.ONCE_ACCESSED)
    gone = make_note(make_user("gone"), visibility=NoteVisibility.PRIVATE)
    attach_trackable(gone, deleted_note)
    gone.is_deleted = True
    db.session.commit()
    yield "hidden, on a deleted note", deleted_note


def test_viewers_among_is_can_view_by_each_account(cast):
    people, team, note_team = cast
    for name, trackable in states(people, team, note_team):
        unlock_trackable(people["unlocker"], trackable)
        everyone = {user.id: user for user in db.session.scalars(db.select(User))}
        expected = {
            user_id
            for user_id, user in everyone.items()
            if policy.can_view(policy.account_viewer(user), trackable)
        }
        assert policy.viewers_among(trackable, set(everyone)) == expected, name
        assert policy.viewers_among(trackable, {people["stranger"].id}) <= expected, name


def test_the_grants_are_the_ones_expected(cast):
    people, team, note_team = cast
    found = dict(states(people, team, note_team))
    ids = {name: user.id for name, user in people.items()}
    everyone = set(ids.values())
    assert policy.viewers_among(found["unactivated"], everyone) == {ids["creator"]}
    assert policy.viewers_among(found["public"], everyone) == everyone
    assert policy.viewers_among(found["hidden team"], everyone) == {ids["admin"], ids["activator"]}
    assert policy.viewers_among(found["hidden, on notes"], everyone) == {
        ids["activator"],
        ids["note_owner"],
        ids["note_team_member"],
    }
    assert policy.viewers_among(found["hidden, on a deleted note"], everyone) == {ids["activator"]}
