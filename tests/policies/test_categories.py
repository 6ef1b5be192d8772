"""The owner-scope rule of policies.categories as a table: who may work in a personal tree
and in a team's workspace (public page or members only), with viewers built the way
requests build them; a refusal is 404 or 403 with the documented code."""

from __future__ import annotations

import pytest

from app.auth import build_viewer
from app.errors import Forbidden, NotFound
from app.models.category import OwnerScope
from app.models.team import MembershipStatus, PageVisibility
from app.policies import categories as category_policy
from tests.factories import make_membership, make_team, make_user

ROLES = ("owner", "team_admin", "team_member", "invited", "stranger", "anonymous", "superadmin")
OK = "ok"
HIDDEN_CATEGORY = (404, "category_not_found")
HIDDEN_TEAM = (404, "team_not_found")
OUTSIDE = (403, "team_membership_required")

# scope -> outcome per role (in ROLES order). "owner" owns the personal tree; in a team
# scope the owner is a user without any record with the team.
SCOPE_TABLE = {
    "personal": (OK, *[HIDDEN_CATEGORY] * 6),
    "public_team": (OUTSIDE, OK, OK, OUTSIDE, OUTSIDE, OUTSIDE, OUTSIDE),
    "members_only_team": (HIDDEN_TEAM, OK, OK, HIDDEN_TEAM, HIDDEN_TEAM, HIDDEN_TEAM, HIDDEN_TEAM),
}
CASES = [
    pytest.param(scope, role, outcomes[index], id=f"{scope}-{role}")
    for scope, outcomes in SCOPE_TABLE.items()
    for index, role in enumerate(ROLES)
]


@pytest.fixture
def world(app):
    owner, admin, member, invited, stranger = (make_user() for _ in range(5))
    superadmin = make_user(is_superadmin=True)
    public = make_team(admin, members=(member,), page_visibility=PageVisibility.PUBLIC)
    hidden = make_team(admin, members=(member,), page_visibility=PageVisibility.MEMBERS_ONLY)
    for team in (public, hidden):
        make_membership(team, invited, status=MembershipStatus.INVITED)
    scopes = {
        "personal": OwnerScope.personal(owner.id),
        "public_team": OwnerScope.team(public.id),
        "members_only_team": OwnerScope.team(hidden.id),
    }
    users = {
        "owner": owner,
        "team_admin": admin,
        "team_member": member,
        "invited": invited,
        "stranger": stranger,
        "anonymous": None,
        "superadmin": superadmin,
    }
    return scopes, {role: build_viewer(user) for role, user in users.items()}


@pytest.mark.parametrize(("scope", "role", "outcome"), CASES)
def test_require_scope(world, scope, role, outcome):
    scopes, viewers = world
    if outcome == OK:
        team = category_policy.require_scope(viewers[role], scopes[scope])
        assert (team.id if team else None) == scopes[scope].team_id
        return
    with pytest.raises(Forbidden if outcome[0] == 403 else NotFound) as refused:
        category_policy.require_scope(viewers[role], scopes[scope])
    assert (refused.value.status, refused.value.code) == outcome
