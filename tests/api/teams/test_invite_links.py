"""Team invite links: list, create, delete, join (contract: Team invite link, Teams;
decisions: Teams), single use under concurrent joins included."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import func, select

from app.auth import issue_access_token
from app.extensions import db
from app.models.team import (
    INVITE_CODE_ALPHABET,
    INVITE_CODE_LENGTH,
    JoinPolicy,
    MembershipStatus,
    PageVisibility,
    TeamInviteLink,
    TeamMembership,
)
from app.services.teams import invite_links
from tests.conftest import assert_problem
from tests.factories import make_invite_link, make_membership, make_team, make_user

TEAMS = "/api/teams"


@pytest.fixture
def team(admin, member):
    return make_team(admin, name="Night Hikers", members=(member,))


def links_url(team, link=None):
    base = f"{TEAMS}/{team.id}/invite-links"
    return base if link is None else f"{base}/{link.id}"


def join_url(slug, code):
    return f"{TEAMS}/invite-links/{slug}/{code}/join"


def join(api, user, link, slug="night-hikers"):
    return api.as_user(user).post(join_url(slug, link.code))


def status_of(team, user):
    db.session.expire_all()
    return db.session.scalar(
        select(TeamMembership.status).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == user.id
        )
    )


# --- create, list, delete ----------------------------------------------------------------


def test_create_is_201_with_every_field_of_the_record(api, admin, team):
    response = api.as_user(admin).post(links_url(team), json={"isSingleUse": True})
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {
        "inviteLinkId",
        "teamId",
        "teamName",
        "teamSlug",
        "code",
        "createdByDisplayName",
        "createdByCurrentUser",
        "inviterIsCurrentlyAdmin",
        "isSingleUse",
        "createdUtc",
    }
    assert (body["teamId"], body["teamName"], body["teamSlug"]) == (
        str(team.id),
        "Night Hikers",
        "night-hikers",
    )
    assert body["createdByDisplayName"] == "Ada L."
    assert body["createdByCurrentUser"] is True
    assert body["inviterIsCurrentlyAdmin"] is True
    assert body["isSingleUse"] is True
    assert body["createdUtc"].endswith("Z")


def test_codes_are_long_random_and_from_the_alphabet(api, admin, team):
    codes = {api.as_user(admin).post(links_url(team), json={}).get_json()["code"] for _ in range(5)}
    assert len(codes) == 5
    for code in codes:
        assert len(code) == INVITE_CODE_LENGTH
        assert set(code) <= set(INVITE_CODE_ALPHABET)


def test_create_defaults_to_a_multi_use_link(api, admin, team):
    body = api.as_user(admin).post(links_url(team), json={}).get_json()
    assert body["isSingleUse"] is False


def test_create_by_a_member_or_a_stranger_is_403_and_404_if_the_team_is_hidden(
    api, admin, team, member
):
    assert_problem(api.as_user(member).post(links_url(team), json={}), 403)
    assert_problem(api.as_user(make_user()).post(links_url(team), json={}), 403)
    hidden = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(api.as_user(make_user()).post(links_url(hidden), json={}), 404)


def test_list_shows_the_teams_links_newest_first(api, admin, team):
    other_admin = make_user(display_name="Other")
    make_membership(team, other_admin, is_admin=True)
    older = make_invite_link(team, other_admin)
    newer = api.as_user(admin).post(links_url(team), json={}).get_json()
    make_invite_link(make_team(admin), admin)  # another team's link
    body = api.as_user(admin).get(links_url(team)).get_json()
    assert [row["inviteLinkId"] for row in body] == [newer["inviteLinkId"], str(older.id)]
    assert [row["createdByCurrentUser"] for row in body] == [True, False]
    assert body[1]["createdByDisplayName"] == "Other"


def test_list_marks_a_link_whose_creator_is_no_longer_admin(api, admin, team, member):
    former = make_user()
    record = make_membership(team, former, is_admin=True)
    make_invite_link(team, former)
    db.session.delete(record)
    db.session.commit()
    body = api.as_user(admin).get(links_url(team)).get_json()
    assert body[0]["inviterIsCurrentlyAdmin"] is False


def test_list_by_a_member_or_a_stranger_is_403_and_404_if_the_team_is_hidden(
    api, admin, team, member
):
    assert_problem(api.as_user(member).get(links_url(team)), 403)
    assert_problem(api.as_user(make_user()).get(links_url(team)), 403)
    hidden = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    assert_problem(api.as_user(make_user()).get(links_url(hidden)), 404)


def test_delete_is_204_and_the_link_stops_working(api, admin, team):
    link = make_invite_link(team, admin)
    assert api.as_user(admin).delete(links_url(team, link)).status_code == 204
    assert_problem(join(api, make_user(), link), 404)


def test_delete_by_a_member_or_a_stranger_is_403_and_404_if_the_team_is_hidden(
    api, admin, team, member
):
    link = make_invite_link(team, admin)
    assert_problem(api.as_user(member).delete(links_url(team, link)), 403)
    assert_problem(api.as_user(make_user()).delete(links_url(team, link)), 403)
    hidden = make_team(admin, page_visibility=PageVisibility.MEMBERS_ONLY)
    hidden_link = make_invite_link(hidden, admin)
    assert_problem(api.as_user(make_user()).delete(links_url(hidden, hidden_link)), 404)


def test_delete_of_another_teams_link_is_404(api, admin, team):
    other = make_team(admin)
    link = make_invite_link(other, admin)
    assert_problem(api.as_user(admin).delete(links_url(team, link)), 404)
    assert_problem(api.as_user(admin).delete(f"{links_url(team)}/{uuid.uuid4()}"), 404)


# --- join --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "status"),
    [
        (JoinPolicy.OPEN, "Member"),
        (JoinPolicy.REQUESTS_ALLOWED, "RequestingMembership"),
        (JoinPolicy.INVITE_ONLY, "Member"),
    ],
)
def test_join_follows_the_join_policy(api, admin, policy, status):
    team = make_team(admin, name="Night Hikers", join_policy=policy)
    link = make_invite_link(team, admin)
    carol = make_user()
    response = join(api, carol, link)
    assert response.status_code == 200
    assert response.get_json() == {"teamSlug": "night-hikers", "membershipStatus": status}
    assert status_of(team, carol) == MembershipStatus(status)


def test_join_by_an_invited_user_makes_a_member(api, admin, team):
    carol = make_user()
    make_membership(team, carol, status=MembershipStatus.INVITED)
    link = make_invite_link(team, admin)
    assert join(api, carol, link).get_json()["membershipStatus"] == "Member"


def test_join_with_the_wrong_team_slug_is_404(api, admin, team):
    link = make_invite_link(team, admin)
    make_team(admin, name="Other Team")
    assert_problem(join(api, make_user(), link, slug="other-team"), 404)


def test_join_with_an_unknown_code_is_404(api, admin, team):
    assert_problem(api.as_user(make_user()).post(join_url("night-hikers", "a" * 26)), 404)


def test_a_used_single_use_link_answers_404(api, admin, team):
    link = make_invite_link(team, admin, is_single_use=True)
    carol, dave = make_user(), make_user()
    assert join(api, carol, link).status_code == 200
    assert_problem(join(api, dave, link), 404)
    assert status_of(team, dave) is None
    assert api.as_user(admin).get(links_url(team)).get_json() == []


def test_a_multi_use_link_lets_several_users_join(api, admin):
    team = make_team(admin, name="Night Hikers", join_policy=JoinPolicy.OPEN)
    link = make_invite_link(team, admin)
    for user in (make_user(), make_user()):
        assert join(api, user, link).get_json()["membershipStatus"] == "Member"


def test_a_join_by_a_member_changes_nothing_and_keeps_a_single_use_link(api, admin, team, member):
    link = make_invite_link(team, admin, is_single_use=True)
    before = db.session.scalar(select(TeamMembership).where(TeamMembership.user_id == member.id))
    snapshot = (before.id, before.status, before.is_admin, before.updated_utc)
    response = join(api, member, link)
    assert response.get_json() == {"teamSlug": "night-hikers", "membershipStatus": "Member"}
    db.session.expire_all()
    after = db.session.get(TeamMembership, snapshot[0])
    assert (after.id, after.status, after.is_admin, after.updated_utc) == snapshot
    assert db.session.get(TeamInviteLink, link.id).used_utc is None
    assert join(api, make_user(), link).status_code == 200  # still usable once


def test_a_join_by_a_requester_changes_nothing(api, admin, team):
    carol = make_user()
    make_membership(team, carol, status=MembershipStatus.REQUESTING)
    link = make_invite_link(team, admin, is_single_use=True)
    body = join(api, carol, link).get_json()
    assert body["membershipStatus"] == "RequestingMembership"
    db.session.expire_all()
    assert db.session.get(TeamInviteLink, link.id).used_utc is None


def test_a_link_stops_working_when_its_creator_is_no_longer_admin(api, admin, team):
    former = make_user()
    record = make_membership(team, former, is_admin=True)
    link = make_invite_link(team, former)
    db.session.delete(record)
    db.session.commit()
    assert_problem(join(api, make_user(), link), 404)


def test_concurrent_joins_of_a_single_use_link_let_exactly_one_in(app, monkeypatch, admin):
    """Two joins run at once, each on its own thread, app context and database connection.
    Both find the link unused before either claims it (the barrier), so only the claim
    itself (a conditional UPDATE) can keep the second one out."""
    team = make_team(admin, name="Night Hikers", join_policy=JoinPolicy.OPEN)
    link = make_invite_link(team, admin, is_single_use=True)
    users = [make_user(), make_user()]
    tokens = [issue_access_token(user) for user in users]
    path = join_url("night-hikers", link.code)
    db.session.commit()
    barrier = threading.Barrier(2, timeout=20)
    claim = invite_links.claim_single_use

    def claim_once_both_have_looked(link, user_id):
        barrier.wait()
        return claim(link, user_id)

    monkeypatch.setattr(invite_links, "claim_single_use", claim_once_both_have_looked)
    statuses: dict[int, int] = {}

    def run(index: int) -> None:
        client = app.test_client()  # a new thread: its own app context and session
        response = client.post(path, headers={"Authorization": f"Bearer {tokens[index]}"})
        statuses[index] = response.status_code

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses.values()) == [200, 404]
    db.session.expire_all()
    joined = db.session.scalar(
        select(func.count())
        .select_from(TeamMembership)
        .where(TeamMembership.team_id == team.id, TeamMembership.user_id.in_([u.id for u in users]))
    )
    assert joined == 1
    winner = users[0] if statuses[0] == 200 else users[1]
    assert db.session.get(TeamInviteLink, link.id).used_by_user_id == winner.id
