"""DELETE /api/account and teams (contract: Identity and account): memberships end; a team
whose only admin leaves passes to another member or, with none, is deleted as an admin
would delete it; the user's notes in remaining teams stay with the team."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.models.team import MembershipStatus, Team, TeamInviteLink, TeamMembership
from tests.factories import count_rows as count
from tests.factories import (
    make_category,
    make_invite_link,
    make_membership,
    make_note,
    make_team,
    make_user,
)


def delete_account(api, user):
    response = api.as_user(user).delete("/api/account")
    assert response.status_code == 200, response.get_data(as_text=True)
    db.session.expire_all()
    return response.get_json()


def membership(team, user):
    return db.session.scalar(
        select(TeamMembership).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == user.id
        )
    )


def test_every_membership_record_of_the_user_ends(api):
    user, owner = make_user(), make_user()
    member_of = make_team(owner, members=(user,))
    invited_to = make_team(owner)
    make_membership(invited_to, user, status=MembershipStatus.INVITED)
    requested = make_team(owner)
    make_membership(requested, user, status=MembershipStatus.REQUESTING)
    delete_account(api, user)
    assert count(TeamMembership, TeamMembership.user_id == user.id) == 0
    assert count(Team) == 3
    assert [
        row["userName"]
        for row in api.as_user(owner).get(f"/api/teams/{member_of.id}/memberships").get_json()
    ] == [owner.user_name]


def test_a_sole_admins_team_passes_to_the_longest_standing_member(api):
    user, first, second = make_user(), make_user(), make_user()
    team = make_team(user, members=(first,))
    make_membership(team, second)
    make_membership(team, make_user(), status=MembershipStatus.INVITED)
    delete_account(api, user)
    assert membership(team, first).is_admin
    assert not membership(team, second).is_admin


def test_no_one_is_promoted_when_another_admin_stays(api):
    user, other_admin, member = make_user(), make_user(), make_user()
    team = make_team(user, members=(member,))
    make_membership(team, other_admin, is_admin=True)
    delete_account(api, user)
    assert not membership(team, member).is_admin
    assert membership(team, other_admin).is_admin


def test_a_team_with_no_other_member_is_deleted_and_its_notes_go_home(api):
    user, former = make_user(), make_user()
    team = make_team(user)
    make_membership(team, make_user(), status=MembershipStatus.REQUESTING)  # not a member
    folder = make_category(team_id=team.id)
    theirs = make_note(former, team_id=team.id, category=folder, visibility=NoteVisibility.PUBLIC)
    make_note(user, team_id=team.id, category=folder)
    body = delete_account(api, user)
    assert count(Team) == 0
    assert count(Category, Category.team_id == team.id) == 0
    kept = db.session.get(Note, theirs.id)
    assert (kept.owner_user_id, kept.team_id, kept.visibility) == (
        former.id,
        None,
        NoteVisibility.PRIVATE,
    )
    assert body["notesDeleted"] == 1  # the user's own note, returned to them, then deleted


def test_the_users_notes_in_a_remaining_team_are_handed_to_an_admin(api):
    user, admin = make_user(), make_user()
    team = make_team(admin, members=(user,))
    folder = make_category(team_id=team.id)
    note = make_note(user, team_id=team.id, category=folder)
    body = delete_account(api, user)
    kept = db.session.get(Note, note.id)
    assert (kept.owner_user_id, kept.team_id) == (admin.id, team.id)
    assert body["notesDeleted"] == 0
    listed = api.as_user(admin).get(f"/api/teams/{team.id}/notes").get_json()
    assert [row["noteId"] for row in listed] == [str(note.id)]


def test_the_users_invite_links_go_with_the_account(api):
    user, admin = make_user(), make_user()
    team = make_team(admin)
    make_membership(team, user, is_admin=True)
    make_invite_link(team, user)
    kept = make_invite_link(team, admin, is_single_use=True)
    used = make_invite_link(team, admin, is_single_use=True)
    used.used_by_user_id = user.id
    db.session.commit()
    delete_account(api, user)
    assert set(db.session.scalars(select(TeamInviteLink.id))) == {kept.id, used.id}
    assert db.session.get(TeamInviteLink, used.id).used_by_user_id is None
