"""Team events reach the team's current admins and nobody else: a team note created,
edited (coalesced), deleted or taken out of the team; a join request, a member joining,
leaving or removed, a member made admin. Never the actor, never an admin who lost the
right before delivery; events keep ids and the team's fixed name, never a note's title."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.event import Event
from app.models.team import JoinPolicy, TeamMembership
from app.models.user import User
from tests.factories import make_team, make_user
from tests.inboxes import inbox
from tests.jobs import run_jobs


@dataclass
class Team:
    team: Any
    admin: User
    co_admin: User
    member: User
    stranger: User

    def people(self) -> dict[str, User]:
        return {name: getattr(self, name) for name in ("admin", "co_admin", "member", "stranger")}

    def membership_of(self, user: User) -> TeamMembership:
        return db.session.scalars(
            select(TeamMembership).where(
                TeamMembership.team_id == self.team.id, TeamMembership.user_id == user.id
            )
        ).one()


@pytest.fixture
def crew(app) -> Team:
    admin, co_admin, member = make_user("tara"), make_user("ada"), make_user("mo")
    team = make_team(
        admin,
        name="River crew",
        members=(co_admin, member),
        join_policy=JoinPolicy.REQUESTS_ALLOWED,
    )
    db.session.get(TeamMembership, _membership_id(team.id, co_admin)).is_admin = True
    db.session.commit()
    return Team(team, admin, co_admin, member, make_user("sam"))


def _membership_id(team_id: Any, user: User) -> Any:
    return db.session.scalar(
        select(TeamMembership.id).where(
            TeamMembership.team_id == team_id, TeamMembership.user_id == user.id
        )
    )


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.data
    return response.get_json() if response.data else None


def hearers(app: Any, api: Any, crew: Team, event_type: str) -> set[str]:
    run_jobs(app)
    return {
        name
        for name, user in crew.people().items()
        if any(one["eventType"] == event_type for one in inbox(app, api, user))
    }


def team_note(api: Any, crew: Team, by: User | None = None) -> str:
    body = {"title": "Secret meeting point", "visibility": "Private"}
    url = f"/api/teams/{crew.team.id}/notes"
    return ok(api.as_user(by or crew.member).post(url, json=body), 201)["noteId"]


def edit(api: Any, crew: Team, note_id: str, by: User, title: str = "Moved") -> None:
    url = f"/api/teams/{crew.team.id}/notes/{note_id}/move"
    ok(api.as_user(by).post(url, json={"title": title}))


def create(api: Any, crew: Team) -> None:
    team_note(api, crew)


def edit_note(api: Any, crew: Team) -> None:
    edit(api, crew, team_note(api, crew), by=crew.member)


def delete_note(api: Any, crew: Team) -> None:
    note_id = team_note(api, crew)
    ok(api.as_user(crew.member).delete(f"/api/teams/{crew.team.id}/notes/{note_id}/delete"), 204)


def remove_note(api: Any, crew: Team) -> None:
    note_id = team_note(api, crew)
    ok(api.as_user(crew.member).delete(f"/api/teams/{crew.team.id}/notes/{note_id}"), 204)


def request(api: Any, crew: Team) -> None:
    ok(api.as_user(crew.stranger).post(f"/api/teams/{crew.team.id}/memberships/request"))


def approve(api: Any, crew: Team) -> None:
    request(api, crew)
    membership_id = _membership_id(crew.team.id, crew.stranger)
    url = f"/api/teams/{crew.team.id}/memberships/{membership_id}/approve"
    ok(api.as_user(crew.admin).post(url))


def leave(api: Any, crew: Team) -> None:
    membership_id = _membership_id(crew.team.id, crew.member)
    url = f"/api/teams/{crew.team.id}/memberships/{membership_id}"
    ok(api.as_user(crew.member).delete(url), 204)


def remove_member(api: Any, crew: Team) -> None:
    membership_id = _membership_id(crew.team.id, crew.member)
    url = f"/api/teams/{crew.team.id}/memberships/{membership_id}"
    ok(api.as_user(crew.admin).delete(url), 204)


def promote(api: Any, crew: Team) -> None:
    membership_id = _membership_id(crew.team.id, crew.member)
    url = f"/api/teams/{crew.team.id}/memberships/{membership_id}/promote-admin"
    ok(api.as_user(crew.admin).post(url))


ADMINS = {"admin", "co_admin"}
CASES: list[tuple[str, Callable[[Any, Team], None], set[str]]] = [
    ("team.note.created", create, ADMINS),
    ("team.note.edited", edit_note, ADMINS),
    ("team.note.deleted", delete_note, ADMINS),
    ("team.note.removed", remove_note, ADMINS),
    ("team.membership.requested", request, ADMINS),
    ("team.member.joined", approve, {"co_admin"}),  # the approving admin is the actor
    ("team.member.left", leave, ADMINS),
    ("team.member.removed", remove_member, {"co_admin"}),
    # the new admin hears of it: an admin at delivery, and not the one who promoted
    ("team.member.role_changed", promote, {"co_admin", "member"}),
]


@pytest.mark.parametrize(("event_type", "act", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_team_event_reaches_exactly_the_current_admins(
    app, api, crew, event_type, act, expected
):
    act(api, crew)
    assert hearers(app, api, crew, event_type) == expected


def test_the_admin_who_made_the_change_does_not_hear_of_it(app, api, crew):
    team_note(api, crew, by=crew.admin)
    assert hearers(app, api, crew, "team.note.created") == {"co_admin"}


def test_an_admin_who_lost_the_right_before_delivery_hears_nothing(app, api, crew):
    team_note(api, crew)
    db.session.get(TeamMembership, _membership_id(crew.team.id, crew.co_admin)).is_admin = False
    db.session.commit()
    assert hearers(app, api, crew, "team.note.created") == {"admin"}


def test_edits_of_a_note_by_one_user_are_coalesced(app, api, crew):
    note_id = team_note(api, crew)
    for title in ("One", "Two", "Three"):
        edit(api, crew, note_id, by=crew.member, title=title)
    edit(api, crew, note_id, by=crew.admin)
    kinds = [one["eventType"] for one in inbox(app, api, crew.co_admin)]
    assert kinds.count("team.note.edited") == 2  # the member's three, the admin's one


def test_a_repeated_join_records_nothing(app, api, crew):
    approve(api, crew)
    ok(api.as_user(crew.stranger).post(f"/api/teams/{crew.team.id}/memberships/request"), 409)
    assert len(db.session.scalars(select(Event).where(Event.event_type.like("team.%"))).all()) == 2


def test_team_events_keep_the_team_name_and_ids_not_the_note_title(app, api, crew):
    note_id = team_note(api, crew)
    event = db.session.scalars(select(Event)).one()
    assert event.fields == {"teamName": "River crew"}
    assert str(event.note_id) == note_id
    (mine,) = inbox(app, api, crew.admin)
    assert mine["noteId"] == note_id
    assert mine["teamId"] == str(crew.team.id)
    assert mine["trackableId"] is None
    assert mine["text"] == "A note was added to team River crew."
    assert "Secret" not in str(mine)


def test_a_team_event_is_told_in_the_language_of_the_readers_settings(app, api, crew):
    settings = api.as_user(crew.co_admin).put(
        "/api/notifications/settings", json={"language": "de"}
    )
    assert settings.status_code == 200
    team_note(api, crew)
    (german,) = inbox(app, api, crew.co_admin)
    assert german["text"] == "Dem Team River crew wurde eine Notiz hinzugefügt."
    (english,) = inbox(app, api, crew.admin)
    assert english["text"] == "A note was added to team River crew."


def test_a_membership_event_names_the_membership_not_the_user(app, api, crew):
    request(api, crew)
    event = db.session.scalars(select(Event)).one()
    assert event.fields == {
        "teamName": "River crew",
        "membershipId": str(_membership_id(crew.team.id, crew.stranger)),
    }
    assert crew.stranger.user_name not in str(inbox(app, api, crew.admin))


def test_a_refused_removal_of_the_last_admin_records_nothing(app, api, crew):
    db.session.get(TeamMembership, _membership_id(crew.team.id, crew.co_admin)).is_admin = False
    db.session.commit()
    membership_id = _membership_id(crew.team.id, crew.admin)
    url = f"/api/teams/{crew.team.id}/memberships/{membership_id}"
    assert api.as_user(crew.admin).delete(url).status_code == 409
    assert db.session.scalars(select(Event)).all() == []


def test_an_edit_after_the_coalescing_window_is_heard_again(app, api, crew, monkeypatch):
    from datetime import timedelta

    from app.services.events import recording

    monkeypatch.setattr(recording, "TEAM_NOTE_EDITS_COALESCED", timedelta(0))
    note_id = team_note(api, crew)
    for title in ("One", "Two"):
        edit(api, crew, note_id, by=crew.member, title=title)
    kinds = [one["eventType"] for one in inbox(app, api, crew.admin)]
    assert kinds.count("team.note.edited") == 2
