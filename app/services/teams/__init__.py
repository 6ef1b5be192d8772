"""Teams (contract: Team; Teams; decisions: Teams): teams, memberships, invite links, and
the team's notes and categories on top of the notes and categories areas."""

from app.services.teams.invite_links import create_link, delete_link, join, list_links
from app.services.teams.memberships import (
    answer,
    end_account_memberships,
    invite,
    list_memberships,
    remove,
    request_membership,
)
from app.services.teams.teams import (
    create_team,
    delete_team,
    delete_team_note,
    list_my_teams,
    public_team_notes,
    remove_note_from_team,
    update_settings,
)

__all__ = [
    "answer",
    "create_link",
    "create_team",
    "delete_link",
    "delete_team",
    "delete_team_note",
    "end_account_memberships",
    "invite",
    "join",
    "list_links",
    "list_memberships",
    "list_my_teams",
    "public_team_notes",
    "remove",
    "remove_note_from_team",
    "request_membership",
    "update_settings",
]
