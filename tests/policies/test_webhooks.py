"""The webhook rules of policies.webhooks as tables: a personal subscription is its owner's
alone, a team's the business of the team's current admins (404 `webhook_not_found` for
anyone else); only admins subscribe for a team; a delivery rests on the owner's rights
at the time (a team subscription's setter must still be an admin of the event's team)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.auth import build_viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.event import Event
from app.models.team import PageVisibility
from app.models.webhook import WebhookSubscription
from app.policies import webhooks as webhook_policy
from tests.factories import make_team, make_user

ROLES = ("owner", "team_admin", "team_member", "former_admin", "stranger", "superadmin")
ROLES += ("anonymous",)
Y, N = True, False

# subscription -> who manages it, in ROLES order
MANAGE_TABLE = {
    "personal": (Y, N, N, N, N, N, N),  # the owner's own
    "team": (N, Y, N, N, N, N, N),  # set up by the current admin
    "team_by_former_admin": (N, Y, N, N, N, N, N),  # its setter is a plain member now
}


def subscription(owner, team=None):
    found = WebhookSubscription(
        owner_user_id=owner.id,
        team_id=team.id if team else None,
        url="https://hooks.example.com/in",
        secret_encrypted="sealed",
    )
    db.session.add(found)
    db.session.commit()
    return found


@pytest.fixture
def world(app):
    owner, admin, member, former, stranger = (make_user() for _ in range(5))
    superadmin = make_user(is_superadmin=True)
    team = make_team(admin, members=(member, former, owner), page_visibility=PageVisibility.PUBLIC)
    subscriptions = {
        "personal": subscription(owner),
        "team": subscription(admin, team),
        "team_by_former_admin": subscription(former, team),
    }
    users = {
        "owner": owner,
        "team_admin": admin,
        "team_member": member,
        "former_admin": former,
        "stranger": stranger,
        "superadmin": superadmin,
        "anonymous": None,
    }
    return team, subscriptions, users, {role: build_viewer(user) for role, user in users.items()}


@pytest.mark.parametrize("name", list(MANAGE_TABLE))
def test_who_manages_a_subscription(world, name):
    _, subscriptions, _, viewers = world
    found = subscriptions[name]
    allowed = MANAGE_TABLE[name]

    managed = {role: webhook_policy.can_manage(viewer, found) for role, viewer in viewers.items()}
    listed = {
        role: found.id
        in set(
            db.session.scalars(
                select(WebhookSubscription.id).where(webhook_policy.manage_filter(viewer))
            )
        )
        for role, viewer in viewers.items()
    }

    expected = dict(zip(ROLES, allowed, strict=True))
    assert managed == expected
    assert listed == expected
    for role, viewer in viewers.items():
        if expected[role]:
            assert webhook_policy.get_manageable(viewer, found.id) is found
            continue
        with pytest.raises(NotFound) as hidden:
            webhook_policy.get_manageable(viewer, found.id)
        assert hidden.value.code == "webhook_not_found"


@pytest.mark.parametrize(
    ("role", "visibility", "outcome"),
    [
        ("team_admin", PageVisibility.PUBLIC, None),
        ("team_member", PageVisibility.PUBLIC, (403, "team_admin_required")),
        ("stranger", PageVisibility.PUBLIC, (403, "team_membership_required")),
        ("stranger", PageVisibility.MEMBERS_ONLY, (404, "team_not_found")),
        ("superadmin", PageVisibility.MEMBERS_ONLY, (404, "team_not_found")),
    ],
)
def test_only_admins_subscribe_for_a_team(world, role, visibility, outcome):
    team, _, _, viewers = world
    team.page_visibility = visibility
    db.session.commit()
    if outcome is None:
        webhook_policy.require_team_admin(viewers[role], team.id)
        return
    with pytest.raises(Forbidden if outcome[0] == 403 else NotFound) as refused:
        webhook_policy.require_team_admin(viewers[role], team.id)
    assert (refused.value.status, refused.value.code) == outcome


def test_a_delivery_rests_on_the_owners_rights_now(world):
    team, subscriptions, users, _ = world
    other_team = make_team(users["team_admin"])
    of_team = Event(event_type="team.member.joined", team_id=team.id, fields={})
    of_other_team = Event(event_type="team.member.joined", team_id=other_team.id, fields={})

    assert webhook_policy.receiving_owner(subscriptions["personal"], of_team) == users["owner"]
    assert webhook_policy.receiving_owner(subscriptions["team"], of_team) == users["team_admin"]
    # the subscription is the team's: another team's events are not its business
    assert webhook_policy.receiving_owner(subscriptions["team"], of_other_team) is None
    # its setter is no admin any more: it sends nothing
    assert webhook_policy.receiving_owner(subscriptions["team_by_former_admin"], of_team) is None
