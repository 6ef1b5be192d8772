"""Who may print a trackable's labels (policies.trackables.label_refusal): its
managers; whoever sees it but does not manage it is refused (403), whoever does not see
it is told it is not found (404), for each state of the trackable."""

from __future__ import annotations

import pytest

from app.models.team import MembershipStatus
from app.models.trackable import TrackableVisibility
from app.policies import trackables as policy
from tests.factories import make_membership, make_team, make_trackable, make_user, unlock_trackable

NOT_FOUND, REJECTED = "trackable_not_found", "trackable_request_rejected"
CALLERS = ("creator", "activator", "admin", "member", "requester", "unlocker", "stranger")

# state -> the refusal of each caller, in CALLERS' order (None: may print).
TABLE = {
    "unactivated": (None, NOT_FOUND, NOT_FOUND, NOT_FOUND, NOT_FOUND, REJECTED, NOT_FOUND),
    "public personal": (REJECTED, None, REJECTED, REJECTED, REJECTED, REJECTED, REJECTED),
    "hidden personal": (NOT_FOUND, None, NOT_FOUND, NOT_FOUND, NOT_FOUND, REJECTED, NOT_FOUND),
    "hidden team": (NOT_FOUND, None, None, NOT_FOUND, NOT_FOUND, REJECTED, NOT_FOUND),
    "public team": (REJECTED, None, None, REJECTED, REJECTED, REJECTED, REJECTED),
}


@pytest.fixture
def people(app):
    found = {name: make_user(name) for name in CALLERS}
    team = make_team(found["admin"], members=(found["activator"], found["member"]))
    make_membership(team, found["requester"], status=MembershipStatus.REQUESTING)
    found["team"] = team
    return found


def made(state, people):
    activator, team = people["activator"], people["team"]
    hidden = TrackableVisibility.ONCE_ACCESSED
    return {
        "unactivated": lambda: make_trackable(None, created_by_user_id=people["creator"].id),
        "public personal": lambda: make_trackable(activator),
        "hidden personal": lambda: make_trackable(activator, visibility=hidden),
        "hidden team": lambda: make_trackable(activator, team_id=team.id, visibility=hidden),
        "public team": lambda: make_trackable(activator, team_id=team.id),
    }[state]()


@pytest.mark.parametrize("state", list(TABLE))
def test_only_managers_print_labels(people, state):
    trackable = made(state, people)
    unlock_trackable(people["unlocker"], trackable)
    answers = tuple(
        policy.label_refusal(policy.account_viewer(people[caller]), trackable) for caller in CALLERS
    )
    assert dict(zip(CALLERS, answers, strict=True)) == dict(zip(CALLERS, TABLE[state], strict=True))


def test_a_missing_trackable_is_not_found(people):
    assert policy.label_refusal(policy.account_viewer(people["stranger"]), None) == NOT_FOUND
