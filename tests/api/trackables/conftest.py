"""The cast of the trackable activity tests (comments, journeys): a team-owned trackable
activated by `owner` (a member), with the team's admin, a former admin, a signed-in
stranger and a signed-in author, and helpers that act as each kind of caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import delete

from app.extensions import db
from app.models.team import TeamMembership
from app.models.trackable import Trackable
from app.models.user import User
from tests.factories import codes_of, make_membership, make_team, make_trackable, make_user


@dataclass
class Cast:
    trackable: Trackable
    owner: User
    team_admin: User
    former_admin: User
    stranger: User
    author: User

    @property
    def secret(self) -> str:
        return codes_of(self.trackable)[0]

    @property
    def qr_token(self) -> str:
        return codes_of(self.trackable)[1]


@pytest.fixture
def cast(app) -> Cast:
    owner, team_admin, former_admin = make_user("olga"), make_user("tara"), make_user("fred")
    team = make_team(team_admin, members=(owner,))
    make_membership(team, former_admin, is_admin=True)
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == former_admin.id))
    db.session.commit()
    trackable = make_trackable(owner, team_id=team.id, name="Blue bug")
    return Cast(
        trackable=trackable,
        owner=owner,
        team_admin=team_admin,
        former_admin=former_admin,
        stranger=make_user("sam"),
        author=make_user("ann", display_name="Ann A."),
    )


def open_session(api: Any, code: str) -> None:
    """Open an access session on this client, as a finder's lookup does (cookie kept)."""
    response = api.post("/api/trackables/lookup", json={"code": code})
    assert response.get_json()["usesSecretAccess"] is True
