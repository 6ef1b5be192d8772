"""Team memberships: request, invite, accept, refuse, approve, deny, promote-admin, delete
and the list (contract: Teams, Team membership; decisions: Teams). Every transition of the
state machine (services.memberships) and every refusal, through HTTP."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from app.extensions import db
from app.models.team import JoinPolicy, MembershipStatus, PageVisibility, TeamMembership
from tests.conftest import assert_problem
from tests.factories import make_membership, make_team, make_user

TEAMS = "/api/teams"
REQUESTING = MembershipStatus.REQUESTING
INVITED = MembershipStatus.INVITED


def url(team, membership=None, action=""):
    base = f"{TEAMS}/{team.id}/memberships"
    if membership is None:
        return f"{base}/{action}" if action else base
    return f"{base}/{membership.id}" + (f"/{action}" if action else "")


def record_of(team, user):
    db.session.expire_all()
    return db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == user.id
        )
    )


def can_read_team_notes(api, user, team):
    return api.as_user(user).get(f"{TEAMS}/{team.id}/notes").status_code == 200


# --- request -----------------------------------------------------------------------------


def test_request_to_an_open_team_makes_a_member_at_once(api, admin):
    team = make_team(admin, join_policy=JoinPolicy.OPEN)
    carol = make_user("carol")
    response = api.as_user(carol).post(url(team, action="request"))
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {
        "membershipId",
        "teamId",
        "userName",
        "status",
        "isAdmin",
        "createdUtc",
        "updatedUtc",
    }
    assert (body["teamId"], body["userName"], body["status"], body["isAdmin"]) == (
        str(team.id),
        "carol",
        "Member",
        False,
    )
    assert can_read_team_notes(api, carol, team)


def test_request_to_a_requests_allowed_team_waits_for_an_admin(api, team):
    carol = make_user()
    body = api.as_user(carol).post(url(team, action="request")).get_json()
    assert body["status"] == "RequestingMembership"
    assert not can_read_team_notes(api, carol, team)


def test_request_to_an_invite_only_team_is_403(api, admin):
    team = make_team(admin, join_policy=JoinPolicy.INVITE_ONLY)
    carol = make_user()
    assert_problem(api.as_user(carol).post(url(team, action="request")), 403)
    assert record_of(team, carol) is None


def test_request_to_a_members_only_team_by_a_stranger_is_404(api, admin):
    team = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(api.as_user(make_user()).post(url(team, action="request")), 404)


def test_request_to_an_unknown_team_is_404(api, admin):
    assert_problem(api.as_user(admin).post(f"{TEAMS}/{uuid.uuid4()}/memberships/request"), 404)


def test_request_again_while_requesting_is_409(api, team):
    carol = make_user()
    make_membership(team, carol, status=REQUESTING)
    assert_problem(api.as_user(carol).post(url(team, action="request")), 409)


def test_request_by_a_member_is_409(api, team, member):
    assert_problem(api.as_user(member).post(url(team, action="request")), 409)


def test_request_by_an_invited_user_makes_a_member(api, admin):
    team = make_team(admin, join_policy=JoinPolicy.INVITE_ONLY)
    carol = make_user()
    make_membership(team, carol, status=INVITED)
    body = api.as_user(carol).post(url(team, action="request")).get_json()
    assert body["status"] == "Member"


def test_an_invited_user_sees_a_members_only_team_to_request(api, admin):
    team = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    carol = make_user()
    make_membership(team, carol, status=INVITED)
    assert api.as_user(carol).post(url(team, action="request")).status_code == 200


# --- invite ------------------------------------------------------------------------------


def invite(api, by, team, user_name):
    return api.as_user(by).post(url(team, action="invite"), json={"userName": user_name})


def test_invite_by_an_admin_records_an_invitation(api, admin, team):
    carol = make_user("carol")
    response = invite(api, admin, team, "Carol")
    assert response.status_code == 200
    body = response.get_json()
    assert (body["userName"], body["status"], body["isAdmin"]) == ("carol", "Invited", False)
    assert record_of(team, carol).status == INVITED
    assert not can_read_team_notes(api, carol, team)


def test_invite_of_a_requesting_user_makes_a_member(api, admin, team):
    carol = make_user("carol")
    make_membership(team, carol, status=REQUESTING)
    assert invite(api, admin, team, "carol").get_json()["status"] == "Member"


def test_invite_of_an_unknown_user_name_is_400(api, admin, team):
    body = assert_problem(invite(api, admin, team, "nobody_here"), 400)
    assert "userName" in body["errors"]


def test_invite_without_a_user_name_is_400(api, admin, team):
    body = assert_problem(api.as_user(admin).post(url(team, action="invite"), json={}), 400)
    assert "userName" in body["errors"]


def test_invite_of_a_member_is_409(api, admin, team):
    assert_problem(invite(api, admin, team, "bob"), 409)


def test_invite_of_an_invited_user_is_409(api, admin, team):
    make_membership(team, make_user("carol"), status=INVITED)
    assert_problem(invite(api, admin, team, "carol"), 409)


def test_invite_by_a_member_is_403(api, team, member):
    make_user("carol")
    assert_problem(invite(api, member, team, "carol"), 403)


def test_invite_by_a_stranger_is_403_and_404_if_the_team_is_hidden(api, admin, team):
    make_user("carol")
    assert_problem(invite(api, make_user(), team, "carol"), 403)
    hidden = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(invite(api, make_user(), hidden, "carol"), 404)


# --- accept / refuse ---------------------------------------------------------------------


def test_accept_by_the_invited_user_makes_a_member(api, team):
    carol = make_user()
    invitation = make_membership(team, carol, status=INVITED)
    response = api.as_user(carol).post(url(team, invitation, "accept"))
    assert response.status_code == 200
    assert response.get_json()["status"] == "Member"
    assert can_read_team_notes(api, carol, team)


def test_accept_of_someone_elses_invitation_by_an_admin_is_403(api, admin, team):
    invitation = make_membership(team, make_user(), status=INVITED)
    assert_problem(api.as_user(admin).post(url(team, invitation, "accept")), 403)


def test_accept_of_someone_elses_invitation_by_a_member_is_404(api, team, member):
    invitation = make_membership(team, make_user(), status=INVITED)
    assert_problem(api.as_user(member).post(url(team, invitation, "accept")), 404)


def test_accept_of_a_request_is_409(api, team):
    carol = make_user()
    request = make_membership(team, carol, status=REQUESTING)
    assert_problem(api.as_user(carol).post(url(team, request, "accept")), 409)


def test_accept_of_an_active_membership_is_409(api, team, member):
    own = record_of(team, member)
    assert_problem(api.as_user(member).post(url(team, own, "accept")), 409)


def test_accept_under_another_teams_path_is_404(api, admin, team):
    carol = make_user()
    other = make_team(admin)
    invitation = make_membership(team, carol, status=INVITED)
    response = api.as_user(carol).post(f"{TEAMS}/{other.id}/memberships/{invitation.id}/accept")
    assert_problem(response, 404)


def test_refuse_by_the_invited_user_ends_the_invitation(api, admin, team):
    carol = make_user("carol")
    invitation = make_membership(team, carol, status=INVITED)
    response = api.as_user(carol).post(url(team, invitation, "refuse"))
    assert response.status_code == 200
    body = response.get_json()
    assert (body["membershipId"], body["status"]) == (str(invitation.id), "Refused")
    assert record_of(team, carol) is None
    assert invite(api, admin, team, "carol").status_code == 200  # may be invited again


def test_refuse_by_an_admin_is_403(api, admin, team):
    invitation = make_membership(team, make_user(), status=INVITED)
    assert_problem(api.as_user(admin).post(url(team, invitation, "refuse")), 403)


def test_refuse_of_an_active_membership_is_409(api, team, member):
    own = record_of(team, member)
    assert_problem(api.as_user(member).post(url(team, own, "refuse")), 409)


# --- approve / deny ----------------------------------------------------------------------


def test_approve_by_an_admin_makes_a_member(api, admin, team):
    carol = make_user()
    request = make_membership(team, carol, status=REQUESTING)
    response = api.as_user(admin).post(url(team, request, "approve"))
    assert response.status_code == 200
    assert response.get_json()["status"] == "Member"
    assert can_read_team_notes(api, carol, team)


def test_approve_by_the_requester_is_403(api, team):
    carol = make_user()
    request = make_membership(team, carol, status=REQUESTING)
    assert_problem(api.as_user(carol).post(url(team, request, "approve")), 403)


def test_approve_by_a_member_is_404_as_requests_are_hidden_from_members(api, team, member):
    request = make_membership(team, make_user(), status=REQUESTING)
    assert_problem(api.as_user(member).post(url(team, request, "approve")), 404)


def test_approve_by_a_stranger_is_404(api, team):
    request = make_membership(team, make_user(), status=REQUESTING)
    assert_problem(api.as_user(make_user()).post(url(team, request, "approve")), 404)


def test_approve_of_an_invitation_is_409(api, admin, team):
    invitation = make_membership(team, make_user(), status=INVITED)
    assert_problem(api.as_user(admin).post(url(team, invitation, "approve")), 409)


def test_deny_by_an_admin_ends_the_request_and_allows_a_new_one(api, admin, team):
    carol = make_user()
    request = make_membership(team, carol, status=REQUESTING)
    response = api.as_user(admin).post(url(team, request, "deny"))
    assert response.status_code == 200
    assert response.get_json()["status"] == "Denied"
    assert record_of(team, carol) is None
    assert api.as_user(carol).post(url(team, action="request")).status_code == 200


def test_deny_by_a_member_is_404(api, team, member):
    request = make_membership(team, make_user(), status=REQUESTING)
    assert_problem(api.as_user(member).post(url(team, request, "deny")), 404)


def test_deny_of_an_active_membership_is_409(api, admin, team, member):
    assert_problem(api.as_user(admin).post(url(team, record_of(team, member), "deny")), 409)


# --- promote-admin -----------------------------------------------------------------------


def test_promote_by_an_admin_returns_the_membership_with_is_admin(api, admin, team, member):
    membership = record_of(team, member)
    response = api.as_user(admin).post(url(team, membership, "promote-admin"))
    assert response.status_code == 200
    body = response.get_json()
    assert (body["membershipId"], body["status"], body["isAdmin"]) == (
        str(membership.id),
        "Member",
        True,
    )
    make_user("carol")
    assert invite(api, member, team, "carol").status_code == 200  # now an admin


def test_promote_of_an_admin_is_409(api, admin, team):
    assert_problem(api.as_user(admin).post(url(team, record_of(team, admin), "promote-admin")), 409)


def test_promote_of_an_invitation_is_409(api, admin, team):
    invitation = make_membership(team, make_user(), status=INVITED)
    assert_problem(api.as_user(admin).post(url(team, invitation, "promote-admin")), 409)


def test_promote_by_a_member_is_403(api, team, member):
    other = make_membership(team, make_user())
    assert_problem(api.as_user(member).post(url(team, other, "promote-admin")), 403)


def test_promote_by_a_stranger_is_404(api, team, member):
    response = api.as_user(make_user()).post(url(team, record_of(team, member), "promote-admin"))
    assert_problem(response, 404)


# --- delete: leave, remove, withdraw -----------------------------------------------------


def test_a_member_leaves_and_loses_access(api, team, member):
    assert can_read_team_notes(api, member, team)
    response = api.as_user(member).delete(url(team, record_of(team, member)))
    assert response.status_code == 204
    assert record_of(team, member) is None
    assert not can_read_team_notes(api, member, team)


def test_a_removed_member_loses_access_at_the_next_request(api, admin, team, member):
    client = api.as_user(member)  # one token, before and after
    assert client.get(f"{TEAMS}/{team.id}/notes").status_code == 200
    assert api.as_user(admin).delete(url(team, record_of(team, member))).status_code == 204
    assert_problem(client.get(f"{TEAMS}/{team.id}/notes"), 403)  # a public team: 403
    assert_problem(client.get(url(team)), 403)


def test_a_member_cannot_remove_another_member(api, team, member):
    other = make_membership(team, make_user())
    assert_problem(api.as_user(member).delete(url(team, other)), 403)


def test_a_stranger_cannot_remove_a_member(api, team, member):
    assert_problem(api.as_user(make_user()).delete(url(team, record_of(team, member))), 404)


def test_the_last_admin_cannot_leave(api, admin, team):
    response = api.as_user(admin).delete(url(team, record_of(team, admin)))
    assert_problem(response, 409)
    assert record_of(team, admin) is not None


def test_an_admin_may_leave_while_another_admin_stays(api, admin, team, member):
    make_membership(team, make_user(), is_admin=True)
    assert api.as_user(admin).delete(url(team, record_of(team, admin))).status_code == 204


def test_an_admin_may_remove_another_admin_but_the_team_keeps_one(api, admin, team):
    other = make_user()
    make_membership(team, other, is_admin=True)
    assert api.as_user(admin).delete(url(team, record_of(team, other))).status_code == 204
    count = db.session.scalar(
        select(func.count())
        .select_from(TeamMembership)
        .where(TeamMembership.team_id == team.id, TeamMembership.is_admin.is_(True))
    )
    assert count == 1


def test_an_admin_withdraws_an_invitation(api, admin, team):
    carol = make_user()
    invitation = make_membership(team, carol, status=INVITED)
    assert api.as_user(admin).delete(url(team, invitation)).status_code == 204
    assert record_of(team, carol) is None


def test_a_requester_withdraws_their_request(api, team):
    carol = make_user()
    request = make_membership(team, carol, status=REQUESTING)
    assert api.as_user(carol).delete(url(team, request)).status_code == 204
    assert record_of(team, carol) is None


def test_an_invited_user_may_delete_their_invitation(api, team):
    carol = make_user()
    invitation = make_membership(team, carol, status=INVITED)
    assert api.as_user(carol).delete(url(team, invitation)).status_code == 204


def test_deleting_an_unknown_membership_is_404(api, admin, team):
    assert_problem(api.as_user(admin).delete(f"{url(team)}/{uuid.uuid4()}"), 404)


# --- list --------------------------------------------------------------------------------


def test_admins_list_members_invitations_and_requests(api, admin, team):
    make_membership(team, make_user("carol"), status=INVITED)
    make_membership(team, make_user("dave"), status=REQUESTING)
    body = api.as_user(admin).get(url(team)).get_json()
    assert [(row["userName"], row["status"], row["isAdmin"]) for row in body] == [
        ("ada", "Member", True),
        ("bob", "Member", False),
        ("carol", "Invited", False),
        ("dave", "RequestingMembership", False),
    ]
    assert all(row["teamId"] == str(team.id) for row in body)


def test_members_list_only_the_active_members(api, team, member):
    make_membership(team, make_user("carol"), status=INVITED)
    make_membership(team, make_user("dave"), status=REQUESTING)
    body = api.as_user(member).get(url(team)).get_json()
    assert [row["userName"] for row in body] == ["ada", "bob"]


def test_the_list_is_for_members_only_403_or_404_by_the_teams_page(api, admin, team):
    carol = make_user()
    make_membership(team, carol, status=INVITED)
    assert_problem(api.as_user(make_user()).get(url(team)), 403)
    assert_problem(api.as_user(carol).get(url(team)), 403)
    hidden = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    make_membership(hidden, carol, status=INVITED)
    assert_problem(api.as_user(make_user()).get(url(hidden)), 404)
    assert_problem(api.as_user(carol).get(url(hidden)), 404)  # page visibility decides
